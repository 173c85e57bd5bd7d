import AASACore
import AASAMicroHTTPD
import AASATestSupport
import Foundation
import Testing

@testable import AASAServer

/// The tenant API end to end: a real server watching its config folder, its admin routes on a real listener with
/// ``TenantAPI`` over that folder, and curl as the control plane.
@Suite(.serialized) struct TenantAPILiveTests {
    static let writeToken = "w-live-0123456789abcdef"
    static let readToken = "r-live-0123456789abcdef"

    /// A write through the admin listener is checked, written into the watched folder, and served by the public
    /// listener after the reload it triggers; a refused one changes nothing served; a read token cannot write and
    /// no token cannot read.
    @Test func aWriteThroughTheAdminListenerIsServedAndARefusedOneIsNot() throws {
        let live = try LiveServer()
        let api = TenantAPI(
            repository: FolderDomainRepository(directory: live.configDirectory),
            states: { live.server.status?.tenantStates() ?? [:] },
            status: { live.server.status?.tenantStatus($0) })
        var view = AdminRoutes.Live(recorder: TrafficRecorder())
        view.api = { api.answer($0) }
        let routes = AdminRoutes(
            live: view,
            access: AdminAccess(tokens: [
                AdminToken(name: "ci-deploy", scope: .write, bytes: Array(Self.writeToken.utf8)),
                AdminToken(name: "dashboard", scope: .read, bytes: Array(Self.readToken.utf8)),
            ]))
        let listener = try HTTPListener(
            configuration: ListenerConfiguration(port: 0, bindAddress: "127.0.0.1", tls: nil, logHandler: { _ in }),
            routes: routes)
        defer { listener.stop(timeout: .zero) }
        let base = "http://127.0.0.1:\(listener.port)/api/v1/domains"
        let write = "Authorization: Bearer \(Self.writeToken)"
        let read = "Authorization: Bearer \(Self.readToken)"
        let body = TemporaryDirectory("aasa-api-body")

        #expect(try Curl.request(base + "/shop.example").status == 401)
        // Each token learns its name and scope (the dashboard's editor decides from it whether it can save).
        let callerURL = "http://127.0.0.1:\(listener.port)/api/v1/caller"
        #expect(try Curl.request(callerURL).status == 401)
        let reader = try JSONSerialization.jsonObject(
            with: Data(try Curl.request(callerURL, headers: [read]).text.utf8))
        #expect(reader as? [String: String] == ["name": "dashboard", "scope": "read"])
        let writer = try JSONSerialization.jsonObject(
            with: Data(try Curl.request(callerURL, headers: [write]).text.utf8))
        #expect(writer as? [String: String] == ["name": "ci-deploy", "scope": "write"])
        let current = try Curl.request(base + "/shop.example", headers: [read])
        #expect(current.status == 200)
        let tag = try #require(current.headers["etag"])
        let status = try Curl.request(base + "/shop.example/status", headers: [read])
        #expect(status.text.contains("\"published\""), "\(status.text)")

        let broken = try body.write("broken.json", siteJSON(["/broken/*"], app: "ABC.com.x"))
        let refused = try Curl.request(
            base + "/shop.example", method: "PUT",
            headers: [write, "Content-Type: application/json", "If-Match: \(tag)"],
            extra: ["--data-binary", "@\(broken)"])
        #expect(refused.status == 422, "\(refused.text)")
        #expect(refused.text.contains("app-id-format"))

        let edited = try body.write("site.json", siteJSON(["/written-by-api/*"]))
        let asReader = try Curl.request(
            base + "/shop.example", method: "PUT", headers: [read, "Content-Type: application/json"],
            extra: ["--data-binary", "@\(edited)"])
        #expect(asReader.status == 403)

        let started = Date()
        let written = try Curl.request(
            base + "/shop.example", method: "PUT",
            headers: [write, "Content-Type: application/json", "If-Match: \(tag)"],
            extra: ["--data-binary", "@\(edited)"])
        #expect(written.status == 200, "\(written.text)")
        // The watcher's debounce and a reload: well under a second here; 20 s allows a loaded machine.
        var served = ""
        while Date().timeIntervalSince(started) < 20 {
            served = String(decoding: try live.fetch("shop.example").body, as: UTF8.self)
            if served.contains("written-by-api") { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(served.contains("/written-by-api/*"), "\(served)")
        #expect(!served.contains("broken"))
        // A new domain's folder appears whole, and is served too.
        let created = try Curl.request(
            base + "/new.example", method: "PUT",
            headers: [write, "Content-Type: application/json", "If-None-Match: *"],
            extra: ["--data-binary", "@\(edited)"])
        #expect(created.status == 201, "\(created.text)")
        var fresh = ""
        while Date().timeIntervalSince(started) < 20 {
            fresh = String(decoding: try live.fetch("new.example").body, as: UTF8.self)
            if fresh.contains("written-by-api") { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(fresh.contains("/written-by-api/*"), "\(fresh)")
        let history = try Curl.request(base + "/shop.example/history", headers: [read])
        #expect(
            history.text.contains("\"actor\" : \"ci-deploy\"") || history.text.contains("\"actor\": \"ci-deploy\""),
            "\(history.text)")
    }

    /// A page written through the admin listener is served by the public listener after the reload it triggers,
    /// with the Smart App Banner injected as the loader injects it; once deleted, it is 404. Path tricks sent raw
    /// (the listener hands the path over undecoded) and through curl get 400 and write nothing.
    @Test func aPageWrittenThroughTheAdminListenerIsServedWithTheBanner() throws {
        let live = try LiveServer()
        let api = TenantAPI(repository: FolderDomainRepository(directory: live.configDirectory))
        var view = AdminRoutes.Live(recorder: TrafficRecorder())
        view.api = { api.answer($0) }
        let routes = AdminRoutes(
            live: view,
            access: AdminAccess(tokens: [
                AdminToken(name: "ci-deploy", scope: .write, bytes: Array(Self.writeToken.utf8))
            ]))
        let listener = try HTTPListener(
            configuration: ListenerConfiguration(port: 0, bindAddress: "127.0.0.1", tls: nil, logHandler: { _ in }),
            routes: routes)
        defer { listener.stop(timeout: .zero) }
        let base = "http://127.0.0.1:\(listener.port)/api/v1/domains/shop.example/pages"
        let write = "Authorization: Bearer \(Self.writeToken)"
        let body = TemporaryDirectory("aasa-api-page")
        let html = try body.write(
            "page.html",
            "<!doctype html>\n<html><head><title>Written</title></head><body>written-by-api</body></html>\n")

        #expect(try live.get("shop.example", "/from-api/").status == 404)
        let started = Date()
        let written = try Curl.request(
            base + "/from-api/index.html", method: "PUT",
            headers: [write, "Content-Type: application/octet-stream", "If-None-Match: *"],
            extra: ["--data-binary", "@\(html)"])
        #expect(written.status == 201, "\(written.text)")
        let answer = try JSONSerialization.jsonObject(with: Data(written.text.utf8)) as? [String: Any]
        #expect(answer?["contentType"] as? String == "text/html; charset=utf-8", "\(written.text)")
        let tag = try #require(written.headers["etag"])
        // The watcher's debounce and a reload: well under a second here; 20 s allows a loaded machine.
        var served = try live.get("shop.example", "/from-api/")
        while !served.text.contains("written-by-api") && Date().timeIntervalSince(started) < 20 {
            Thread.sleep(forTimeInterval: 0.05)
            served = try live.get("shop.example", "/from-api/")
        }
        #expect(served.status == 200)
        #expect(served.headers["content-type"] == "text/html; charset=utf-8")
        #expect(served.text.contains("written-by-api"), "\(served.text)")
        #expect(served.text.contains("<meta name=\"apple-itunes-app\" content=\"app-id=640199958"), "\(served.text)")
        let read = try Curl.request(base + "/from-api/index.html", headers: [write])
        #expect(read.headers["content-type"] == "text/html; charset=utf-8")
        #expect(read.headers["x-content-type-options"] == "nosniff")
        #expect(!read.text.contains("apple-itunes-app"), "the API answers the file as stored")

        for raw in ["%2e%2e/site.json", "..%2Fsite.json", "a%00.html", "a%5Cb.html", "..", "x/../../site.json"] {
            let client = try RawClient(port: listener.port)
            client.send(
                "PUT /api/v1/domains/shop.example/pages/\(raw) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(write)\r\n"
                    + "Content-Length: 1\r\nConnection: close\r\n\r\nx")
            let answer = client.readAll()
            #expect(answer.hasPrefix("HTTP/1.1 400 "), "\(raw): \(answer)")
            let curl = try Curl.request(
                base + "/" + raw, method: "PUT", headers: [write], extra: ["--path-as-is", "--data-binary", "x"])
            #expect(curl.status == 400, "\(raw): \(curl.text)")
        }
        let site = try String(contentsOfFile: live.configDirectory + "/shop.example/site.json", encoding: .utf8)
        #expect(site.contains("smartAppBanner"), "site.json is untouched")

        // A domain without pages/ gets the folder with its first page, and the watcher loads it.
        let text = try Curl.request(
            base.replacingOccurrences(of: "shop.example", with: "links.example") + "/notes/first.txt", method: "PUT",
            headers: [write], extra: ["--data-binary", "first-page-of-links"])
        #expect(text.status == 201, "\(text.text)")
        var first = try live.get("links.example", "/notes/first.txt")
        while first.status != 200 && Date().timeIntervalSince(started) < 20 {
            Thread.sleep(forTimeInterval: 0.05)
            first = try live.get("links.example", "/notes/first.txt")
        }
        #expect(first.text == "first-page-of-links")
        #expect(first.headers["content-type"] == "text/plain; charset=utf-8")

        let removed = try Curl.request(
            base + "/from-api/index.html", method: "DELETE", headers: [write, "If-Match: \(tag)"])
        #expect(removed.status == 204, "\(removed.text)")
        let deleted = Date()
        var gone = try live.get("shop.example", "/from-api/")
        while gone.status != 404 && Date().timeIntervalSince(deleted) < 20 {
            Thread.sleep(forTimeInterval: 0.05)
            gone = try live.get("shop.example", "/from-api/")
        }
        #expect(gone.status == 404)
    }
}
