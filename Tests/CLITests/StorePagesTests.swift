import AASACore
import AASAServer
import AASATestSupport
import Foundation
import Testing

extension StoreFleetTests {
    /// A page written through the tenant API over the store (a repository of its own, as another replica's API) is
    /// served by a replica following the store, with the banner injected, after the change it announces; the
    /// site.json's revision does not move; deleted, the page is 404 on the replica.
    @Test func aPageWrittenThroughTheAPIIsServedByAReplicaOfTheStore() throws {
        let (workspace, uri) = try pushed("pages_api")
        let (serve, _) = try replica(workspace, uri, "pages")
        #expect(serve.waitUntilReady())
        let api = TenantAPI(repository: StoreDomainRepository(uri: uri))
        func call(_ method: RequestMethod, _ path: String, body: String? = nil, ifMatch: String? = nil) -> Response {
            api.answer(
                APIRequest(
                    method: method, path: "/api/v1/domains/shop.example" + path, ifMatch: ifMatch,
                    body: Array((body ?? "").utf8), caller: AdminCaller(name: "ci-deploy", scope: .write)))
        }
        let siteTag = call(.get, "").headers.first { $0.name == "ETag" }?.value
        #expect(siteTag != nil)
        #expect(try fetch(workspace, serve, "shop.example", "/from-store/").status == 404)

        let written = call(
            .put, "/pages/from-store/index.html",
            body: "<!doctype html>\n<html><head><title>S</title></head><body>from-the-store</body></html>\n")
        #expect(written.status == 201, "\(String(decoding: written.body, as: UTF8.self))")
        let tag = try #require(written.headers.first { $0.name == "ETag" }?.value)
        var served = try fetch(workspace, serve, "shop.example", "/from-store/")
        let took = waitFor(20) {
            served = (try? fetch(workspace, serve, "shop.example", "/from-store/")) ?? served
            return served.text.contains("from-the-store")
        }
        #expect(took != nil, "the replica serves the page")
        #expect(served.headers["content-type"] == "text/html; charset=utf-8")
        #expect(served.text.contains("<meta name=\"apple-itunes-app\" content=\"app-id=640199958"), "\(served.text)")
        // The association file and the other pages are still served; the site.json's revision did not move.
        #expect(try fetch(workspace, serve, "shop.example").status == 200)
        #expect(try fetch(workspace, serve, "shop.example", "/apple-touch-icon.png").status == 200)
        #expect(call(.get, "").headers.first { $0.name == "ETag" }?.value == siteTag)

        #expect(call(.delete, "/pages/from-store/index.html", ifMatch: tag).status == 204)
        let gone = waitFor(20) { (try? fetch(workspace, serve, "shop.example", "/from-store/").status) == 404 }
        #expect(gone != nil, "the replica no longer serves the page")
        #expect(serve.terminate() == 0)
    }
}
