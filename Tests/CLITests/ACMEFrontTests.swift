import AASATestSupport
import Foundation
import Testing

/// The ACME front of the tests (`Tests/Tools/acme-front.py`) in front of Debian's pebble: it passes pebble through
/// unchanged, adds what pebble lacks (a new-order rate limit, profiles, a pause, failing orders) and counts.
@Suite(.serialized) struct ACMEFrontTests {
    /// A flattened JWS whose payload is `payload`: the front reads the payload and does not check signatures (pebble
    /// refuses the request if it is forwarded, which the front still counts as a forwarded new order).
    static func newOrderBody(_ payload: String) -> String {
        let encoded = Data(payload.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        return #"{"protected":"e30","payload":"\#(encoded)","signature":"AA"}"#
    }

    static func postNewOrder(_ front: ACMEFront, payload: String) throws -> CurlResponse {
        try Curl.request(
            "https://127.0.0.1:\(front.port)/order-plz", method: "POST",
            headers: ["Content-Type: application/jose+json"], caFile: front.caFile,
            extra: ["--data-binary", newOrderBody(payload)])
    }

    @Test func theDirectoryThroughTheFrontNamesTheFrontAndListsItsProfiles() throws {
        try #require(Pebble.isInstalled, "install pebble: scripts/setup.sh --test")
        let pebble = try Pebble(httpPort: freePort())
        let front = try ACMEFront(pebble: pebble, profiles: ["classic": "the default", "tlsserver": "45 days"])
        let answer = try Curl.request(front.directoryURL, caFile: front.caFile)
        #expect(answer.status == 200, "\(answer.error)\n\(front.log)")
        let directory = try #require(try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any])
        let base = "https://127.0.0.1:\(front.port)/"
        for resource in ["newNonce", "newAccount", "newOrder", "revokeCert", "keyChange"] {
            let url = try #require(directory[resource] as? String, "\(resource) in \(answer.text)")
            #expect(url.hasPrefix(base), "\(resource): \(url)")
        }
        let meta = try #require(directory["meta"] as? [String: Any])
        #expect(meta["profiles"] as? [String: String] == ["classic": "the default", "tlsserver": "45 days"])
        // pebble's own directory lists none.
        let plain = try Curl.request(pebble.directoryURL, caFile: pebble.caFile)
        #expect(plain.status == 200 && !plain.text.contains("profiles"), "\(plain.text)")
        let nonce = try Curl.request(base + "nonce-plz", method: "HEAD", caFile: front.caFile)
        #expect(nonce.status == 200 && !(nonce.headers["replay-nonce"] ?? "").isEmpty, "\(nonce.rawHeaders)")
        #expect(try front.stats().requests == 2)
    }

    /// What the front does to a new order, by its state.
    struct Refusal: Sendable, CustomTestStringConvertible {
        var name: String
        /// Front options: the rate (orders per seconds) and profiles.
        var rate: (count: Int, seconds: Int)?
        var profiles: [String: String] = [:]
        /// Turned on after the front started.
        var pauseSeconds: Int?
        var failOrders = false
        /// New orders the front forwards before refusing.
        var forwarded: Int
        var payload = #"{"identifiers":[{"type":"dns","value":"a.example"}]}"#
        var status: Int
        var type: String
        /// The bounds of `Retry-After`, when the refusal has one.
        var retryAfter: ClosedRange<Int>?
        var testDescription: String { name }
    }

    static let refusals: [Refusal] = [
        Refusal(
            name: "the bucket: 2 per 60 s, the third waits about 30 s", rate: (2, 60), forwarded: 2, status: 429,
            type: "rateLimited", retryAfter: 20...30),
        Refusal(
            name: "a pause: every order waits until it ends", pauseSeconds: 120, forwarded: 0, status: 429,
            type: "rateLimited", retryAfter: 100...120),
        Refusal(name: "failing orders", failOrders: true, forwarded: 0, status: 500, type: "serverInternal"),
        Refusal(
            name: "a profile the directory does not list", profiles: ["classic": "c"], forwarded: 0,
            payload: #"{"identifiers":[],"profile":"nope"}"#, status: 400, type: "invalidProfile"),
    ]

    @Test(arguments: refusals) func theFrontRefusesANewOrderWithAProblemAndAFreshNonce(_ refusal: Refusal) throws {
        try #require(Pebble.isInstalled, "install pebble: scripts/setup.sh --test")
        let pebble = try Pebble(httpPort: freePort())
        let front = try ACMEFront(pebble: pebble, rate: refusal.rate, profiles: refusal.profiles)
        if let seconds = refusal.pauseSeconds { try front.pause(seconds: seconds) }
        if refusal.failOrders { try front.failOrders(true) }
        for _ in 0..<refusal.forwarded {
            let passed = try Self.postNewOrder(front, payload: refusal.payload)
            // Forwarded: pebble itself refuses the unsigned request.
            #expect(passed.status != 429 && passed.text.contains("urn:ietf:params:acme:error:"), "\(passed.text)")
        }
        let refused = try Self.postNewOrder(front, payload: refusal.payload)
        #expect(refused.status == refusal.status, "\(refused.text)\n\(front.log)")
        #expect(refused.headers["content-type"] == "application/problem+json")
        let problem = try #require(try JSONSerialization.jsonObject(with: Data(refused.body)) as? [String: Any])
        #expect(problem["type"] as? String == "urn:ietf:params:acme:error:" + refusal.type)
        #expect(problem["status"] as? Int == refusal.status)
        #expect(!(refused.headers["replay-nonce"] ?? "").isEmpty, "\(refused.rawHeaders)")
        if let bounds = refusal.retryAfter {
            let seconds = try #require(Int(refused.headers["retry-after"] ?? ""), "\(refused.rawHeaders)")
            #expect(bounds.contains(seconds), "Retry-After \(seconds)")
        } else {
            #expect(refused.headers["retry-after"] == nil)
        }
        let stats = try front.stats()
        #expect(stats.newOrders == refusal.forwarded)
        #expect(stats.rateLimited == (refusal.status == 429 ? 1 : 0))
        // Nothing refused reached pebble: it logs each order it added, and added none (the forwarded ones were
        // unsigned).
        #expect(!pebble.log.contains("Added order"))
        if refusal.failOrders {
            try front.failOrders(false)
            #expect(try Self.postNewOrder(front, payload: refusal.payload).status != 500)
        }
    }

    @Test func theFrontCountsEachOrdersProfileAndReplaces() throws {
        try #require(Pebble.isInstalled, "install pebble: scripts/setup.sh --test")
        let pebble = try Pebble(httpPort: freePort())
        let front = try ACMEFront(pebble: pebble, profiles: ["classic": "c", "tlsserver": "t"])
        for payload in [
            #"{"identifiers":[],"profile":"tlsserver"}"#, #"{"identifiers":[],"replaces":"aki.serial"}"#,
            #"{"identifiers":[]}"#,
        ] {
            _ = try Self.postNewOrder(front, payload: payload)
        }
        let stats = try front.stats()
        #expect(stats.newOrders == 3)
        #expect(stats.profiles == ["tlsserver", nil, nil])
        #expect(stats.replaces == [nil, "aki.serial", nil])
    }

    @Test func aDelayHoldsTheRequestsUnderItsPathOnly() throws {
        try #require(Pebble.isInstalled, "install pebble: scripts/setup.sh --test")
        let pebble = try Pebble(httpPort: freePort())
        let front = try ACMEFront(pebble: pebble)
        try front.delay(pathPrefix: "/dir", seconds: 2)
        func seconds(_ path: String) throws -> Double {
            let start = Date()
            let answer = try Curl.request("https://127.0.0.1:\(front.port)\(path)", caFile: front.caFile)
            #expect(answer.status == 200, "\(path): \(answer.status) \(answer.error)")
            return Date().timeIntervalSince(start)
        }
        #expect(try seconds("/dir") >= 1.9)
        // Another path is not held (pebble answers in milliseconds; a held one takes the full 2 s).
        let start = Date()
        _ = try Curl.request("https://127.0.0.1:\(front.port)/nonce-plz", method: "HEAD", caFile: front.caFile)
        #expect(Date().timeIntervalSince(start) < 1.9)
        try front.delay(pathPrefix: "/dir", seconds: 0)
        #expect(try seconds("/dir") < 1.9)
    }

    @Test func aRealClientThroughTheFrontGetsACertificateAndMeetsTheLimit() throws {
        try #require(Pebble.isInstalled, "install pebble: scripts/setup.sh --test")
        let directory = TemporaryDirectory("aasa-acme-front")
        let httpPort = freePort()
        let pebble = try Pebble(httpPort: httpPort)
        // One order per ten minutes: the first domain is issued, the second meets the limit.
        let front = try ACMEFront(pebble: pebble, rate: (1, 600))
        try directory.copy(RepositoryPaths.siteConfig, to: "site-config")
        let result = try Command.run(
            RepositoryPaths.executable,
            [
                "certs", "acme", "--standalone", "--http-port", "\(httpPort)", "--acme-agree-tos", "--acme-directory",
                front.directoryURL, "--acme-ca-file", front.caFile, "--config", directory.path + "/site-config",
                "--certs", directory.path + "/certs",
            ], currentDirectory: directory.path, timeout: 120)
        #expect(result.status == 1, "\(result.stdout)\n\(result.stderr)")
        let issued = ["links.example", "shop.example"].filter {
            FileManager.default.fileExists(atPath: directory.path + "/certs/\($0)/fullchain.pem")
        }
        #expect(issued.count == 1, "\(result.stdout)\n\(result.stderr)\n\(front.log)")
        #expect(result.stderr.contains("[rateLimited]"), "\(result.stderr)")
        let stats = try front.stats()
        #expect(stats.newOrders == 1 && stats.rateLimited == 1, "\(stats)")
        #expect(stats.newAccounts >= 1)
        // pebble saw the one order the front let through.
        #expect(pebble.log.components(separatedBy: "Added order").count - 1 == 1, "\(pebble.log)")
    }
}
