import AASACore
import AASACurl
import AASAMicroHTTPD
import AASAOpenSSL
import AASATestSupport
import Foundation
import Logging
import Synchronization
import Testing

@testable import AASAServer

/// A stand-in for Apple's CDN and Google's Digital Asset Links API: real HTTPS on loopback with a test CA, answering
/// each path with what a test programs (status, headers, body, and a delay).
final class FakeEndpoint: @unchecked Sendable {
    struct Answer {
        var status = 200
        var headers: [HTTPHeader] = []
        var body = ""
        var delay: Double = 0
    }

    /// What the listener answers from: its own object, so the listener (which holds it) does not keep the endpoint
    /// alive, and the endpoint's end stops the listener and removes its folder.
    private final class Answers: RouteTable, @unchecked Sendable {
        let preparedResponses: [PreparedResponse] = []
        let byKey = Mutex<[String: Answer]>([:])

        func route(_ request: some HTTPRequest) -> RouteDecision {
            let path = request.withPath { String(decoding: $0, as: UTF8.self) }
            var key = path
            if path == "/v1/statements:list", let site = QueryString.value("source.web.site", in: request.rawQuery) {
                key = "google:" + site.replacingOccurrences(of: "https://", with: "")
            }
            guard let answer = byKey.withLock({ $0[key] }) else {
                return .dynamic(Response(status: 404, body: Array("no such copy\n".utf8)))
            }
            if answer.delay > 0 { Thread.sleep(forTimeInterval: answer.delay) }
            return .dynamic(Response(status: answer.status, headers: answer.headers, body: Array(answer.body.utf8)))
        }
    }

    private let answers = Answers()
    let directory = TemporaryDirectory("aasa-fake-cdn")
    let caFile: String
    private var listener: HTTPListener?
    var port: UInt16 { listener?.port ?? 0 }

    init() throws {
        let authority = try DevCertificateAuthority.loadOrCreate(directory: directory.path + "/ca")
        caFile = authority.certificatePath
        let issued = try authority.issue(names: ["127.0.0.1", "localhost"])
        let table = try CertificateTable(entries: [
            CertificateTable.Entry(
                names: ["127.0.0.1", "localhost"], certificateChainPEM: Array(try issued.certificatePEM().utf8),
                privateKeyPEM: Array(try issued.privateKeyPEM().utf8))
        ])
        var configuration = ListenerConfiguration(
            port: 0, bindAddress: "127.0.0.1", tls: TLSConfiguration(certificates: table))
        configuration.threadPoolSize = 4
        listener = try HTTPListener(configuration: configuration, routes: answers)
    }

    deinit { listener?.stop(timeout: .zero) }

    /// Answers `key` (a path, or for Google the `source.web.site` domain) with `answer`.
    func set(_ key: String, _ answer: Answer) { answers.byKey.withLock { $0[key] = answer } }

    var appleBase: String { "https://127.0.0.1:\(port)/a/v1/" }
    var googleBase: String { "https://127.0.0.1:\(port)/v1/statements:list" }
}

@Suite(.serialized) struct CDNCheckTests {
    static let served =
        #"{"applinks":{"details":[{"appIDs":["ABCDE12345.com.example.app"],"components":[{"/":"/buy/*"}]}]},"webcredentials":{"apps":["ABCDE12345.com.example.app"]}}"#
    /// The same file, other member order and spacing: in sync.
    static let reordered =
        #"{ "webcredentials": {"apps": ["ABCDE12345.com.example.app"]}, "applinks": {"details": [{"components": [{"/": "/buy/*"}], "appIDs": ["ABCDE12345.com.example.app"]}]} }"#
    /// An older version: another rule, and no webcredentials.
    static let older =
        #"{"applinks":{"details":[{"appIDs":["ABCDE12345.com.example.app"],"components":[{"/":"/shop/*"}]}]}}"#

    static func comparison(_ fake: FakeEndpoint, timeout: Duration = .seconds(5), caFile: String? = nil)
        -> CDNComparison
    {
        var client = HTTPClient(trustAnchors: caFile ?? fake.caFile)
        client.timeout = timeout
        var comparison = CDNComparison(client: client)
        comparison.appleBase = fake.appleBase
        comparison.googleBase = fake.googleBase
        return comparison
    }

    static func check(_ fake: FakeEndpoint, _ answer: FakeEndpoint.Answer, timeout: Duration = .seconds(5))
        -> CDNObservation
    {
        fake.set("/a/v1/shop.example", answer)
        return comparison(fake, timeout: timeout).compare(
            "shop.example", served: .init(association: Array(served.utf8), assetLinks: nil, since: nil)
        ).apple
    }

    @Test func eachStateOfApplesCopyWithItsEvidence() throws {
        let fake = try FakeEndpoint()
        // In sync: equal as JSON, whatever the order and spacing; the cache headers say when it refreshes.
        let inSync = Self.check(
            fake,
            .init(
                headers: [HTTPHeader("Age", "600"), HTTPHeader("Cache-Control", "max-age=3600")], body: Self.reordered))
        #expect(inSync.state == .inSync && inSync.age == 600 && inSync.cacheControl == "max-age=3600")
        #expect(abs((inSync.nextRefresh ?? .distantPast).timeIntervalSinceNow - 3000) < 60)
        #expect(
            inSync.summary.contains("age 600s; cache-control: max-age=3600; next refresh by 20"), "\(inSync.summary)")
        // Stale: says which services and app entries differ.
        let stale = Self.check(fake, .init(body: Self.older))
        #expect(stale.state == .stale)
        #expect(
            stale.differences.contains("applinks rules of ABCDE12345.com.example.app differ"), "\(stale.differences)")
        #expect(stale.differences.contains { $0.hasPrefix("-webcredentials") }, "\(stale.differences)")
        // ...and which URLs devices get another answer for until the CDN refreshes (the semantic diff), in the line
        // the command prints and the log keeps.
        #expect(stale.urlChanges.count == 2, "\(stale.urlChanges)")
        #expect(
            stale.urlChanges.contains {
                $0.contains("ABCDE12345.com.example.app until the CDN refreshes, then the web")
                    && $0.contains("(e.g. https://shop.example/shop")
            }, "\(stale.urlChanges)")
        #expect(
            stale.urlChanges.contains {
                $0.contains("the web until the CDN refreshes, then ABCDE12345.com.example.app")
                    && $0.contains("(e.g. https://shop.example/buy")
            }, "\(stale.urlChanges)")
        #expect(stale.summary.contains("URLs answered differently: "), "\(stale.summary)")
        // Failed, with Apple's headers verbatim and a hint for the well-known causes.
        for (reason, hint) in [
            ("SWCERR00101 Bad HTTP Response: 403", "AASA-Bot"), ("SWCERR00301 Timeout", "in time"),
            ("SWCERR00102 SSL error", "certificate"), ("SWCERR00103 Redirects are not allowed", "no redirects"),
        ] {
            let failed = Self.check(
                fake,
                .init(
                    status: 404,
                    headers: [
                        HTTPHeader("Apple-Failure-Reason", reason),
                        HTTPHeader("Apple-Failure-Details", "while fetching"),
                        HTTPHeader("Apple-Try-Direct", "true"),
                    ]))
            #expect(failed.state == .failed && failed.failureReason == reason && failed.tryDirect == "true")
            #expect(failed.failureDetails == "while fetching" && failed.hint?.contains(hint) == true, "\(failed)")
        }
        // Absent: a 404 without a failure reason, or the 405 the CDN answers for a domain it does not know. A redirect
        // from the CDN itself is a failure.
        #expect(Self.check(fake, .init(status: 404)).state == .absent)
        #expect(Self.check(fake, .init(status: 405)).state == .absent)
        let reserved = Self.check(
            fake, .init(status: 404, headers: [HTTPHeader("Apple-Failure-Reason", "SWCERR00202 Private IP address")]))
        #expect(reserved.hint?.contains("private or reserved address") == true)
        // Entries only reordered are named as such: the order decides which app opens a URL.
        let swapped =
            #"{"applinks":{"details":[{"appIDs":["A.b"],"components":[{"/":"/b/*"}]},{"appIDs":["A.a"],"components":[{"/":"*"}]}]}}"#
        let original =
            #"{"applinks":{"details":[{"appIDs":["A.a"],"components":[{"/":"*"}]},{"appIDs":["A.b"],"components":[{"/":"/b/*"}]}]}}"#
        fake.set("/a/v1/order.example", .init(body: swapped))
        let reordered = Self.comparison(fake).compare(
            "order.example", served: .init(association: Array(original.utf8), assetLinks: nil, since: nil)
        ).apple
        #expect(
            reordered.differences == [
                "applinks entries are in another order (the first matching entry decides which app opens a URL)"
            ])
        let redirect = Self.check(fake, .init(status: 301, headers: [HTTPHeader("Location", "https://elsewhere/")]))
        #expect(redirect.state == .failed && redirect.failureDetails == "redirect to https://elsewhere/")
        // Unreachable: a timeout, and a CDN whose certificate does not verify, each with the error.
        let slow = Self.check(fake, .init(body: Self.served, delay: 2), timeout: .seconds(1))
        #expect(slow.state == .unreachable && slow.error?.contains("could not ask the CDN") == true, "\(slow)")
        let other = TemporaryDirectory("aasa-other-ca")
        let otherCA = try DevCertificateAuthority.loadOrCreate(directory: other.path + "/ca").certificatePath
        let untrusted = Self.comparison(fake, caFile: otherCA).compare(
            "shop.example", served: .init(association: Array(Self.served.utf8), assetLinks: nil, since: nil)
        ).apple
        #expect(untrusted.state == .unreachable && untrusted.hint?.contains("certificate") == true, "\(untrusted)")
    }

    static let assetLinks =
        #"[{"relation":["delegate_permission/common.handle_all_urls"],"target":{"namespace":"android_app","package_name":"com.example.app","sha256_cert_fingerprints":["14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5"]},"relation_extensions":{"delegate_permission/common.handle_all_urls":{"dynamic_app_link_components":[{"/":"/buy/*"}]}}}]"#

    static func google(fingerprint: String, rules: String) -> String {
        """
        {"statements": [{"source": {"web": {"site": "https://shop.example."}},
          "relation": "delegate_permission/common.handle_all_urls",
          "target": {"androidApp": {"packageName": "com.example.app", "certificate": {"sha256Fingerprint": "\(fingerprint)"}}},
          "relationExtensions": {"delegate_permission/common.handle_all_urls": {"dynamic_app_link_components": \(rules)}}}],
         "maxAge": "599.000s", "debugString": "ok"}
        """
    }

    /// Cache headers no CDN means: a negative `Age` is left out (with the largest `max-age`, their difference was past
    /// `Int`), a `max-age` past a year is read as a year, and Google's `maxAge` that is not a finite number is left
    /// out.
    @Test func cacheHeadersOutOfRangeAreLeftOutOrBounded() throws {
        let fake = try FakeEndpoint()
        let apple = Self.check(
            fake,
            .init(
                headers: [
                    HTTPHeader("Age", "-9223372036854775808"),
                    HTTPHeader("Cache-Control", "max-age=9223372036854775807"),
                ], body: Self.reordered))
        #expect(apple.state == .inSync && apple.age == nil)
        #expect(abs((apple.nextRefresh ?? .distantPast).timeIntervalSinceNow - 366 * 86_400) < 60, "\(apple)")
        var comparison = Self.comparison(fake)
        comparison.google = true
        let served = CDNComparison.Served(
            association: Array(Self.served.utf8), assetLinks: Array(Self.assetLinks.utf8), since: nil)
        fake.set("/a/v1/shop.example", .init(body: Self.served))
        let print = "14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5"
        for maxAge in ["1e999s", "nans", "-5s"] {
            let body = Self.google(fingerprint: print, rules: #"[{"/": "/buy/*"}]"#)
                .replacingOccurrences(of: "599.000s", with: maxAge)
            fake.set("google:shop.example", .init(body: body))
            let google = try #require(comparison.compare("shop.example", served: served).google)
            #expect(google.state == .inSync && google.nextRefresh == nil, "\(maxAge): \(google)")
        }
    }

    @Test func googlesStatementsAreComparedWithTheServedOnes() throws {
        let fake = try FakeEndpoint()
        fake.set("/a/v1/shop.example", .init(body: Self.served))
        var comparison = Self.comparison(fake)
        comparison.google = true
        let served = CDNComparison.Served(
            association: Array(Self.served.utf8), assetLinks: Array(Self.assetLinks.utf8), since: nil)
        let print = "14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5"
        fake.set("google:shop.example", .init(body: Self.google(fingerprint: print, rules: #"[{"/": "/buy/*"}]"#)))
        let inSync = try #require(comparison.compare("shop.example", served: served).google)
        #expect(inSync.state == .inSync, "\(inSync)")
        fake.set("google:shop.example", .init(body: Self.google(fingerprint: print, rules: #"[{"/": "/old/*"}]"#)))
        let stale = try #require(comparison.compare("shop.example", served: served).google)
        #expect(stale.state == .stale && stale.differences.contains { $0.hasPrefix("+com.example.app rules") })
        fake.set(
            "google:shop.example",
            .init(body: #"{"errorCode": ["ERROR_CODE_FETCH_ERROR"], "debugString": "Error: could not fetch"}"#))
        let failed = try #require(comparison.compare("shop.example", served: served).google)
        #expect(failed.state == .failed && failed.failureReason == "ERROR_CODE_FETCH_ERROR")
        fake.set("google:shop.example", .init(body: #"{"maxAge": "600s"}"#))
        #expect(try #require(comparison.compare("shop.example", served: served).google).state == .absent)
        // Google's own trouble is not the site's failure.
        fake.set("google:shop.example", .init(status: 503, body: #"{"error": {"message": "backend"}}"#))
        #expect(try #require(comparison.compare("shop.example", served: served).google).state == .unreachable)
        // A domain serving no assetlinks.json is not asked about.
        let appleOnly = CDNComparison.Served(association: Array(Self.served.utf8), assetLinks: nil, since: nil)
        #expect(comparison.compare("shop.example", served: appleOnly).google == nil)
    }

    @Test func theCommandReportsEveryDomainAndExitsByState() throws {
        let fake = try FakeEndpoint()
        let directory = TemporaryDirectory("aasa-cdn-cli")
        try directory.copy(RepositoryPaths.siteConfig, to: "site-config")
        let config = directory.path + "/site-config"
        let loaded = try SiteConfigLoader().loadAll(directory: config)
        for domain in loaded {
            fake.set(
                "/a/v1/\(domain.domain)",
                .init(body: String(decoding: try #require(domain.generated).bytes, as: UTF8.self)))
        }
        func run(_ extra: [String]) throws -> Command.Output {
            try Command.run(
                RepositoryPaths.executable,
                ["cdn", "--config", config, "--apple-cdn", fake.appleBase, "--cacert", fake.caFile] + extra,
                timeout: 60)
        }
        let synced = try run([])
        #expect(synced.status == 0, "\(synced.stdout)\(synced.stderr)")
        #expect(
            synced.stdout.contains("shop.example: Apple CDN in-sync")
                && synced.stdout.contains("links.example: Apple CDN in-sync"))
        fake.set(
            "/a/v1/links.example",
            .init(status: 404, headers: [HTTPHeader("Apple-Failure-Reason", "SWCERR00101 Bad HTTP Response: 403")]))
        let failed = try run(["--json", "links.example"])
        #expect(failed.status == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(failed.stdout.utf8)) as? [String: Any])
        let apple = try #require(object["apple"] as? [String: Any])
        #expect(apple["state"] as? String == "failed" && (apple["hint"] as? String)?.contains("AASA-Bot") == true)
        #expect(try run(["not a host"]).status == 2)
    }

    @Test func theServerChecksInTheBackgroundWithoutSlowingServing() throws {
        let fake = try FakeEndpoint()
        // Slow answers: the check waits for them, the public listener does not.
        let live = try LiveServer(configure: { configuration in
            var check = CDNMonitor.Settings()
            check.interval = .seconds(1)
            check.appleBase = fake.appleBase
            check.googleBase = fake.googleBase
            check.caFile = fake.caFile
            check.requestsPerSecond = 20
            configuration.cdnCheck = check
            configuration.removalGrace = .zero
        })
        let shop = try live.expectedFile("shop.example")
        fake.set("/a/v1/shop.example", .init(body: String(decoding: shop, as: UTF8.self), delay: 0.3))
        fake.set("/a/v1/links.example", .init(body: Self.older, delay: 0.3))
        var status: [String: Any] = [:]
        let deadline = TestTime.deadline(20)
        var served = 0
        repeat {
            #expect(try live.fetch("links.example").status == 200)
            served += 1
            status = try live.status()
            let domains = status["domains"] as? [String: Any]
            let shopState =
                ((domains?["shop.example"] as? [String: Any])?["cdn"] as? [String: Any])?["apple"] as? [String: Any]
            let linksState =
                ((domains?["links.example"] as? [String: Any])?["cdn"] as? [String: Any])?["apple"] as? [String: Any]
            if shopState?["state"] as? String == "in-sync", linksState?["state"] as? String == "stale" { break }
            usleep(100_000)
        } while Date() < deadline
        let domains = try #require(status["domains"] as? [String: Any])
        let links = try #require(
            ((domains["links.example"] as? [String: Any])?["cdn"] as? [String: Any])?["apple"] as? [String: Any])
        #expect(links["state"] as? String == "stale", "\(domains)")
        #expect((links["differences"] as? [String])?.isEmpty == false)
        #expect(links["publishedSince"] is String)
        let metrics = try HTTPProbe.get(port: live.admin, host: "127.0.0.1", path: "/metrics").text
        #expect(metrics.contains(#"aasa_apple_cdn_state{domain="links.example",state="stale"} 1"#), "\(metrics)")
        #expect(metrics.contains(#"aasa_apple_cdn_state{domain="shop.example",state="in-sync"} 1"#))
        #expect(metrics.contains(#"aasa_apple_cdn_last_check_timestamp_seconds{domain="shop.example"}"#))
        #expect(served > 3)

        // A reload hands the check only what changed: a domain gone is no longer checked, a new one is.
        try FileManager.default.removeItem(atPath: live.configDirectory + "/links.example")
        _ = try live.directory.write("site-config/new.example/site.json", #"{"webCredentials": ["ABCDE12345.com.x"]}"#)
        fake.set("/a/v1/new.example", .init(body: Self.older, delay: 0))
        live.server.reload()
        let reloaded = try HTTPProbe.get(port: live.admin, host: "127.0.0.1", path: "/metrics").text
        #expect(!reloaded.contains(#"aasa_apple_cdn_state{domain="links.example""#), "\(reloaded)")
        var newState: String?
        let newDeadline = TestTime.deadline(20)
        repeat {
            let domains = try live.status()["domains"] as? [String: Any]
            newState =
                (((domains?["new.example"] as? [String: Any])?["cdn"] as? [String: Any])?["apple"] as? [String: Any])?[
                    "state"] as? String
            if newState == "stale" { break }
            usleep(100_000)
        } while Date() < newDeadline
        #expect(newState == "stale")
    }

    /// A copy from the CDN whose comparison with the served file is as costly as a file within the pattern limits
    /// can make it (20 components `*a?`, `*a??`, …, whose product has about 2^20 states; before the budget a 20 KB
    /// answer exhausted 4 GB): compared within the reload's budget, in bounded memory, and reported as not compared.
    @Test func aHostileCopyIsComparedWithinTheBudget() throws {
        let fake = try FakeEndpoint()
        let components = (1...20).map { #"{"/":"*a\#(String(repeating: "?", count: $0))"}"# }
        let hostile =
            #"{"applinks":{"details":[{"appIDs":["ABCDE12345.com.example.app"],"components":["#
            + components.joined(separator: ",") + "]}]}}"
        @Sendable func resident() -> Int {
            let text = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
            let line = text.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
            return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
        }
        let baseline = resident()
        let peak = Atomic<Int>(baseline)
        let sampling = Atomic<Bool>(true)
        let sampler = Thread {
            while sampling.load(ordering: .relaxed) {
                peak.store(max(peak.load(ordering: .relaxed), resident()), ordering: .relaxed)
                usleep(10_000)
            }
        }
        sampler.start()
        let started = CPUTime.ofThisThread()
        let observation = Self.check(fake, .init(body: hostile), timeout: .seconds(30))
        let took = CPUTime.ofThisThread() - started
        sampling.store(false, ordering: .relaxed)
        #expect(observation.state == .stale)
        #expect(
            observation.urlChanges.contains { $0.contains("iOS 13+: not compared: too complex") },
            "\(observation.urlChanges)")
        let grown = peak.load(ordering: .relaxed) - baseline
        #expect(grown < 100 << 20, "the comparison grew the process by \(grown >> 20) MB")
        #expect(took < .seconds(30), "\(took)")
    }
}
