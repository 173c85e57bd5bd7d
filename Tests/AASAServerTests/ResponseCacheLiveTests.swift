import AASACore
import AASATestSupport
import Foundation
import Testing

@testable import AASAServer

/// The public listeners build a domain's responses when a client first asks for them and keep at most
/// `--response-cache` of them; `/metrics` counts what was built and let go.
@Suite(.serialized) struct ResponseCacheLiveTests {
    @Test func aDomainsFileIsBuiltWhenFirstAskedForAndTheCacheStaysWithinItsBound() throws {
        let live = try LiveServer(configure: { $0.responseCache = 1 })
        let path = "/.well-known/apple-app-site-association"
        func figures() throws -> [Int?] {
            try ["aasa_responses_cached", "aasa_response_builds_total", "aasa_response_evictions_total"].map {
                try CertificateCacheLiveTests.metric(live, $0)
            }
        }
        // Loaded and checked, nothing built for a request yet.
        #expect(try figures() == [0, 0, 0])
        let shop = try live.get("shop.example", path)
        let shopFile = try live.expectedFile("shop.example")
        #expect(shop.status == 200 && shop.body == shopFile, "\(shop.error)")
        #expect(try figures() == [1, 1, 0])
        // Another domain's file takes the only place; shop.example's is built again when next asked for, the same.
        let links = try live.get("links.example", path)
        let linksFile = try live.expectedFile("links.example")
        #expect(links.status == 200 && links.body == linksFile)
        #expect(try figures() == [1, 2, 1])
        for _ in 0..<2 {
            let again = try live.get("shop.example", path)
            #expect(again.status == 200 && again.body == shop.body)
            #expect(again.headers["etag"] == shop.headers["etag"] && shop.headers["etag"] != nil)
        }
        #expect(try figures() == [1, 3, 2])
        // Plain HTTP sends the same form (the sample's domains add no HTTPS-only header to their files).
        #expect(try live.fetch("shop.example").body == shop.body)
        #expect(try figures() == [1, 3, 2])
    }
}
