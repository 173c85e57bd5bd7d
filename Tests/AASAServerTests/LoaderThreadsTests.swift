import AASACore
import AASATestSupport
import Foundation
import Synchronization
import Testing

@testable import AASAServer

/// A full load reads the certificates beside the domains' thread and leaves it a processor; a load of changed
/// certificates alone reads them on every processor.
@Suite struct LoaderThreadsTests {
    @Test func theCertificatesLeaveTheDomainsAProcessorOnlyBesideThem() throws {
        let directory = TemporaryDirectory("aasa-loader-threads")
        let source = LoaderReadFailureTests.Source(certificates: directory.path)
        let loader = source.loader(readsCertificates: true)
        var catalog = Catalog()
        let full = loader.load(after: catalog, at: Date())
        #expect((try full.domains.get()).map(\.domain).sorted() == ["links.example", "shop.example"])
        _ = catalog.apply(full, signer: loader, trigger: .start, removalGrace: .seconds(30))
        #expect(source.leftProcessors.values.withLock { $0 } == [1])

        _ = loader.load(after: catalog, scope: LoadScope(domains: [], certificates: ["shop.example"]), at: Date())
        #expect(source.leftProcessors.values.withLock { $0 } == [1, 0])
    }
}
