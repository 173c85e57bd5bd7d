import AASACore
import AASAMicroHTTPD
import AASATestSupport
import Foundation
import Synchronization
import Testing

@testable import AASAServer

/// The admin routes on a real plain HTTP listener with a test `api` handler that records what it was handed and
/// answers with what the test sets: what reaches the tenant API, and what never does.
final class APITransportListener: @unchecked Sendable {
    static let writeToken = "w-0123456789abcdef"
    static let readToken = "r-0123456789abcdef"
    static let tokens = [
        AdminToken(name: "ci-deploy", scope: .write, bytes: Array(writeToken.utf8)),
        AdminToken(name: "prometheus", scope: .read, bytes: Array(readToken.utf8)),
    ]

    /// What the handler was handed, in order.
    let received = Mutex<[APIRequest]>([])
    private var listener: HTTPListener?
    var port: UInt16 { listener?.port ?? 0 }
    var base: String { "http://127.0.0.1:\(port)" }

    /// `tokens` configured; `api` false leaves the live view without a handler.
    init(tokens: [AdminToken] = APITransportListener.tokens, api: Bool = true) throws {
        var view = AdminRoutes.Live(recorder: TrafficRecorder())
        if api {
            view.api = { [self] request in
                received.withLock { $0.append(request) }
                // Headers a browser would act on: the listener must remove them.
                return Response(
                    status: 200,
                    headers: [
                        HTTPHeader("Content-Type", "application/json"), HTTPHeader("Set-Cookie", "session=1"),
                        HTTPHeader("Access-Control-Allow-Origin", "*"), HTTPHeader("X-Handler", "api"),
                    ],
                    body: Array("{\"ok\": true}\n".utf8))
            }
        }
        let routes = AdminRoutes(live: view, access: AdminAccess(tokens: tokens))
        listener = try HTTPListener(
            configuration: ListenerConfiguration(port: 0, bindAddress: "127.0.0.1", tls: nil, logHandler: { _ in }),
            routes: routes)
    }

    deinit { listener?.stop(timeout: .zero) }

    func request(_ path: String, method: String = "GET", headers: [String] = [], extra: [String] = []) throws
        -> CurlResponse
    {
        try Curl.request(base + path, method: method, headers: headers, extra: extra)
    }

    var handled: Int { received.withLock { $0.count } }
}

/// The tenant API's transport: who reaches the handler (a token always, any scope, never cross-site), what it is
/// handed (method, raw path and query, headers, the body byte for byte, the caller), and the body caps.
@Suite(.serialized) struct AdminAPITransportTests {
    static let write = ["Authorization: Bearer \(APITransportListener.writeToken)"]
    static let read = ["Authorization: Bearer \(APITransportListener.readToken)"]

    /// Without a token configured the API does not exist (404), even though the other routes are open then.
    @Test func withoutATokenConfiguredTheAPIIs404() throws {
        let listener = try APITransportListener(tokens: [])
        for path in ["/api/v1/domains", "/api/v1/openapi.json", "/api/v1/"] {
            #expect(try listener.request(path).status == 404, "\(path)")
            #expect(try listener.request(path, headers: Self.write).status == 404, "\(path)")
        }
        #expect(try listener.request("/traffic").status == 200, "the other routes stay open without a token")
        #expect(listener.handled == 0)
    }

    @Test func withoutAHandlerTheAPIIs404() throws {
        let listener = try APITransportListener(api: false)
        #expect(try listener.request("/api/v1/domains", headers: Self.write).status == 404)
        #expect(try listener.request("/api/v1/domains").status == 401)
    }

    /// Without a known token: 401 with `WWW-Authenticate: Bearer`; cross-site: 403, whatever the token; the
    /// handler never runs for either.
    @Test(
        arguments: [
            ([], 401), (["Authorization: Bearer w-0123456789abcdeF"], 401),
            (["Authorization: Bearer w-0123456789abcde"], 401), (["Authorization: Basic dzp4"], 401),
            (["Authorization: Bearer \(APITransportListener.writeToken)", "Sec-Fetch-Site: cross-site"], 403),
            (["Authorization: Bearer \(APITransportListener.readToken)", "Origin: https://evil.example"], 403),
            (["Authorization: Bearer \(APITransportListener.writeToken)", "Sec-Fetch-Site: same-site"], 403),
            (["Authorization: Bearer \(APITransportListener.writeToken)", "Host: evil.example"], 421),
        ] as [([String], Int)])
    func callersWithoutATokenOrFromAnotherSiteNeverReachTheHandler(headers: [String], status: Int) throws {
        let listener = try APITransportListener()
        for (method, path) in [("GET", "/api/v1/domains"), ("DELETE", "/api/v1/domains/shop.example")] {
            let answer = try listener.request(path, method: method, headers: headers)
            #expect(answer.status == status, "\(method) \(path) \(headers)")
            if status == 401 { #expect(answer.headers["www-authenticate"] == "Bearer") }
        }
        #expect(listener.handled == 0)
    }

    /// A PUT's body reaches the handler byte for byte, with the raw path and query, the headers the API reads and
    /// the caller's name and scope; the answer carries no cookie and no CORS header.
    @Test func aPutBodyReachesTheHandlerWithItsHeadersAndCaller() throws {
        let listener = try APITransportListener()
        let directory = TemporaryDirectory("aasa-api-body")
        let body =
            Array("{\"applinks\": {\"details\": []}, \"bytes\": \"\u{0}\u{7f}é\"}\n".utf8)
            + (0..<300).map { UInt8(truncatingIfNeeded: $0) }
        let file = try directory.write("site.json", "")
        try Data(body).write(to: URL(fileURLWithPath: file))
        let answer = try listener.request(
            "/api/v1/domains/shop.example?dryRun=true&x=%2F", method: "PUT",
            headers: Self.write + [
                "If-Match: \"r12\"", "If-None-Match: *", "Idempotency-Key: key-1", "Content-Type: application/json",
                "Sec-Fetch-Site: same-origin",
            ], extra: ["--data-binary", "@\(file)"])
        #expect(answer.status == 200, "\(answer.text) \(answer.error)")
        #expect(answer.headers["x-handler"] == "api")
        #expect(answer.headers["set-cookie"] == nil)
        #expect(!answer.headers.keys.contains { $0.hasPrefix("access-control-") })
        let request = try #require(listener.received.withLock { $0.first })
        #expect(request.method == .put)
        #expect(request.path == "/api/v1/domains/shop.example")
        #expect(request.rawQuery == "dryRun=true&x=%2F")
        #expect(request.ifMatch == "\"r12\"")
        #expect(request.ifNoneMatch == "*")
        #expect(request.idempotencyKey == "key-1")
        #expect(request.contentType == "application/json")
        #expect(request.body == body)
        #expect(request.caller == AdminCaller(name: "ci-deploy", scope: .write))
    }

    /// Each token is told apart: a read token reaches the handler too (its scope is the handler's to check), as
    /// the holder it names. A method the API does not take reaches it too (the API answers 405); with a body, the
    /// listener answers that 405 on the head, before the body.
    @Test func theCallerIsTheTokenThatWasPresented() throws {
        let listener = try APITransportListener()
        #expect(try listener.request("/api/v1/openapi.json", headers: Self.read).status == 200)
        #expect(try listener.request("/api/v1/domains/a.example", method: "DELETE", headers: Self.write).status == 200)
        #expect(try listener.request("/api/v1/domains", method: "PATCH", headers: Self.write).status == 200)
        let client = try RawClient(port: listener.port)
        client.send(
            "PATCH /api/v1/domains HTTP/1.1\r\nHost: localhost\r\n\(Self.write[0])\r\nContent-Length: 5\r\n"
                + "Expect: 100-continue\r\n\r\n")
        let refused = client.readAll()
        #expect(refused.hasPrefix("HTTP/1.1 405 ") && refused.contains("Allow: GET, HEAD"), "\(refused)")
        let requests = listener.received.withLock { $0 }
        #expect(
            requests.map(\.caller) == [
                AdminCaller(name: "prometheus", scope: .read), AdminCaller(name: "ci-deploy", scope: .write),
                AdminCaller(name: "ci-deploy", scope: .write),
            ])
        #expect(requests.map(\.method) == [.get, .delete, .other])
        #expect(requests.map(\.path) == ["/api/v1/openapi.json", "/api/v1/domains/a.example", "/api/v1/domains"])
        #expect(requests.allSatisfy { $0.body.isEmpty && $0.rawQuery == nil && $0.ifMatch == nil })
    }

    /// The caps: a site.json of 1 MiB, a page of the page cap; no body anywhere else, nor from a caller without a
    /// token. Decided from the head: a client that waits for `100 Continue` gets the 413 without sending a byte.
    @Test(arguments: [
        ("PUT", "/api/v1/domains/shop.example", SiteConfigLoader.maximumConfigBytes),
        ("PUT", "/api/v1/domains/shop.example/pages/index.html", PageLoader().maximumFileBytes),
        ("PUT", "/api/v1/domains/shop.example/pages/a/b/icon.png", PageLoader().maximumFileBytes),
        ("PUT", "/api/v1/domains/shop.example/pages/_landing.html", PageLoader().maximumTemplateBytes),
        ("PUT", "/api/v1/domains/shop.example/pages/a/_landing.html", PageLoader().maximumFileBytes),
        ("POST", "/api/v1/domains/shop.example/history/r1/restore", 0), ("PUT", "/api/v1/domains/", 0),
        ("PUT", "/api/v1/domains/shop.example/pages/", 0), ("PUT", "/api/v1/domains/shop.example/status", 0),
        ("GET", "/api/v1/domains/shop.example", 0), ("PUT", "/status", 0), ("POST", "/acme/retry", 0),
    ])
    func aBodyOverTheCapGets413BeforeItIsSent(method: String, path: String, cap: Int) throws {
        #expect(AdminRoutes(live: nil).maximumBodyBytes(method: RequestMethod(method), path: path) == cap)
        let listener = try APITransportListener()
        // Over the cap (or any body where there is none), announced and never sent: 413 at once.
        let client = try RawClient(port: listener.port)
        client.send(
            "\(method) \(path) HTTP/1.1\r\nHost: localhost\r\n\(Self.write[0])\r\nContent-Length: \(cap + 1)\r\n"
                + "Expect: 100-continue\r\n\r\n")
        let answer = client.readAll()
        // A method the API's route does not answer is told so first, on the head: 405 with its Allow.
        let refusedMethod = path == "/api/v1/domains/shop.example/status"
        #expect(answer.hasPrefix(refusedMethod ? "HTTP/1.1 405 " : "HTTP/1.1 413 "), "\(answer)")
        #expect(!answer.contains("100 Continue"))
        if cap > 0 {
            // At the cap the client is told to continue; without a token it is told so (401), before its body's size
            // is considered and without reading a byte of it; a cross-site caller likewise (403).
            let within = try RawClient(port: listener.port)
            within.send(
                "\(method) \(path) HTTP/1.1\r\nHost: localhost\r\n\(Self.write[0])\r\nContent-Length: \(cap)\r\n"
                    + "Expect: 100-continue\r\n\r\n")
            #expect(within.readResponse().hasPrefix("HTTP/1.1 100 Continue"))
            let stranger = try RawClient(port: listener.port)
            stranger.send(
                "\(method) \(path) HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
            let refused = stranger.readAll()
            #expect(refused.hasPrefix("HTTP/1.1 401 "), "\(refused)")
            #expect(refused.contains("WWW-Authenticate: Bearer") && !refused.contains("100 Continue"), "\(refused)")
            let oversized = try RawClient(port: listener.port)
            oversized.send(
                "\(method) \(path) HTTP/1.1\r\nHost: localhost\r\nContent-Length: \(cap + 1)\r\n\r\n")
            #expect(oversized.readAll().hasPrefix("HTTP/1.1 401 "), "no token: 401 whatever the body's size")
            let crossSite = try RawClient(port: listener.port)
            crossSite.send(
                "\(method) \(path) HTTP/1.1\r\nHost: localhost\r\n\(Self.write[0])\r\nSec-Fetch-Site: cross-site\r\n"
                    + "Content-Length: 5\r\n\r\n")
            #expect(crossSite.readAll().hasPrefix("HTTP/1.1 403 "), "a cross-site caller: 403 before its body")
        }
        #expect(listener.handled == 0)
    }
}

extension RequestMethod {
    /// The method named by its token.
    init(_ name: String) {
        switch name {
        case "GET": self = .get
        case "HEAD": self = .head
        case "POST": self = .post
        case "PUT": self = .put
        case "DELETE": self = .delete
        default: self = .other
        }
    }
}
