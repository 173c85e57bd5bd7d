import AASACore
import AASATestSupport
import Foundation
import Testing

@testable import AASAServer

/// The JSON the dashboard reads, as a script reads it: `/status` paged, filtered and sorted with its summary and
/// reload history, `/traffic`, `/fetches?client=`, `/match?platforms=all`, and the page itself with its policy,
/// against a real server.
@Suite(.serialized) struct DashboardDataTests {
    static let path = "/.well-known/apple-app-site-association"

    func json(_ live: LiveServer, _ path: String, headers: [String] = []) throws -> (status: Int, value: Any) {
        let response = try Curl.request("http://127.0.0.1:\(live.admin)\(path)", headers: headers)
        return (response.status, try JSONSerialization.jsonObject(with: Data(response.body)))
    }

    /// A live server whose third domain, `broken.example`, failed its first load (added and reloaded).
    func serverWithABrokenDomain() throws -> LiveServer {
        let live = try LiveServer(configure: { $0.watchForChanges = false })
        try FileManager.default.createDirectory(
            atPath: live.configDirectory + "/broken.example", withIntermediateDirectories: true)
        try Data("{ \"universalLinks\": 5 }".utf8).write(
            to: URL(fileURLWithPath: live.configDirectory + "/broken.example/site.json"))
        live.server.reload()
        return live
    }

    @Test func statusPagesFiltersAndSortsDomainsWithASummaryAndTheReloadHistory() throws {
        let live = try serverWithABrokenDomain()

        let worst = try #require(try json(live, "/status?limit=1&sort=state").value as? [String: Any])
        let page = try #require(worst["page"] as? [String: Any])
        #expect(page["matching"] as? Int == 3 && page["total"] as? Int == 3 && page["limit"] as? Int == 1)
        let domains = try #require(worst["domains"] as? [String: Any])
        #expect(Array(domains.keys) == ["broken.example"])
        let broken = try #require(domains["broken.example"] as? [String: Any])
        #expect(broken["state"] as? String == "failed")
        #expect((broken["errors"] as? [String])?.first?.contains("broken.example/site.json:1:") == true)
        // The page lists only the certificate folders its domains use: none covers the new domain.
        #expect((worst["certificates"] as? [String: Any])?.isEmpty == true)
        let summary = try #require(worst["summary"] as? [String: Any])
        #expect(summary["domains"] as? Int == 3)
        #expect((summary["states"] as? [String: Int]) == ["published": 2, "stale": 0, "failed": 1, "removing": 0])
        #expect(summary["certificatesExpiringSoon"] as? Int == 0)
        let reloads = try #require(worst["reloads"] as? [[String: Any]])
        #expect(reloads.map { $0["trigger"] as? String } == ["manual", "start"])
        #expect(reloads[0]["result"] as? String == "errors" && reloads[0]["errors"] as? Int == 1)
        #expect((reloads[0]["seconds"] as? Double).map { $0 >= 0 && $0 < 60 } == true)
        // The reload served shop.example unchanged: it keeps the time of the start.
        let started = try #require(try json(live, "/status?q=shop").value as? [String: Any])
        let shopState = (started["domains"] as? [String: [String: Any]])?["shop.example"]
        #expect(shopState?["lastGoodLoad"] as? String == reloads[1]["time"] as? String)

        let shop = try #require(try json(live, "/status?q=SHOP").value as? [String: Any])
        let shopDomains = try #require(shop["domains"] as? [String: [String: Any]])
        #expect(Array(shopDomains.keys) == ["shop.example"])
        let services = try #require(shopDomains["shop.example"]?["services"] as? [String: [String]])
        #expect(services["applinks"] == ["ABCDE12345.com.example.shop"])
        #expect(services["appclips"] == ["ABCDE12345.com.example.shop.Clip"])
        #expect(services["android"] == ["com.example.shop"])
        #expect(shopDomains["shop.example"]?["certificateFolder"] as? String == "shop.example")
        #expect((shop["certificates"] as? [String: Any]).map { Array($0.keys) } == ["shop.example"])

        let byName = try #require(try json(live, "/status?order=desc").value as? [String: Any])
        #expect((byName["domains"] as? [String: Any])?.count == 3)
        let whole = try #require(try json(live, "/status").value as? [String: Any])
        // Unpaged, every certificate folder: one per domain and localhost, as `certs dev` made them.
        #expect(whole["page"] == nil && (whole["certificates"] as? [String: Any])?.count == 3)

        for query in ["sort=size", "state=broken", "limit=-1", "order=up"] {
            let (status, value) = try json(live, "/status?\(query)")
            #expect(status == 400)
            let name = String(query.prefix { $0 != "=" })
            #expect((value as? [String: String])?["error"]?.hasPrefix(name + "=") == true, "\(query): \(value)")
        }
    }

    /// The JSON members keep their order: `domains` lists the page in the order asked for.
    @Test func statusListsDomainsInTheRequestedOrder() throws {
        let live = try serverWithABrokenDomain()
        let response = try Curl.request("http://127.0.0.1:\(live.admin)/status?sort=name&order=desc")
        let order = ["shop.example", "links.example", "broken.example"].map {
            response.text.range(of: "\"\($0)\": {")?.lowerBound
        }
        #expect(order.allSatisfy { $0 != nil } && order == order.sorted { $0! < $1! })
    }

    @Test func trafficCountsTheLastHourPerMinuteByClientClass() throws {
        let live = try LiveServer()
        for _ in 0..<3 { _ = try live.get("shop.example", Self.path, headers: ["User-Agent: AASA-Bot/1.0.0"]) }
        for _ in 0..<2 { _ = try live.get("shop.example", "/", headers: ["User-Agent: Mozilla/5.0 Safari"]) }
        let traffic = try #require(try json(live, "/traffic").value as? [String: Any])
        #expect(traffic["classes"] as? [String] == TrafficRecorder.ClientClass.allCases.map(\.rawValue))
        let minutes = try #require(traffic["minutes"] as? [[String: Any]])
        #expect(minutes.count == 60)
        let starts = minutes.compactMap { ($0["start"] as? String).flatMap { try? Date($0, strategy: .iso8601) } }
        #expect(starts.count == 60 && zip(starts, starts.dropFirst()).allSatisfy { $1.timeIntervalSince($0) == 60 })
        // The requests fall in the last minute, or the two last ones when a minute turned meanwhile.
        let counts = minutes.suffix(2).compactMap { $0["counts"] as? [String: Int] }
        #expect(counts.reduce(0) { $0 + ($1["apple-cdn"] ?? 0) } == 3)
        #expect(counts.reduce(0) { $0 + ($1["browser"] ?? 0) } == 2)
        #expect(
            minutes.dropLast(2).allSatisfy { ($0["counts"] as? [String: Int])?.values.allSatisfy { $0 == 0 } == true })

        _ = try live.get("shop.example", Self.path, headers: ["User-Agent: swcd CFNetwork/1 Darwin/22"])
        let cdn = try #require(try json(live, "/fetches?client=apple-cdn").value as? [[String: Any]])
        #expect(cdn.count == 3 && cdn.allSatisfy { $0["client"] as? String == "apple-cdn" })
        let (status, error) = try json(live, "/fetches?client=robot")
        #expect(status == 400)
        #expect((error as? [String: String])?["error"]?.contains("apple-cdn, device, google, browser, other") == true)
    }

    @Test func matchAnswersEveryPlatformNamingSiteJSONRules() throws {
        let live = try LiveServer()
        let url = "https://shop.example/buy/shoes".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let answer = try #require(try json(live, "/match?url=\(url)&platforms=all").value as? [String: Any])
        let ios = try #require(answer["ios"] as? [String: Any])
        #expect(ios["verdict"] as? String == "match")
        #expect(ios["appIDs"] as? [String] == ["ABCDE12345.com.example.shop"])
        #expect(ios["rule"] as? String == #"{"/": "/buy/*"}"#)
        #expect(ios["siteRule"] as? String == "universalLinks.apps[0].rules[2]")
        #expect(answer["legacyEntries"] as? Bool == false)
        #expect((answer["iosLegacy"] as? [String: Any])?["verdict"] as? String == "no-match")
        let android = try #require(answer["android"] as? [String: Any])
        #expect(android["verdict"] as? String == "manifest")
        #expect(answer["disagree"] as? Bool == false)

        let miss = "https://shop.example/help/12".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let near = try #require(try json(live, "/match?url=\(miss)&platforms=all").value as? [String: Any])
        let misses = try #require((near["ios"] as? [String: Any])?["nearMisses"] as? [[String: Any]])
        #expect(misses.first?["siteRule"] as? String == "universalLinks.apps[0].rules[4]")
        // Without platforms=all, the iOS 13+ result alone, as before, now with its site.json place.
        let single = try #require(try json(live, "/match?url=\(url)").value as? [String: Any])
        #expect(single["verdict"] as? String == "match" && single["siteRule"] as? String != nil)
    }

    @Test func thePageIsOpenWithAStrictPolicyWhileItsDataNeedsTheToken() throws {
        let live = try LiveServer(configure: { $0.adminAccess = AdminAccess(token: Array("s3cret".utf8)) })
        let page = try Curl.request("http://127.0.0.1:\(live.admin)/")
        #expect(page.status == 200)
        #expect(page.headers["content-type"] == "text/html; charset=utf-8")
        let policy = try #require(page.headers["content-security-policy"])
        #expect(policy.hasPrefix("default-src 'none'; "))
        #expect(policy.contains("connect-src 'self'") && policy.contains("frame-ancestors 'none'"))
        #expect(!policy.contains("unsafe"))
        // The policy's hashes are those of the inlined script and style, so the browser runs exactly them.
        for (tag, directive) in [("script", "script-src"), ("style", "style-src")] {
            let start = try #require(page.text.range(of: "<\(tag)>")?.upperBound)
            let end = try #require(page.text[start...].range(of: "</\(tag)>")?.lowerBound)
            let hash = Data(SHA256.digest(Array(page.text[start..<end].utf8))).base64EncodedString()
            #expect(policy.contains("\(directive) 'sha256-\(hash)'"), "\(directive)")
        }
        #expect(page.headers["x-frame-options"] == "DENY")
        #expect(page.body.count <= 100_000)

        for path in ["/status", "/traffic", "/fetches", "/match?url=https%3A%2F%2Fshop.example%2F"] {
            #expect(try Curl.request("http://127.0.0.1:\(live.admin)\(path)").status == 401, "\(path)")
            let allowed = try Curl.request(
                "http://127.0.0.1:\(live.admin)\(path)", headers: ["Authorization: Bearer s3cret"])
            #expect(allowed.status == 200, "\(path)")
        }
        // DNS rebinding: the page is not served under a name that is not the listener's.
        let rebound = try Curl.request("http://127.0.0.1:\(live.admin)/", headers: ["Host: attacker.example"])
        #expect(rebound.status == 421)
    }

    /// The ring keeps an hour: a minute an hour later reuses its slot from zero, and older minutes read as zero.
    @Test func minuteCountsKeepTheLastHour() {
        var counts = MinuteCounts()
        counts.count(.device, minute: 1000)
        counts.count(.device, minute: 1000)
        counts.count(.google, minute: 1001)
        #expect(Array(counts.counts(minute: 1000)) == [0, 2, 0, 0, 0])
        #expect(Array(counts.counts(minute: 1001)) == [0, 0, 1, 0, 0])
        counts.count(.other, minute: 1060)
        #expect(Array(counts.counts(minute: 1060)) == [0, 0, 0, 0, 1])
        #expect(Array(counts.counts(minute: 1000)) == [0, 0, 0, 0, 0])
        #expect(Array(counts.counts(minute: 1001)) == [0, 0, 1, 0, 0])
        #expect(TrafficRecorder.ClientClass.allCases.map(\.index) == Array(0..<5))
    }
}
