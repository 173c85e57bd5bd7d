import AASACore
import AASAMicroHTTPD
import Foundation
import Logging

/// Reads a load from a ``ConfigSource``: a start and every reload read the same way, each domain and certificate
/// reusing what the previous catalog kept of it when its source did not change.
///
/// A reload reads what changed: the domains and certificates the file watcher saw change (``LoadScope``), or
/// every one (SIGHUP, the end of a removal grace, events the watcher lost), each compared with its stamps and
/// re-parsed only when its bytes differ. The cost of a reload follows the change, not the number of domains.
struct Loader: Sendable {
    /// Where the domains and certificates are read from.
    var source: any ConfigSource
    /// The shard this process serves; `nil`: every domain.
    var shard: Shard?
    /// Whether certificates are read (there is an HTTPS listener).
    var readsCertificates: Bool
    /// The memory all domains' pages may take together (``PagesBudget``).
    var pagesMemory: Int
    /// With ACME, the temporary certificates of the domains no certificate covers yet.
    var temporaryCertificates: TemporaryCertificates?
    let logger: Logger

    /// This loader reading from `source`.
    func reading(from source: any ConfigSource) -> Loader {
        var loader = self
        loader.source = source
        return loader
    }

    /// Reads the domains and certificates `scope` names (every one for ``LoadScope/everything``), each reusing what
    /// `previous` kept of the last load when its source did not change; then the domains that sign their file are
    /// signed with the certificates just read. A full load reads the domains and the certificates side by side
    /// (``concurrently(_:_:)``); a partial one reads the certificates first, because a changed certificate brings
    /// the domains it covers along (to be signed with it, and their status).
    func load(after previous: Catalog, scope: LoadScope = .everything, at now: Date) -> Load {
        _ = source.takeReadFailure()
        guard let names = scope.domains else {
            // The certificate half starts at once: it needs the domains' names only for the SNI table at its end,
            // and the domains are listed meanwhile.
            let listed = Handover<(names: [String], set: Set<String>)>()
            let (certificates, loaded) = concurrently(
                certificateLoader(
                    previous.certificates, domains: { listed.value.names }, only: scope.certificates,
                    isConfigured: { listed.value.set.contains($0) }, at: now)
            ) { certificatesDone in
                let domains = Result { () throws(Diagnostic) in try source.listDomains().filter { owns($0.name) } }
                // The SNI table needs only the domains' names: the listing's, or the last load's without one.
                let all = (try? domains.get())?.map(\.name) ?? previous.loaded.keys
                listed.give((all, Set(all)))
                // The domains wait with their helpers for the certificates: the certificate half ends with
                // serial work (the SNI table), which then runs beside the domains instead of after them.
                return domains.map { read($0, reusing: previous.loaded, helpersAfter: certificatesDone) }
            }
            return signed(Load(time: now, scope: scope, domains: loaded, certificates: certificates))
        }
        // The domains named, found or gone; then those a changed certificate covers, which come along: their
        // coverage may have changed, and so may what they sign with.
        var found: [String: SourceDomain] = [:]
        var absent: Set<String> = []
        func resolve(_ names: some Sequence<String>) throws(Diagnostic) {
            let wanted = Set(names.filter { owns($0) && found[$0] == nil && !absent.contains($0) })
            let domains = try source.domains(named: wanted)
            for name in wanted {
                if let domain = domains[name] {
                    found[name] = domain
                } else if previous.loaded[name] != nil || previous.removedSince[name] != nil {
                    absent.insert(name)
                }
            }
        }
        var certificates: (CertificateCatalog, [Diagnostic])?
        do {
            try resolve(names)
            let (present, gone) = (Set(found.keys), absent)
            // Only configured domains get coverage (and, with ACME, a temporary certificate): not a stray file of
            // the config folder, nor a name a certificate lists that no domain has.
            let configured: @Sendable (String) -> Bool = { name in
                present.contains(name) || (previous.loaded[name] != nil && !gone.contains(name))
            }
            certificates = certificateLoader(
                previous.certificates, domains: { Array(present) }, only: scope.certificates,
                allDomains: {
                    previous.loaded.keys.filter { !gone.contains($0) } + present.subtracting(previous.loaded.keys)
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
        let loaded = read(found.values.sorted { $0.name < $1.name }, reusing: previous.loaded)
        return signed(
            Load(
                time: now, scope: scope, domains: .success(loaded), absent: absent.sorted(), certificates: certificates)
        )
    }

    /// Whether this process serves `domain` (``ServerConfiguration/shard``).
    private func owns(_ domain: String) -> Bool {
        shard?.owns(domain) ?? true
    }

    /// `load` with the domains that sign their file signed, with the certificates it read; a failed load when the
    /// source failed while its domains were read (``ConfigSource/takeReadFailure()``).
    private func signed(_ load: Load) -> Load {
        var load = load
        if case .success = load.domains, let failure = source.takeReadFailure() {
            load.domains = .failure(failure)
            return load
        }
        load.domains = load.domains.map { source.sign($0, now: load.time, certificates: load.certificates?.0) }
        return load
    }

    /// Reads `domains` on every processor at once: with thousands of domains this is most of a start. A domain
    /// whose source did not change since `previous` was loaded keeps that result. All domains' pages share one
    /// ``PagesBudget``. With `helpersAfter`, only this thread reads until that group is done
    /// (``Swift/Collection/concurrentMap(helpersAfter:_:)``).
    private func read(
        _ domains: [SourceDomain], reusing previous: PersistentDictionary<String, LoadedDomain>,
        helpersAfter: DispatchGroup? = nil
    ) -> [LoadedDomain] {
        var loader = SiteConfigLoader()
        loader.pages.budget = PagesBudget(limit: pagesMemory)
        let settings = SharedSettings()
        return domains.concurrentMap(helpersAfter: helpersAfter) { [loader, source] in
            source.readDomain($0, reusing: previous[$0.name], with: loader).keptBetweenLoads(sharing: settings)
        }
    }

    /// The certificate half of a load: `previous` with the certificates read into it (`only` those, or every one),
    /// and the findings; `nil` without an HTTPS listener. `domains` gives the domains whose coverage to work out,
    /// asked for once the certificates are read; `allDomains` every configured domain, for when all coverage must
    /// be redone; `isConfigured` tells a configured domain from another name a certificate lists.
    ///
    /// Neither half of a full load needs the other (the SNI table needs only the domain names, which the listing
    /// gives), and at 10,000 domains each alone keeps both cores busy only part of the time.
    private func certificateLoader(
        _ previous: CertificateCatalog, domains: @escaping @Sendable () -> [String], only: Set<String>?,
        allDomains: (@Sendable () -> [String])? = nil,
        isConfigured: @escaping @Sendable (String) -> Bool, at now: Date
    ) -> @Sendable () -> (CertificateCatalog, [Diagnostic])? {
        { [self] in
            guard readsCertificates else { return nil }
            var known: [String: CertificateDirectory.KnownFolder] = [:]
            for name in only ?? Set(previous.served.keys) { known[name] = previous.served[name]?.known }
            let read = source.readCertificates(known: known, only: only, now: now)
            var certificates = previous
            let intake = certificates.take(
                read, only: only, domains: domains(), allDomains: allDomains, isConfigured: isConfigured,
                temporaryCertificates: temporaryCertificates, location: source.certificatesLocation, at: now)
            log(intake, defaultID: certificates.table?.defaultID)
            return (certificates, intake.diagnostics)
        }
    }

    /// Logs what taking in the certificates did.
    private func log(_ intake: CertificateIntake, defaultID: String?) {
        for folder in intake.keptLastGood {
            logger.warning(
                "certificate folder failed to load; serving its last good certificate",
                metadata: ["folder": "\(folder)"])
        }
        FindingsLog(logger: logger).log(intake.diagnostics.filter { $0 != intake.refusal })
        if let refusal = intake.refusal {
            let message: Logger.Message =
                refusal.rule == .noCertificates
                ? "no usable certificate; keeping the current ones"
                : "certificates not reloaded; keeping the current ones"
            logger.error(message, metadata: ["diagnostic": "\(refusal)"])
        }
        for domain in intake.uncovered {
            logger.warning(
                "no certificate covers this domain; clients will get the default certificate and fail to verify it",
                metadata: ["domain": "\(domain)", "default": "\(defaultID ?? "")"])
        }
    }
}
