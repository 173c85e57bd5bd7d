import AASACore
import AASAMicroHTTPD
import Foundation

/// The one load path. A start and every reload read the folders the same way (``Server/load(after:scope:at:)``,
/// a ``Server/Load`` value), turn the previous state plus that load into the next one the same way
/// (``Server/Catalog/apply(_:trigger:removalGrace:)``), and build what the listeners serve from it the same way
/// (``Server/routes(for:changed:)``). The start publishes into new listeners, a reload into the running ones.
///
/// A reload reads what changed: the folders the file watcher saw change (``LoadScope``), or every folder (SIGHUP,
/// the end of a removal grace, events the watcher lost), each compared with its stamps and re-parsed only when its
/// bytes differ. Either way only the domains whose served bytes changed get new routes, and only the certificates
/// that changed new SNI entries: the cost of a reload follows the change, not the number of domains.
extension Server {
    /// Which folders a load reads.
    struct LoadScope: Sendable {
        /// The domain folders to read by name; `nil`: every one (and every folder missing is gone).
        var domains: Set<String>?
        /// The certificate folders to read by name; `nil`: every one.
        var certificates: Set<String>?

        /// Every folder: the start, SIGHUP, a removal grace ending, changes the watcher cannot name.
        static let everything = LoadScope(domains: nil, certificates: nil)

        /// What the watcher saw change: the entries of the config folder and of the certificate folder.
        init(_ changes: FolderChanges) {
            if changes.everything {
                self = .everything
            } else {
                self.init(
                    domains: changes.entries(below: .config), certificates: changes.entries(below: .certificates))
            }
        }

        init(domains: Set<String>?, certificates: Set<String>?) {
            self.domains = domains
            self.certificates = certificates
        }
    }

    /// What one load of the config folder and the certificate folder found.
    struct Load: Sendable {
        /// When the load started: the time its versions are stamped with.
        var time: Date
        /// What it read.
        var scope: LoadScope
        /// The domain folders read, loaded and signed; a failure only when the config folder cannot be listed.
        var domains: Result<[LoadedDomain], Diagnostic>
        /// The domains in scope whose folders are gone (a load of every folder finds them by their absence).
        var absent: [String] = []
        /// The certificate folders read into the previous certificates, and their findings; `nil` without an HTTPS
        /// listener.
        var certificates: (Certificates, [Diagnostic])?
    }

    /// What turning a catalog into the next one did.
    struct Transition: Sendable {
        /// Every finding of the load: the domains' (or why the config folder could not be listed), then the
        /// certificate folder's.
        var diagnostics: [Diagnostic]
        /// The domains whose served bytes changed.
        var changed: [String]
        /// The new versions to compare with those they replaced, once published (``ChangeComparer``).
        var compare: [ChangeComparer.Job]
        /// Whether the SNI table is a new one.
        var certificatesChanged: Bool
    }

    /// Reads the folders `scope` names (every folder for ``LoadScope/everything``), each reusing what `previous`
    /// kept of the last load when its files did not change; then the domains that sign their file are signed with
    /// the certificates just read. A full load reads the domains and the certificates side by side
    /// (``concurrently(_:_:)``); a partial one reads the certificates first, because a changed certificate brings
    /// the domains it covers along (to be signed with it, and their status).
    ///
    /// With `watcher` (a start's, made with `entriesWatchedByLoad`), each folder of a full load is watched on the
    /// thread about to read it, just before: the watches are set up beside the reading instead of before it.
    func load(
        after previous: Catalog, scope: LoadScope = .everything, at now: Date, watching watcher: ConfigWatcher? = nil
    )
        -> Load
    {
        let excluded = [configuration.certificateDirectory]
        guard let names = scope.domains else {
            // The certificate half starts at once: it needs the domains' names only for the SNI table at its end,
            // and the config folder is listed meanwhile.
            let listed = Handover<(names: [String], set: Set<String>)>()
            let (certificates, loaded) = concurrently(
                certificateLoader(
                    previous.certificates, domains: { listed.value.names }, only: scope.certificates,
                    isConfigured: { listed.value.set.contains($0) }, at: now, watching: watcher)
            ) { certificatesDone in
                let folders = Result { () throws(Diagnostic) in
                    try DomainFolder.list(configuration.configDirectory, excluding: excluded).filter(owns)
                }
                // The SNI table needs only the domains' names: the folder listing's, or the last load's without one.
                let all = (try? folders.get())?.map(\.domain) ?? previous.loaded.keys
                listed.give((all, Set(all)))
                // Each domain folder has a certificate folder of its name, as a rule.
                watcher?.reserveEntries(all.count, ofRoot: ConfigWatcher.configRoot)
                watcher?.reserveEntries(all.count, ofRoot: ConfigWatcher.certificateRoot)
                // The domains wait with their helpers for the certificates: the certificate half ends with
                // serial work (the SNI table), which then runs beside the domains instead of after them.
                return folders.map {
                    loadDomains($0, reusing: previous.loaded, watching: watcher, helpersAfter: certificatesDone)
                }
            }
            return signed(Load(time: now, scope: scope, domains: loaded, certificates: certificates))
        }
        // The domain folders named, found or gone; then those of the domains a changed certificate covers, which
        // come along: their coverage may have changed, and so may what they sign with.
        var folders: [String: DomainFolder] = [:]
        var absent: Set<String> = []
        func resolve(_ names: some Sequence<String>) throws(Diagnostic) {
            for name in names where owns(name) && folders[name] == nil && !absent.contains(name) {
                if let folder = try DomainFolder.named(name, in: configuration.configDirectory, excluding: excluded) {
                    folders[name] = folder
                } else if previous.loaded[name] != nil || previous.removedSince[name] != nil {
                    absent.insert(name)
                }
            }
        }
        var certificates: (Certificates, [Diagnostic])?
        do {
            try resolve(names)
            let (found, gone) = (Set(folders.keys), absent)
            // Only configured domains get coverage (and, with ACME, a temporary certificate): not a stray file of
            // the config folder, nor a name a certificate lists that no domain folder has.
            let configured: @Sendable (String) -> Bool = { name in
                found.contains(name) || (previous.loaded[name] != nil && !gone.contains(name))
            }
            certificates = certificateLoader(
                previous.certificates, domains: { Array(found) }, only: scope.certificates,
                allDomains: {
                    previous.loaded.keys.filter { !gone.contains($0) } + found.subtracting(previous.loaded.keys)
                },
                isConfigured: configured, at: now)()
            if let changed = scope.certificates, !changed.isEmpty {
                var covered = changed
                for folder in changed { covered.formUnion(previous.certificates.domains(coveredBy: folder)) }
                if let next = certificates?.0 {
                    for folder in changed { covered.formUnion(next.served[folder]?.names ?? []) }
                }
                try resolve(covered.filter(configured).sorted())
            }
        } catch {
            return Load(time: now, scope: scope, domains: .failure(error), certificates: certificates)
        }
        let loaded = loadDomains(folders.values.sorted { $0.domain < $1.domain }, reusing: previous.loaded)
        return signed(
            Load(
                time: now, scope: scope, domains: .success(loaded), absent: absent.sorted(), certificates: certificates)
        )
    }

    /// Whether this process serves `domain` (``ServerConfiguration/shard``).
    private func owns(_ domain: String) -> Bool {
        configuration.shard?.owns(domain) ?? true
    }

    private func owns(_ folder: DomainFolder) -> Bool {
        owns(folder.domain)
    }

    /// `load` with the domains that sign their file signed, with the certificates it read (without HTTPS the signer
    /// reads the folder itself).
    private func signed(_ load: Load) -> Load {
        var load = load
        let served = load.certificates.map {
            SigningCertificates.served($0.0, directory: configuration.certificateDirectory)
        }
        load.domains = load.domains.map { signer.sign($0, now: load.time, certificates: served) }
        return load
    }

    /// Loads `folders` (``DomainFolder/list(_:excluding:)``), as `SiteConfigLoader.loadAll` does, on every processor
    /// at once: with thousands of domains this is most of a start. A domain whose site.json did not change since
    /// `previous` was loaded keeps that result (``SiteConfigLoader/loadDomain(_:reusing:)``). All domains' pages
    /// share one ``PagesBudget``. With `helpersAfter`, only this thread reads until that group is done
    /// (``Swift/Collection/concurrentMap(helpersAfter:_:)``).
    private func loadDomains(
        _ folders: [DomainFolder], reusing previous: PersistentDictionary<String, LoadedDomain>,
        watching watcher: ConfigWatcher? = nil, helpersAfter: DispatchGroup? = nil
    ) -> [LoadedDomain] {
        let loader = {
            var loader = SiteConfigLoader()
            loader.pages.budget = PagesBudget(limit: configuration.pagesMemory)
            return loader
        }()
        let settings = SharedSettings()
        return folders.concurrentMap(helpersAfter: helpersAfter) {
            // The watcher lists the folder it has just watched; the loader reads that listing.
            let listed = watcher?.watchEntry($0.domain, ofRoot: ConfigWatcher.configRoot)
            return loader.loadDomain($0, reusing: previous[$0.domain], listed: listed)
                .keptBetweenLoads(sharing: settings)
        }
    }

    /// The certificate half of a load: `previous` with the certificate folders read into it (`only` those, or
    /// every one), and the findings; `nil` without an HTTPS listener. `domains` gives the domains whose coverage to
    /// work out, asked for once the folders are read; `allDomains` every configured domain, for when all coverage
    /// must be redone; `isConfigured` tells a configured domain from another name a certificate lists.
    ///
    /// Neither half of a full load needs the other (the SNI table needs only the domain names, which the folder
    /// listing gives), and at 10,000 domains each alone keeps both cores busy only part of the time.
    private func certificateLoader(
        _ previous: Certificates, domains: @escaping @Sendable () -> [String], only: Set<String>?,
        allDomains: (@Sendable () -> [String])? = nil,
        isConfigured: @escaping @Sendable (String) -> Bool, at now: Date, watching watcher: ConfigWatcher? = nil
    ) -> @Sendable () -> (Certificates, [Diagnostic])? {
        { [self] in
            guard configuration.httpsPort != nil else { return nil }
            var certificates = previous
            let diagnostics = loadCertificates(
                into: &certificates, domains: domains(), only: only, allDomains: allDomains, isConfigured: isConfigured,
                at: now, watching: watcher)
            return (certificates, diagnostics)
        }
    }

    /// What the listeners serve for `catalog`: one route snapshot for both public listeners (its native responses
    /// built once between them) and the admin routes, whose `/status` and `/match` describe the same catalog.
    /// `changed` are the domains whose routes must be built anew (with the catalog's previous routes); `nil`:
    /// build every domain's.
    func routes(for catalog: Catalog, changed: [String]?) throws -> (
        site: SiteRoutes, snapshot: RouteSnapshot, public: RouteSnapshot, admin: AdminRoutes
    ) {
        let site: SiteRoutes
        if let changed, let previous = catalog.routes {
            site = previous.site.updating(changed.map { ($0, catalog.published[$0]) })
        } else {
            site = SiteRoutes(catalog.published.values, domainIDs: recorder.domainIDs)
        }
        let snapshot = try RouteSnapshot(site, previous: catalog.routes?.snapshot)
        let store = acme?.challenges
        let webroot = configuration.acmeWebroot.map(WebrootChallenges.init(root:))
        // The challenge routes wrap the site's without preparing anything of their own for each domain.
        let served =
            try store == nil && webroot == nil
            ? snapshot
            : RouteSnapshot(ChallengeRoutes(site, store: store, webroot: webroot), previous: snapshot)
        return (site, snapshot, served, adminRoutes(for: catalog))
    }

    /// The admin routes for `catalog`: `/status` and `/match` describe it.
    func adminRoutes(for catalog: Catalog) -> AdminRoutes {
        AdminRoutes(
            published: catalog.published, status: catalog.status, live: live, access: configuration.adminAccess)
    }
}

extension Server.Catalog {
    /// Takes in `load` (see ``apply(_:absent:complete:at:removalGrace:)``): clean domains replace their published
    /// version, broken ones keep theirs, folders gone for `removalGrace` are unpublished, each certificate folder
    /// keeps its last good certificate, and the status describes the load.
    mutating func apply(_ load: Server.Load, trigger: ReloadTrigger, removalGrace: Duration) -> Server.Transition {
        var diagnostics: [Diagnostic] = []
        var changed: [String] = []
        var compare: [ChangeComparer.Job] = []
        var failed = false
        var read: [String]?
        switch load.domains {
        case .success(let loaded):
            diagnostics = loaded.flatMap(\.diagnostics)
            let complete = load.scope.domains == nil
            (changed, compare) = apply(
                loaded, absent: load.absent, complete: complete, at: load.time, removalGrace: removalGrace)
            if !complete { read = loaded.map(\.domain) + load.absent }
        case .failure(let error):
            diagnostics = [error]
            failed = true
            read = []
        }
        let table = certificates.table
        if let (next, certificateDiagnostics) = load.certificates {
            certificates = next
            diagnostics += certificateDiagnostics
        }
        updateStatus(
            domains: read.map { Array(Set($0 + changed)) }, started: status?.started ?? load.time, trigger: trigger,
            at: load.time, diagnostics: diagnostics, failed: failed)
        return Server.Transition(
            diagnostics: diagnostics, changed: changed, compare: compare,
            certificatesChanged: certificates.table !== table
        )
    }
}
