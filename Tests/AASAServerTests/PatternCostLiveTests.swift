import AASACore
import AASATestSupport
import Foundation
import Testing

@testable import AASAServer

/// What a hostile tenant's patterns and a hostile client's URLs cost the real daemon: with the widest pattern
/// the limits allow and a landing page, a request with the longest URL that is matched costs milliseconds of CPU,
/// another tenant's file is answered meanwhile, and the rule of 100,000 `*` is refused at load.
@Suite(.serialized) struct PatternCostLiveTests {
    /// One rule as wide as ``PatternLimits/maximumWidth`` allows that stays wholly live on a URL of `a`s (`/*`
    /// then only `a`s but the last character, so it never matches), another domain with the rule, both
    /// with a landing page.
    static func server() throws -> LiveServer {
        let literals = PatternLimits.maximumWidth - 5
        let widest = "/*" + String(repeating: "a", count: literals - 1) + "b"
        let hostile = "/" + String(repeating: "*", count: 100_000) + "b"
        func site(_ pattern: String) -> String {
            """
            {"legacyFormat": false, "universalLinks": {"apps": [{"appIDs": ["ABCDE12345.com.example.app"],
              "rules": [{"path": "\(pattern)"}]}]}, "smartAppBanner": {"appStoreID": "640199958"}}
            """
        }
        return try LiveServer(extraDomains: ["wide.example": site(widest), "hostile.example": site(hostile)])
    }

    /// The longest URL that is matched on `domain`: `https://domain/aaa…`.
    static func longestPath(on domain: String) -> String {
        "/" + String(repeating: "a", count: MatchURL.maximumLength - "https://\(domain)/".utf8.count)
    }

    /// CPU time this process (the daemon runs in it) has used, from /proc/self/stat: utime + stime.
    static func processCPU() throws -> Duration {
        let stat = try String(contentsOfFile: "/proc/self/stat", encoding: .utf8)
        let fields = stat[stat.index(after: try #require(stat.lastIndex(of: ")")))...].split(separator: " ")
        // Fields 14 and 15 of proc(5), counted after the command name (field 2): indexes 11 and 12 here.
        let ticks = try #require(Int(fields[11])) + (try #require(Int(fields[12])))
        return .milliseconds(ticks * 1_000 / Int(sysconf(Int32(_SC_CLK_TCK))))
    }

    @Test func theWidestPatternAgainstTheLongestURLCostsMilliseconds() throws {
        let live = try Self.server()
        let path = Self.longestPath(on: "wide.example")
        #expect(try live.get("wide.example", path).status == 404)
        let requests = 8
        let before = try Self.processCPU()
        for _ in 0..<requests { #expect(try live.get("wide.example", path).status == 404) }
        let perRequest = (try Self.processCPU() - before) / requests
        print("CPU per request with the widest pattern and the longest URL: \(perRequest)")
        // 512 states × 2,048 characters: about 2 ms in a release build, about 100 ms in this debug build (curl's
        // start counted too). A rule of 100,000 `*` took 5 s per request in a release build, minutes in this one.
        #expect(perRequest < .seconds(1), "\(perRequest)")
        // One byte more is not matched at all.
        #expect(try live.get("wide.example", path + "a").status == 404)
    }

    /// All over the plain HTTP listener with raw sockets from this process (starting curl processes takes seconds
    /// when several start at once), so the requests are in flight together and share the listener's two threads.
    @Test func anotherTenantIsAnsweredWhileTheWidestRequestsRun() throws {
        let live = try Self.server()
        let clock = ContinuousClock()
        let group = DispatchGroup()
        for index in 0..<4 {
            // Half on the widest allowed rule, half on the domain whose rule of 100,000 `*` was refused.
            let domain = index % 2 == 0 ? "wide.example" : "hostile.example"
            DispatchQueue.global().async(group: group) {
                for _ in 0..<3 {
                    _ = try? HTTPProbe.get(port: live.http, host: domain, path: Self.longestPath(on: domain))
                }
            }
        }
        Thread.sleep(forTimeInterval: 0.02)
        let start = clock.now
        let other = try live.fetch("shop.example")
        let waited = clock.now - start
        print("another tenant's file while the widest requests run: \(waited)")
        group.wait()
        #expect(other.status == 200)
        // About a tenth of a second in this debug build, where each heavy request takes 70 ms of CPU; 9.6 s in a
        // release build when four requests met the rule of 100,000 `*` (the probe gives up after 5 s).
        #expect(waited < .seconds(3), "\(waited)")
    }

    @Test func theAdminMatchCostsTheSameAndRefusesALongerURL() throws {
        let live = try Self.server()
        let url = "https://wide.example" + Self.longestPath(on: "wide.example")
        let encoded = url.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let before = try Self.processCPU()
        let answer = try Curl.request("http://127.0.0.1:\(live.admin)/match?url=\(encoded)")
        let cost = try Self.processCPU() - before
        print("CPU of the admin /match with the widest pattern and the longest URL: \(cost)")
        #expect(answer.status == 200)
        #expect(answer.text.contains("\"verdict\":\"no-match\""))
        // Three passes over the rule (the match, then the near misses), each as cheap as a request's: about 250 ms
        // in this debug build.
        #expect(cost < .milliseconds(2_500), "\(cost)")
        let longer = try Curl.request("http://127.0.0.1:\(live.admin)/match?url=\(encoded)a")
        #expect(longer.status == 414)
        #expect(longer.text.contains("over the limit of \(MatchURL.maximumLength)"), "\(longer.text)")
    }

    @Test func theRuleOfAHundredThousandStarsIsRefusedAtLoad() throws {
        let live = try Self.server()
        let status = try live.status()
        let text = String(decoding: try JSONSerialization.data(withJSONObject: status), as: UTF8.self)
        #expect(text.contains("pattern-too-long"), "\(text.prefix(2_000))")
        let before = try Self.processCPU()
        let answer = try live.get("hostile.example", Self.longestPath(on: "hostile.example"))
        #expect(try Self.processCPU() - before < .seconds(1))
        #expect(answer.status != 200)
    }
}
