import AASACore
import AASAMicroHTTPD
import AASATestSupport
import Foundation
import Synchronization
import Testing

@testable import AASAServer

/// The admin routes of a real server's catalog, served on their own plain HTTP listener with a live view whose ACME
/// figures and retry outcomes the test chooses: what `/status`, `/metrics` and `POST /acme/retry` make of them.
final class ACMEAdminListener: @unchecked Sendable {
    static let token = "t0k-acme"
    static let bearer = ["Authorization: Bearer \(token)"]
    /// When the CA's pause ends, the last pending order's eta and the issuer of shop.example's certificate.
    static let pausedUntil = Date(timeIntervalSince1970: 1_796_112_000)  // 2026-12-01T08:00:00Z
    static let eta = Date(timeIntervalSince1970: 1_795_780_800)  // 2026-11-27T12:00:00Z
    static let issuer = "https://acme-v02.api.letsencrypt.org/directory"
    static let pauseReason =
        "urn:ietf:params:acme:error:rateLimited: too many new orders (https://ca.example/acme/new-order) <b>"

    /// Three pending, paused until ``pausedUntil``; shop.example second in the queue, links.example failed.
    static let figures = ACMEFigures(
        statuses: [
            "shop.example": {
                var status = DomainCertificateStatus(source: .acme, state: .pending)
                status.queuePosition = 2
                status.eta = eta
                status.issuer = issuer
                return status
            }(),
            "links.example": DomainCertificateStatus(
                source: .acme, state: .failed, lastError: "links.example does not point at this server"),
        ],
        orders: ["valid": 7, "failed": 2],
        queue: ACMEQueueStatus(
            pending: 3, ratePerHour: 100, pausedUntil: pausedUntil, pauseReason: pauseReason, etaSeconds: 345_600))

    let live: LiveServer
    let figures: Mutex<ACMEFigures>
    /// The domains `POST /acme/retry` passed on, in order.
    let retried = Mutex<[String]>([])
    private var listener: HTTPListener?
    var port: UInt16 { listener?.port ?? 0 }
    var base: String { "http://127.0.0.1:\(port)" }

    /// The outcome of a retry of each test domain; any other is unknown.
    static func outcome(_ domain: String, now: Date) -> ACMERetryOutcome {
        switch domain {
        case "shop.example": .queued(position: 2)
        case "fresh.example": .queued(position: nil)
        case "busy.example": .inProgress
        case "operator.example": .notManaged(reason: "operator.example is served with the operator's certificate")
        case "links.example": .tooManyFailures(until: now.addingTimeInterval(600))
        default: .unknownDomain
        }
    }

    init(figures: ACMEFigures = ACMEAdminListener.figures, acme: Bool = true) throws {
        live = try LiveServer(configure: { $0.watchForChanges = false })
        self.figures = Mutex(figures)
        var view = AdminRoutes.Live(recorder: TrafficRecorder())
        if acme {
            view.acme = { [self] in self.figures.withLock { $0 } }
            view.retryACME = { [self] domain in
                retried.withLock { $0.append(domain) }
                return Self.outcome(domain, now: Date())
            }
        }
        let routes = AdminRoutes(
            published: live.server.catalog.published, status: live.server.status, live: view,
            access: AdminAccess(token: Array(Self.token.utf8)))
        listener = try HTTPListener(
            configuration: ListenerConfiguration(port: 0, bindAddress: "127.0.0.1", tls: nil), routes: routes)
    }

    deinit { listener?.stop(timeout: .zero) }

    func request(_ path: String, method: String = "GET", headers: [String] = bearer, extra: [String] = []) throws
        -> CurlResponse
    {
        try Curl.request(base + path, method: method, headers: headers, extra: extra)
    }

    func json(_ path: String, method: String = "GET") throws -> (response: CurlResponse, value: [String: Any]) {
        let response = try request(path, method: method)
        let value = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
        return (response, try #require(value, "\(path): \(String(decoding: response.body, as: UTF8.self))"))
    }
}

@Suite(.serialized) struct ACMEAdminTests {
    @Test func statusShowsTheQueueTheOrderCountsAndEachDomainsPlaceEtaAndIssuer() throws {
        let admin = try ACMEAdminListener()
        let status = try admin.json("/status").value
        let acme = try #require(status["acme"] as? [String: Any])
        let queue = try #require(acme["queue"] as? [String: Any])
        #expect(queue["pending"] as? Int == 3)
        #expect(queue["ratePerHour"] as? Double == 100)
        #expect(queue["pausedUntil"] as? String == "2026-12-01T08:00:00.000Z")
        #expect(queue["pauseReason"] as? String == ACMEAdminListener.pauseReason)
        #expect(queue["etaSeconds"] as? Int == 345_600)
        #expect(Set(queue.keys) == ["pending", "ratePerHour", "pausedUntil", "pauseReason", "etaSeconds"])
        #expect(acme["orders"] as? [String: Int] == ["valid": 7, "failed": 2])

        let domains = try #require(status["domains"] as? [String: [String: Any]])
        let shop = try #require(domains["shop.example"]?["certificate"] as? [String: Any])
        #expect(shop["state"] as? String == "pending" && shop["source"] as? String == "acme")
        #expect(shop["queuePosition"] as? Int == 2)
        #expect(shop["eta"] as? String == "2026-11-27T12:00:00.000Z")
        #expect(shop["issuer"] as? String == ACMEAdminListener.issuer)
        // A domain not waiting has no place and no eta.
        let links = try #require(domains["links.example"]?["certificate"] as? [String: Any])
        #expect(links["queuePosition"] is NSNull && links["eta"] is NSNull && links["issuer"] is NSNull)

        // Nothing pending and no pacing: nulls, not zeros.
        admin.figures.withLock { $0.queue = ACMEQueueStatus() }
        let idle = try #require(try admin.json("/status").value["acme"] as? [String: Any])
        let idleQueue = try #require(idle["queue"] as? [String: Any])
        #expect(idleQueue["pending"] as? Int == 0)
        for key in ["ratePerHour", "pausedUntil", "pauseReason", "etaSeconds"] {
            #expect(idleQueue[key] is NSNull, "\(key)")
        }
        // Without ACME, no `acme` member at all.
        #expect(try admin.live.status()["acme"] == nil)
    }

    @Test func metricsGaugeThePendingOrdersAndThePause() throws {
        let admin = try ACMEAdminListener()
        let text = String(decoding: try admin.request("/metrics").body, as: UTF8.self)
        for line in [
            "# TYPE aasa_acme_queue_pending gauge", "aasa_acme_queue_pending 3",
            "# TYPE aasa_acme_paused gauge", "aasa_acme_paused 1",
            "# TYPE aasa_acme_paused_until_seconds gauge", "aasa_acme_paused_until_seconds 1796112000",
            "aasa_acme_orders_total{result=\"valid\"} 7",
        ] {
            #expect(text.split(separator: "\n").contains(Substring(line)), "\(line) in\n\(text)")
        }
        #expect(text.contains("# HELP aasa_acme_paused_until_seconds "))
        admin.figures.withLock { $0.queue = ACMEQueueStatus(pending: 0) }
        let idle = String(decoding: try admin.request("/metrics").body, as: UTF8.self).split(separator: "\n")
        #expect(idle.contains("aasa_acme_queue_pending 0"))
        #expect(idle.contains("aasa_acme_paused 0"))
        #expect(idle.contains("aasa_acme_paused_until_seconds 0"))
        // Without ACME, none of them.
        let off = try ACMEAdminListener(acme: false)
        #expect(!String(decoding: try off.request("/metrics").body, as: UTF8.self).contains("aasa_acme_"))
    }

    /// Each outcome of the manager, and each request refused before it is asked.
    @Test(arguments: [
        ("?domain=shop.example", 202, ["domain": "shop.example", "state": "queued", "queuePosition": "2"]),
        ("?domain=SHOP.example.", 202, ["domain": "shop.example", "state": "queued", "queuePosition": "2"]),
        ("?domain=fresh.example", 202, ["domain": "fresh.example", "state": "queued", "queuePosition": "null"]),
        ("?domain=busy.example", 202, ["domain": "busy.example", "state": "in-progress"]),
        (
            "?domain=nowhere.example", 404,
            ["domain": "nowhere.example", "error": "nowhere.example is not a configured"]
        ),
        ("?domain=operator.example", 409, ["state": "not-managed", "error": "served with the operator's"]),
        ("?domain=links.example", 429, ["state": "too-many-failures", "error": "retry after"]),
        ("", 400, ["error": "domain: missing"]),
        ("?domain=", 400, ["error": "domain: missing"]),
        ("?domain=shop.example%2F..%2Fx", 400, ["error": "domain=shop.example/../x: "]),
        ("?domain=-bad-.example", 400, ["error": "not a host name"]),
    ])
    func retryAnswersEachOutcome(query: String, status: Int, fields: [String: String]) throws {
        let admin = try ACMEAdminListener()
        let (response, value) = try admin.json("/acme/retry" + query, method: "POST")
        #expect(response.status == status, "\(query): \(value)")
        #expect(response.headers["content-type"] == "application/json")
        #expect(response.headers["cache-control"] == "no-store")
        for (key, expected) in fields {
            let actual = value[key].map { $0 is NSNull ? "null" : "\($0)" } ?? "<absent>"
            if key == "error" {
                #expect(actual.contains(expected), "\(query): \(key) = \(actual)")
            } else {
                #expect(actual == expected, "\(query): \(key) = \(actual)")
            }
        }
        // Only a well-formed name reaches the manager.
        let name = QueryString.value("domain", in: String(query.dropFirst()))?.lowercased()
        let reached = status == 400 ? [] : [name.map { $0.hasSuffix(".") ? String($0.dropLast()) : $0 } ?? ""]
        #expect(admin.retried.withLock { $0 } == reached, "\(query)")
    }

    @Test func aFailedNameAnswers429WithRetryAfterInSecondsAndTheTime() throws {
        let admin = try ACMEAdminListener()
        let before = Date()
        let (response, value) = try admin.json("/acme/retry?domain=links.example", method: "POST")
        #expect(response.status == 429)
        let seconds = try #require(response.headers["retry-after"].flatMap(Int.init))
        // 600 s from when the route asked, give or take the request's own time.
        #expect(seconds > 500 && seconds <= 601, "\(seconds)")
        let until = try #require((value["retryAfter"] as? String).flatMap(ServerStatus.makeFormatter().date(from:)))
        #expect(abs(until.timeIntervalSince(before) - 600) < 60, "\(until)")
        #expect((value["error"] as? String)?.contains(value["retryAfter"] as? String ?? "?") == true)
    }

    /// Who may retry: the token holder, by POST, from this listener's own page or a client that is not a browser;
    /// none of the refused requests reaches the manager.
    @Test func retryNeedsTheTokenAPostAndNoOtherSite() throws {
        let admin = try ACMEAdminListener()
        let path = "/acme/retry?domain=shop.example"
        let unauthorized = try admin.request(path, method: "POST", headers: [])
        #expect(unauthorized.status == 401)
        #expect(unauthorized.headers["www-authenticate"] == "Bearer")
        #expect(try admin.request(path, method: "POST", headers: ["Authorization: Bearer t0k-acmE"]).status == 401)
        for crossSite in ["Sec-Fetch-Site: cross-site", "Sec-Fetch-Site: same-site", "Origin: http://evil.example"] {
            #expect(
                try admin.request(path, method: "POST", headers: ACMEAdminListener.bearer + [crossSite]).status == 403,
                "\(crossSite)")
        }
        for method in ["GET", "HEAD", "PUT", "DELETE"] {
            #expect(try admin.request(path, method: method).status == 404, "\(method)")
        }
        // A body is refused before routing (the route takes none): 413.
        #expect(try admin.request(path, method: "POST", extra: ["--data", "domain=shop.example"]).status == 413)
        #expect(admin.retried.withLock { $0 }.isEmpty)
        // The dashboard's own request (same origin) is answered.
        let own = try admin.request(
            path, method: "POST",
            headers: ACMEAdminListener.bearer + ["Sec-Fetch-Site: same-origin", "Origin: \(admin.base)"])
        #expect(own.status == 202)
        #expect(admin.retried.withLock { $0 } == ["shop.example"])
    }

    @Test func withoutACMERetryAnswers409() throws {
        let admin = try ACMEAdminListener(acme: false)
        let (response, value) = try admin.json("/acme/retry?domain=shop.example", method: "POST")
        #expect(response.status == 409)
        #expect((value["error"] as? String)?.contains("--acme") == true, "\(value)")
    }

    /// The public listeners still answer POST with 405, now that it is a method of its own.
    @Test func thePublicListenersStillRefusePost() throws {
        let admin = try ACMEAdminListener()
        let answer = try admin.live.get("shop.example", "/.well-known/apple-app-site-association", method: "POST")
        #expect(answer.status == 405)
        #expect(answer.headers["allow"] == "GET, HEAD")
    }
}
