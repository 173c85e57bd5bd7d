import AASACore
import AASAOpenSSL
import Foundation

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
    /// Whether a domain no certificate covers gets a temporary one while ACME obtains its own.
    var temporaryCertificates: Bool

    /// This loader reading from `source`.
    func reading(from source: any ConfigSource) -> Loader {
        var loader = self
        loader.source = source
        return loader
    }

    /// Reads the domains and certificates `scope` names (every one for ``LoadScope/everything``), each reusing what
    /// `previous` kept of the last load when its source did not change. A full load reads the domains and the
    /// certificates side by side (``concurrently(_:_:)``); a partial one reads the certificates first, because a
    /// changed certificate brings the domains it covers along (to be signed with it, and their status). The domains
    /// that sign their file are signed once the catalog took the certificates (``sign(_:with:at:)``).
    func load(after previous: Catalog, scope: LoadScope = .everything, at now: Date) -> Load {
        _ = source.takeReadFailure()
        var load = Load(
            time: now, scope: scope, domains: .success([]), certificatesLocation: source.certificatesLocation,
            temporaryCertificates: temporaryCertificates)
        guard let names = scope.domains else {
            // The certificates leave a processor to the domains' thread, and the domains' helpers wait for the
            // certificates: never more threads at work than processors.
            let (certificates, loaded) = concurrently(
                certificateReader(previous.certificates, only: scope.certificates, at: now, besideDomains: true)
            ) {
                certificatesDone in
                Result { () throws(Diagnostic) in try ownDomains(source.listDomains()) }
                    .map { read($0, reusing: previous.loaded, helpersAfter: certificatesDone) }
            }
            load.domains = loaded
            load.certificates = certificates
            return checked(load)
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
        do {
            try resolve(names)
            load.certificates = certificateReader(previous.certificates, only: scope.certificates, at: now)()
            if let changed = scope.certificates, !changed.isEmpty {
                let (present, gone) = (Set(found.keys), absent)
                // Only configured domains come along: not a stray file of the config folder, nor a name a
                // certificate lists that no domain has.
                let configured = { (name: String) in
                    present.contains(name) || (previous.loaded[name] != nil && !gone.contains(name))
                }
                var covered = changed
                for folder in changed { covered.formUnion(previous.certificates.domains(coveredBy: folder)) }
                for folder in load.certificates?.folders ?? [] where changed.contains(folder.name) {
                    covered.formUnion(folder.certificate?.summary.names.map(CertificateName.canonical) ?? [])
                }
                try resolve(covered.filter(configured).sorted())
            }
        } catch {
            load.domains = .failure(error)
            return load
        }
        load.domains = .success(read(found.values.sorted { $0.name < $1.name }, reusing: previous.loaded))
        load.absent = absent.sorted()
        return checked(load)
    }

    /// The domains of `listed` this server serves: all of them but in a shard (not filtered, so not copied).
    private func ownDomains(_ listed: [SourceDomain]) -> [SourceDomain] {
        shard == nil ? listed : listed.filter { owns($0.name) }
    }

    /// Whether this process serves `domain` (``ServerConfiguration/shard``).
    private func owns(_ domain: String) -> Bool {
        shard?.owns(domain) ?? true
    }

    /// `load`, failed when the source failed while its domains were read (``ConfigSource/takeReadFailure()``).
    private func checked(_ load: Load) -> Load {
        var load = load
        if case .success = load.domains, let failure = source.takeReadFailure() {
            load.domains = .failure(failure)
        }
        return load
    }

    /// Reads `domains` on every processor at once, what they are read from brought in ahead of the parsers
    /// (``ConfigSource/readAhead(_:)``): with thousands of domains this is most of a start. A domain
    /// whose source did not change since `previous` was loaded keeps that result. All domains' pages share one
    /// ``PagesBudget``. With `helpersAfter`, only this thread reads until that group is done
    /// (``Swift/Collection/concurrentMap(helpersAfter:leaving:_:)``).
    private func read(
        _ domains: [SourceDomain], reusing previous: PersistentDictionary<String, LoadedDomain>,
        helpersAfter: DispatchGroup? = nil
    ) -> [LoadedDomain] {
        var loader = SiteConfigLoader()
        loader.pages.budget = PagesBudget(limit: pagesMemory)
        loader.domainsRoot = domains.isEmpty ? nil : source.openDomainsRoot()
        let settings = SharedSettings()
        let ahead = source.readAhead(domains)
        defer { ahead?.stop() }
        return domains.indices.concurrentMap(helpersAfter: helpersAfter) { [loader, source] index in
            ahead?.reached(index)
            return source.readDomain(domains[index], reusing: previous[domains[index].name], with: loader)
                .keptBetweenLoads(sharing: settings)
        }
    }

    /// The certificate half of a load: the certificate folders `only` names (every one when `nil`), each compared
    /// with what `previous` serves of it; `nil` without an HTTPS listener. `besideDomains` when the domains are read
    /// at the same time, on a thread of their own: the certificates then leave it a processor.
    ///
    /// Neither half of a full load needs the other, and at 10,000 domains each alone keeps both cores busy only part
    /// of the time. With a helper on every processor beside the domains' thread, three threads worked on two cores
    /// and a third of starts spent a fifth more CPU, most of it waiting on the allocator's arena locks
    /// (docs/benchmarks.md).
    private func certificateReader(
        _ previous: CertificateCatalog, only: Set<String>?, at now: Date, besideDomains: Bool = false
    ) -> @Sendable () -> CertificateRead? {
        { [self] in
            guard readsCertificates else { return nil }
            var known: [String: CertificateDirectory.KnownFolder] = [:]
            for name in only ?? Set(previous.served.keys) { known[name] = previous.served[name]?.known }
            return source.readCertificates(
                known: known, only: only, now: now, leavingProcessors: besideDomains ? 1 : 0)
        }
    }
}

extension Loader: LoadSigner {
    func sign(_ domains: [LoadedDomain], with certificates: CertificateCatalog?, at now: Date) -> [LoadedDomain] {
        source.sign(domains, now: now, certificates: certificates)
    }
}
