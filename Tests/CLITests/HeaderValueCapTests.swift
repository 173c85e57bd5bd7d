import AASATestSupport
import Foundation
import Testing

/// A configured value that becomes a response header (`cacheControl`, `pages.cacheControl`) has a byte cap: over it,
/// `check` names the error and the tenant API answers 422, so that whatever `check` accepts is served, with the header.
@Suite(.serialized) struct HeaderValueCapTests {
    static let token = String(repeating: "h", count: 40)

    /// links.example's site.json with `cacheControl` (top level or under `pages`) set to `value`.
    static func site(_ value: String, pages: Bool = false) -> String {
        let setting = pages ? #""pages": { "cacheControl": "\#(value)" }"# : #""cacheControl": "\#(value)""#
        return #"""
            { \#(setting), "universalLinks": { "apps": [{ "appIDs": ["ABCDE12345.com.example.cap"], "rules": [{ "path": "/cap/*" }] }] } }
            """#
    }

    @Test(arguments: [false, true])
    func aHeaderValueOverTheCapIsAnErrorInCheckAndA422InTheAPI(pages: Bool) throws {
        let key = pages ? "pages.cacheControl" : "cacheControl"
        let oversized = "max-age=60, " + String(repeating: "a", count: 40_000)
        let workspace = TemporaryDirectory("aasa-header-cap")
        try workspace.write("site-config/cap.example/site.json", Self.site(oversized, pages: pages))
        let check = try Command.run(
            RepositoryPaths.executable, ["check", "--config", "site-config"], currentDirectory: workspace.path)
        #expect(check.status != 0)
        #expect(
            (check.stdout + check.stderr).contains("\(key) is 40012 bytes, over the 1024 a header value may have"),
            "\(check.stdout)\(check.stderr)")

        let served = TemporaryDirectory("aasa-header-cap-serve")
        let serve = try ServeProcess.withTokens("control-plane write \(Self.token)\n", in: served)
        #expect(serve.waitUntilReady())
        // A domain the dev certificate names; shop.example has pages.
        let domain = pages ? "shop.example" : "links.example"
        let api = "http://127.0.0.1:\(serve.admin)/api/v1/domains/\(domain)"
        let headers = ["Authorization: Bearer \(Self.token)", "Content-Type: application/json"]
        let current = try Curl.request(api, headers: headers)
        let revision = try #require(current.headers["etag"], "\(current.status) \(current.text.prefix(200))")
        let refused = try Curl.request(
            api, method: "PUT", headers: headers, extra: ["--data-binary", Self.site(oversized, pages: pages)])
        #expect(refused.status == 422, "\(refused.text.prefix(300))")
        #expect(refused.text.contains("over the 1024 a header value may have"), "\(refused.text.prefix(600))")

        // At the cap the value is served, whole, on the association file (or the page).
        let atCap = "max-age=60, " + String(repeating: "b", count: 1_024 - 12)
        let accepted = try Curl.request(
            api, method: "PUT", headers: headers + ["If-Match: \(revision)"],
            extra: ["--data-binary", Self.site(atCap, pages: pages)])
        #expect(accepted.status == 200, "\(accepted.text.prefix(300))")
        let path = pages ? "/" : "/.well-known/apple-app-site-association"
        var answer: CurlResponse?
        Wait.until("\(domain) to serve its new value", seconds: 15) {
            answer = try? Curl.request(
                "https://\(domain):\(serve.port)\(path)", caFile: served.path + "/certs/dev-ca/ca.pem",
                resolve: (domain, serve.port))
            return answer?.headers["cache-control"] == atCap ? nil : "\(answer?.status ?? 0) \(answer?.headers ?? [:])"
        }
        #expect(answer?.status == 200)
    }
}
