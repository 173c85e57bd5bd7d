import AASACore
import AASAMicroHTTPD
import Foundation

/// The one load path. A start and every reload read the folders the same way (``Server/load(after:at:)``, a
/// ``Server/Load`` value), turn the previous state plus that load into the next one the same way
/// (``Server/Catalog/applying(_:trigger:removalGrace:)``), and build what the listeners serve from it the same way
/// (``Server/routes(for:)``). The start publishes into new listeners, a reload into the running ones.
extension Server {
    /// What one load of the config folder and the certificate folder found.
    struct Load: Sendable {
        /// When the load started: the time its versions are stamped with.
        var time: Date
        /// Every domain folder, loaded and signed; a failure only when the config folder cannot be listed.
        var domains: Result<[LoadedDomain], Diagnostic>
        /// The certificate folder read into the previous certificates (a new SNI table when anything changed),
        /// and its findings; `nil` without an HTTPS listener.
        var certificates: (Certificates, [Diagnostic])?
    }

    /// What turning a catalog into the next one did.
    struct Transition: Sendable {
        /// Every finding of the load: the domains' (or why the config folder could not be listed), then the
        /// certificate folder's.
        var diagnostics: [Diagnostic]
        /// The domains whose served bytes changed.
        var changed: [String]
        /// Whether the SNI table is a new one.
        var certificatesChanged: Bool
    }

    /// Reads the config folder and the certificate folder, as the start and every reload do: the domains and the
    /// certificates side by side (``concurrently(_:_:)``), each reusing what `previous` kept of the last load; then
    /// the domains that sign their file are signed with the certificates just read.
    func load(after previous: Catalog, at now: Date) -> Load {
        let folders = Result { () throws(Diagnostic) in
            try DomainFolder.list(configuration.configDirectory, excluding: [configuration.certificateDirectory])
        }
        // The SNI table needs only the domains' names: the folder listing's, or the last load's without one.
        let names = (try? folders.get())?.map(\.domain) ?? previous.loaded.map(\.domain)
        let (certificates, loaded) = concurrently(certificateLoader(previous.certificates, domains: names, at: now)) {
            folders.map { loadDomains($0, reusing: previous.loaded) }
        }
        // The certificate folder, read once for the SNI table, also gives the domains that sign their file the
        // certificates they sign with (without HTTPS the signer reads the folder itself).
        let served = certificates.map {
            SigningCertificates.served($0.0, directory: configuration.certificateDirectory)
        }
        let domains = loaded.map { signer.sign($0, now: now, certificates: served) }
        return Load(time: now, domains: domains, certificates: certificates)
    }

    /// Loads every domain folder (``DomainFolder/list(_:excluding:)``), as `SiteConfigLoader.loadAll` does, on
    /// every processor at once: with thousands of domains this is most of a start or reload. A domain whose
    /// site.json did not change since `previous` was loaded keeps that result
    /// (``SiteConfigLoader/loadDomain(_:reusing:)``). All domains' pages share one ``PagesBudget``.
    private func loadDomains(_ folders: [DomainFolder], reusing previous: [LoadedDomain]) -> [LoadedDomain] {
        let loader = {
            var loader = SiteConfigLoader()
            loader.pages.budget = PagesBudget(limit: configuration.pagesMemory)
            return loader
        }()
        let known = Dictionary(previous.map { ($0.domain, $0) }, uniquingKeysWith: { first, _ in first })
        return folders.concurrentMap {
            loader.loadDomain($0, reusing: known[$0.domain]).keptBetweenLoads()
        }
    }

    /// The certificate half of a load, to run beside ``loadDomains(_:reusing:)`` (``concurrently(_:_:)``):
    /// `previous` with the certificate folder read into it, and the findings; `nil` without an HTTPS listener.
    ///
    /// Neither half needs the other (the SNI table needs only the domain names, which the folder listing
    /// gives), and at 10,000 domains each alone keeps both cores busy only part of the time.
    private func certificateLoader(_ previous: Certificates, domains: [String], at now: Date)
        -> @Sendable () -> (Certificates, [Diagnostic])?
    {
        { [self] in
            guard configuration.httpsPort != nil else { return nil }
            var certificates = previous
            let diagnostics = loadCertificates(into: &certificates, domains: domains, at: now)
            return (certificates, diagnostics)
        }
    }

    /// What the listeners serve for `catalog`: one route snapshot for both public listeners (its native responses
    /// built once between them) and the admin routes, whose `/status` and `/match` describe the same catalog.
    func routes(for catalog: Catalog) throws -> (public: RouteSnapshot, admin: AdminRoutes) {
        let published = Array(catalog.published.values)
        let site = SiteRoutes(published, domainIDs: recorder.domainIDs)
        let store = acme?.challenges
        let webroot = configuration.acmeWebroot.map(WebrootChallenges.init(root:))
        let snapshot =
            try store == nil && webroot == nil
            ? RouteSnapshot(site) : RouteSnapshot(ChallengeRoutes(site, store: store, webroot: webroot))
        let admin = AdminRoutes(
            published: published, status: catalog.status, live: live, access: configuration.adminAccess)
        return (snapshot, admin)
    }
}

extension Server.Catalog {
    /// The catalog after `load`: clean domains replace their published version, broken ones keep theirs, folders
    /// gone for `removalGrace` are unpublished, each certificate folder keeps its last good certificate, and the
    /// status describes the load. `self` is the previous state (an empty catalog at start).
    func applying(_ load: Server.Load, trigger: ReloadTrigger, removalGrace: Duration) -> (Self, Server.Transition) {
        var next = self
        var diagnostics: [Diagnostic] = []
        var changed: [String] = []
        var failed = false
        switch load.domains {
        case .success(let loaded):
            diagnostics = loaded.flatMap(\.diagnostics)
            changed = next.apply(loaded, at: load.time, removalGrace: removalGrace)
        case .failure(let error):
            diagnostics = [error]
            failed = true
        }
        if let (certificates, certificateDiagnostics) = load.certificates {
            next.certificates = certificates
            diagnostics += certificateDiagnostics
        }
        next.status = next.makeStatus(
            started: status?.started ?? load.time, trigger: trigger, at: load.time, errors: diagnostics.errors,
            warnings: diagnostics.warnings, failed: failed)
        let transition = Server.Transition(
            diagnostics: diagnostics, changed: changed,
            certificatesChanged: next.certificates.table !== certificates.table)
        return (next, transition)
    }
}
