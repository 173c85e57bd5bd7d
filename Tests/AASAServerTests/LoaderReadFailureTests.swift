import AASACore
import AASATestSupport
import Foundation
import Logging
import Synchronization
import Testing

@testable import AASAServer

/// A load whose source fails while its domains are read (a store that stops answering between its listing and its
/// fetches) fails as a whole, with the source's one finding: the catalog keeps every domain, and nothing is reported
/// per domain.
@Suite struct LoaderReadFailureTests {
    /// The repository's folders; while ``failsReads`` is set, reading a domain records a failure of the source.
    struct Source: ConfigSource {
        var folders: FolderSource
        /// The mechanism `StoreSource` uses.
        let pending = StoreReadFailure()
        let failsReads = Switch()
        /// The processors each read of the certificates was asked to leave, in order.
        let leftProcessors = LeftProcessors()

        /// The repository's site-config folders, with the certificate folders in `certificates`.
        init(certificates: String) {
            folders = FolderSource(
                configDirectory: RepositoryPaths.siteConfig, certificateDirectory: certificates,
                refusesExposedKeys: false, signatures: SignatureCache())
        }

        /// A loader reading this source.
        func loader(readsCertificates: Bool) -> Loader {
            Loader(
                source: self, shard: nil, readsCertificates: readsCertificates, pagesMemory: 1 << 30,
                temporaryCertificates: false)
        }

        var domainsLocation: String { folders.domainsLocation }
        var certificatesLocation: String { folders.certificatesLocation }
        func listDomains() throws(Diagnostic) -> [SourceDomain] { try folders.listDomains() }
        func domain(named name: String) throws(Diagnostic) -> SourceDomain? { try folders.domain(named: name) }
        func readDomain(_ domain: SourceDomain, reusing previous: LoadedDomain?, with loader: SiteConfigLoader)
            -> LoadedDomain
        {
            if failsReads.isOn { pending.record(Diagnostic(.error, rule: .storeUnreachable, "cannot read the store")) }
            return folders.readDomain(domain, reusing: previous, with: loader)
        }
        func readCertificates(
            known: [String: CertificateDirectory.KnownFolder], only: Set<String>?, now: Date, leavingProcessors: Int
        ) -> CertificateRead {
            leftProcessors.values.withLock { $0.append(leavingProcessors) }
            return folders.readCertificates(known: known, only: only, now: now, leavingProcessors: leavingProcessors)
        }
        func sign(_ loaded: [LoadedDomain], now: Date, certificates: CertificateCatalog?) -> [LoadedDomain] {
            folders.sign(loaded, now: now, certificates: certificates)
        }
        func takeReadFailure() -> Diagnostic? { pending.take() }
    }

    final class LeftProcessors: Sendable {
        let values = Mutex<[Int]>([])
    }

    final class Switch: Sendable {
        private let on = Atomic<Bool>(false)
        var isOn: Bool { on.load(ordering: .relaxed) }
        func turnOn() { on.store(true, ordering: .relaxed) }
    }

    @Test(arguments: [LoadScope.everything, LoadScope(domains: ["shop.example"], certificates: nil)])
    func aSourceThatFailsWhileReadingFailsTheLoadAndKeepsEveryDomain(scope: LoadScope) {
        let directory = TemporaryDirectory("aasa-read-failure")
        let source = Source(certificates: directory.path)
        let loader = source.loader(readsCertificates: false)
        var catalog = Catalog()
        _ = catalog.apply(
            loader.load(after: catalog, at: Date()), signer: loader, trigger: .start, removalGrace: .seconds(30))
        #expect(catalog.published.keys.sorted() == ["links.example", "shop.example"])

        // A failure left from an earlier load is not this one's.
        source.pending.record(Diagnostic(.error, rule: .storeUnreachable, "stale"))
        let clean = loader.load(after: catalog, scope: scope, at: Date())
        #expect((try? clean.domains.get())?.isEmpty == false)

        source.failsReads.turnOn()
        let load = loader.load(after: catalog, scope: scope, at: Date())
        guard case .failure(let error) = load.domains else {
            Issue.record("the load did not fail")
            return
        }
        #expect(error.message == "cannot read the store")
        let transition = catalog.apply(load, signer: loader, trigger: .storeChange, removalGrace: .seconds(30))
        #expect(transition.diagnostics.map(\.message) == ["cannot read the store"])
        #expect(catalog.published.keys.sorted() == ["links.example", "shop.example"])
    }
}
