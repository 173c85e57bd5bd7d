import AASACore
import AASATestSupport
import Foundation
import Testing

@testable import AASAServer

/// What operators read off the admin listener, and the access log, against a real server and real fetches.
@Suite(.serialized) struct OperationsTests {
    static let path = "/.well-known/apple-app-site-association"
    static let agents: [(String, TrafficRecorder.ClientClass)] = [
        ("AASA-Bot/1.0.0", .appleCDN), ("swcd (unknown version) CFNetwork/1410.0.3 Darwin/22.4.0", .device),
        ("Mozilla/5.0 (compatible; Google-Digital-Asset-Links)", .google),
        ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Safari/604.1", .browser), ("curl/8.0", .other),
    ]

    func metric(_ text: String, domain: String, path: String, status: Int, client: String) -> Int? {
        let prefix =
            "aasa_requests_total{domain=\"\(domain)\",path=\"\(path)\",status=\"\(status)\",client=\"\(client)\"} "
        return text.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap { Int($0.dropFirst(prefix.count)) }
    }

    @Test func metricsCountEachFetchByDomainPathAndClientClass() throws {
        let live = try LiveServer()
        for (index, (agent, _)) in Self.agents.enumerated() {
            for _ in 0...index {
                _ = try live.get("shop.example", Self.path, headers: ["User-Agent: \(agent)"])
            }
        }
        _ = try live.get("links.example", "/apple-app-site-association", headers: ["User-Agent: AASA-Bot/1.0.0"])
        _ = try Curl.request(
            "https://nope.example:\(live.https)/x", resolve: ("nope.example", live.https),
            extra: ["-k", "-A", "AASA-Bot/1.0.0"])
        // A 404 and a 405 of a known domain: one response object serves every domain, each counted under its own.
        _ = try live.get("links.example", "/missing", headers: ["User-Agent: AASA-Bot/1.0.0"])
        _ = try Curl.request(
            "https://shop.example:\(live.https)\(Self.path)", resolve: ("shop.example", live.https),
            extra: ["-k", "-A", "AASA-Bot/1.0.0", "-X", "POST"])
        let metrics = try Curl.request("http://127.0.0.1:\(live.admin)/metrics")
        #expect(metrics.status == 200)
        #expect(metrics.headers["content-type"]?.hasPrefix("text/plain; version=0.0.4") == true)
        for (index, (_, client)) in Self.agents.enumerated() {
            #expect(
                metric(metrics.text, domain: "shop.example", path: Self.path, status: 200, client: client.rawValue)
                    == index + 1)
        }
        #expect(
            metric(
                metrics.text, domain: "links.example", path: "/apple-app-site-association", status: 200,
                client: "apple-cdn") == 1)
        #expect(metric(metrics.text, domain: "unknown", path: "other", status: 404, client: "apple-cdn") == 1)
        #expect(metric(metrics.text, domain: "links.example", path: "other", status: 404, client: "apple-cdn") == 1)
        #expect(metric(metrics.text, domain: "shop.example", path: Self.path, status: 405, client: "apple-cdn") == 1)
        #expect(metrics.text.contains("aasa_reloads_total{result=\"ok\"} 1"))
        #expect(metrics.text.contains("aasa_certificate_expiry_seconds{certificate=\"shop.example\"} "))
        #expect(metrics.text.contains("aasa_domain_last_good_load_timestamp_seconds{domain=\"links.example\"} "))
        #expect(metrics.text.contains("aasa_open_connections{listener=\"https\"} "))
        #expect(metrics.text.contains("aasa_header_timeouts_total{listener=\"https\"} 0"))
        #expect(metrics.text.contains("aasa_build_info{version="))
        // A further fetch makes the counter rise.
        _ = try live.get("shop.example", Self.path, headers: ["User-Agent: AASA-Bot/1.0.0"])
        let again = try Curl.request("http://127.0.0.1:\(live.admin)/metrics").text
        #expect(metric(again, domain: "shop.example", path: Self.path, status: 200, client: "apple-cdn") == 2)
    }

    @Test func fetchesListsRecentAssociationFetchesNewestFirst() throws {
        let live = try LiveServer()
        _ = try live.get("shop.example", Self.path, headers: ["User-Agent: AASA-Bot/1.0.0"])
        _ = try live.get("links.example", Self.path, headers: ["User-Agent: AASA-Bot/1.0.0"])
        _ = try live.get(
            "shop.example", "/apple-app-site-association", headers: ["User-Agent: swcd CFNetwork/1 Darwin/22"])
        _ = try live.get("shop.example", "/other")  // not an association file: counted, not listed
        let response = try Curl.request("http://127.0.0.1:\(live.admin)/fetches?domain=shop.example")
        let fetches = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [[String: Any]])
        #expect(fetches.count == 2)
        #expect(fetches[0]["path"] as? String == "/apple-app-site-association")
        #expect(fetches[0]["client"] as? String == "device")
        #expect(fetches[0]["remoteAddress"] as? String == "127.0.0.1")
        #expect(fetches[0]["status"] as? Int == 200)
        #expect(fetches[1]["client"] as? String == "apple-cdn")
        #expect(fetches[1]["userAgent"] as? String == "AASA-Bot/1.0.0")
        let all =
            try JSONSerialization.jsonObject(
                with: Data(try Curl.request("http://127.0.0.1:\(live.admin)/fetches").body)) as? [Any]
        #expect(all?.count == 3)
    }

    @Test func readinessFollowsTheDomainsBeingServed() throws {
        let live = try LiveServer(configure: { $0.watchForChanges = false })
        #expect(try Curl.request("http://127.0.0.1:\(live.admin)/readyz").status == 200)
        try FileManager.default.createDirectory(
            atPath: live.configDirectory + "/new.example", withIntermediateDirectories: true)
        try Data("{ nope".utf8).write(to: URL(fileURLWithPath: live.configDirectory + "/new.example/site.json"))
        live.server.reload()
        let notReady = try Curl.request("http://127.0.0.1:\(live.admin)/readyz")
        #expect(notReady.status == 503)
        #expect(notReady.text.hasPrefix("new.example: "))
        #expect(notReady.text.contains("new.example/site.json:1:3: error: [invalid-json]"))
        #expect(try Curl.request("http://127.0.0.1:\(live.admin)/healthz").status == 200)
    }

    @Test(arguments: [AccessLog.Format.json, .common])
    func accessLogWritesOneLinePerRequestWithoutQueries(format: AccessLog.Format) throws {
        let directory = TemporaryDirectory("aasa-log")
        let file = directory.path + "/access.log"
        let descriptor = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        defer { close(descriptor) }
        let live = try LiveServer(
            recorder: TrafficRecorder(accessLog: AccessLog(format: format, descriptor: descriptor)))
        _ = try live.get("shop.example", Self.path + "?secret=1", headers: ["User-Agent: AASA-Bot/1.0.0"])
        _ = try live.get("shop.example", "/x\"y", method: "HEAD")
        let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 2)
        #expect(!lines[0].contains("secret"))
        switch format {
        case .json:
            let object = try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any]
            #expect(object?["path"] as? String == Self.path)
            #expect(object?["status"] as? Int == 200)
            #expect(object?["client"] as? String == "apple-cdn")
            #expect(object?["host"] as? String == "shop.example")
        case .common:
            #expect(lines[0].hasPrefix("127.0.0.1 - - ["))
            #expect(lines[0].contains("] \"GET \(Self.path) HTTP/1.1\" 200 "))
            #expect(lines[1].contains("\"HEAD /x\\\"y HTTP/1.1\" 404 0"), "\(lines[1])")
        }
    }

    @Test(arguments: agents)
    func userAgentsAreClassified(agent: String, expected: TrafficRecorder.ClientClass) {
        let bytes = Array(agent.utf8)
        #expect(bytes.withUnsafeBytes { TrafficRecorder.ClientClass.of($0) } == expected)
    }
}
