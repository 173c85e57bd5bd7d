import AASACore
import AASATestSupport
import Foundation
import Synchronization
import Testing

@testable import AASAMicroHTTPD

/// A router that takes a body of at most `limit` bytes on `PUT`/`POST /upload`, and reports what it got: the
/// method, the byte count and the body's SHA-256; every other path takes none (the default cap).
struct UploadRoutes: RouteTable {
    let preparedResponses: [PreparedResponse] = []
    let limit: Int
    /// Requests routed to `/upload`, to show that a refused body never reaches the router.
    let uploads = Counter()

    final class Counter: Sendable {
        let value = Atomic<Int>(0)
    }

    func maximumBodyBytes(method: RequestMethod, path: String) -> Int {
        path == "/upload" && (method == .put || method == .post) ? limit : 0
    }

    func route(_ request: some HTTPRequest) -> RouteDecision {
        let path = request.withPath { String(decoding: $0, as: UTF8.self) }
        guard path == "/upload" else {
            return .dynamic(Response(status: 200, body: Array("\(path) body=\(request.body.count)\n".utf8)))
        }
        uploads.value.add(1, ordering: .relaxed)
        let text = "method=\(request.methodName)\ncount=\(request.body.count)\nsha256=\(SHA256.hex(request.body))\n"
        return .dynamic(Response(status: 200, body: Array(text.utf8)))
    }
}

/// Request bodies on a real listener: read only where the route table allows one, never beyond its cap, refused
/// with 413 before a byte is read when the head announces too many, or as soon as a chunked body passes the cap.
@Suite struct RequestBodyTests {
    static let limit = 100_000

    func listener(routes: UploadRoutes, headerTimeout: Duration = .seconds(10), tls: TLSConfiguration? = nil)
        throws -> HTTPListener
    {
        var configuration = testConfiguration(tls: tls)
        configuration.headerTimeout = headerTimeout
        return try HTTPListener(configuration: configuration, routes: routes)
    }

    /// Bytes of every value (NUL included) in a file, for curl to send.
    static func bodyFile(_ count: Int, in directory: String) -> (path: String, bytes: [UInt8]) {
        let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 8) }
        let path = directory + "/body-\(count)"
        #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
        return (path, bytes)
    }

    @Test(arguments: [
        (false, false, "PUT"), (false, true, "PUT"), (true, false, "PUT"), (true, true, "POST"),
    ])
    func aBodyWithinTheCapReachesTheRouteByteForByte(tls: Bool, chunked: Bool, method: String) throws {
        let pki = try TestPKI()
        let table = try CertificateTable(entries: [try pki.entry(["a.test"]).entry])
        let routes = UploadRoutes(limit: Self.limit)
        let listener = try listener(routes: routes, tls: tls ? TLSConfiguration(certificates: table) : nil)
        defer { listener.stop(timeout: .zero) }
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Exactly the cap, and a small one.
        for count in [Self.limit, 3] {
            let body = Self.bodyFile(count, in: directory)
            let result = try curl(
                "/upload", port: listener.port, host: "a.test", tls: tls, caPath: tls ? pki.caPath : nil,
                extra: ["-X", method, "--data-binary", "@\(body.path)"]
                    + (chunked ? ["-H", "Transfer-Encoding: chunked"] : []))
            let fields = echoFields(splitResponse(result.output).body)
            #expect(fields["method"] == method, "\(result.output.prefix(200)) \(result.error)")
            #expect(fields["count"] == "\(count)")
            #expect(fields["sha256"] == SHA256.hex(body.bytes))
        }
    }

    /// The body's bytes are the request's own: the next request on the connection has none, and is answered.
    @Test func theNextRequestOnTheConnectionHasNoBody() throws {
        let listener = try listener(routes: UploadRoutes(limit: Self.limit))
        defer { listener.stop(timeout: .zero) }
        let client = try RawClient(port: listener.port)
        client.send("PUT /upload HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello")
        let first = client.readResponse()
        #expect(first.contains("count=5"), "\(first)")
        client.send("GET /other HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
        let second = client.readAll()
        #expect(second.hasPrefix("HTTP/1.1 200 "), "\(second)")
        #expect(second.contains("/other body=0"), "\(second)")
    }

    /// A `Content-Length` over the cap is refused before the client sends a byte of the body: a client that waits
    /// for `100 Continue` gets the 413 instead, and the router never sees the request.
    @Test(arguments: [false, true])
    func aContentLengthOverTheCapGets413BeforeTheBodyIsSent(expectContinue: Bool) throws {
        let routes = UploadRoutes(limit: Self.limit)
        let listener = try listener(routes: routes)
        defer { listener.stop(timeout: .zero) }
        let client = try RawClient(port: listener.port)
        client.send(
            "PUT /upload HTTP/1.1\r\nHost: a\r\nContent-Length: \(Self.limit + 1)\r\n"
                + (expectContinue ? "Expect: 100-continue\r\n" : "") + "\r\n")
        let answer = client.readAll()
        #expect(answer.hasPrefix("HTTP/1.1 413 "), "\(answer)")
        #expect(!answer.contains("100 Continue"))
        #expect(answer.contains("over the \(Self.limit) bytes PUT accepts"), "\(answer)")
        #expect(routes.uploads.value.load(ordering: .relaxed) == 0)
        // Within the cap, the client that waits is told to continue.
        let within = try RawClient(port: listener.port)
        within.send("PUT /upload HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
        #expect(within.readResponse().hasPrefix("HTTP/1.1 100 Continue"))
        within.send("hello")
        #expect(within.readResponse().contains("count=5"))
    }

    /// A chunked body announces no length: it is refused as soon as it passes the cap, while the client is still
    /// sending, and the router never sees it.
    @Test func aChunkedBodyGets413AsSoonAsItPassesTheCap() throws {
        let routes = UploadRoutes(limit: 1000)
        let listener = try listener(routes: routes)
        defer { listener.stop(timeout: .zero) }
        let client = try RawClient(port: listener.port)
        client.send("PUT /upload HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n")
        let chunk = String(repeating: "x", count: 600)
        client.send("258\r\n\(chunk)\r\n")  // 600 bytes: within the cap
        client.send("258\r\n\(chunk)\r\n")  // 1,200: past it; no final chunk is ever sent
        let answer = client.readAll()
        #expect(answer.hasPrefix("HTTP/1.1 413 "), "\(answer)")
        #expect(answer.contains("over the 1000 bytes PUT accepts"), "\(answer)")
        #expect(client.isClosed(within: 2))
        #expect(routes.uploads.value.load(ordering: .relaxed) == 0)
    }

    /// The same over HTTPS, where the refusal is written through the TLS session, with curl as the client.
    @Test func aChunkedBodyPastTheCapGets413OverHTTPS() throws {
        let pki = try TestPKI()
        let table = try CertificateTable(entries: [try pki.entry(["a.test"]).entry])
        let listener = try listener(routes: UploadRoutes(limit: 1000), tls: TLSConfiguration(certificates: table))
        defer { listener.stop(timeout: .zero) }
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let body = Self.bodyFile(200_000, in: directory)
        let result = try curl(
            "/upload", port: listener.port, host: "a.test", tls: true, caPath: pki.caPath,
            extra: ["-X", "PUT", "-H", "Transfer-Encoding: chunked", "--data-binary", "@\(body.path)"])
        #expect(result.output.hasPrefix("HTTP/1.1 413 "), "\(result.output.prefix(200)) \(result.error)")
        #expect(result.output.contains("over the 1000 bytes PUT accepts"))
    }

    /// A route that allows no body keeps refusing every body before reading it, as the public routes do.
    @Test(arguments: [
        "PUT /other HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello",
        "PUT /other HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
        "GET /upload HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello",
        // A transfer coding other than chunked never has a length the listener can find.
        "PUT /upload HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\nhello",
    ])
    func aRouteThatAllowsNoBodyGets413(request: String) throws {
        let routes = UploadRoutes(limit: Self.limit)
        let listener = try listener(routes: routes)
        defer { listener.stop(timeout: .zero) }
        let client = try RawClient(port: listener.port)
        client.send(request)
        let answer = client.readAll()
        #expect(answer.hasPrefix("HTTP/1.1 413 "), "\(answer)")
        #expect(answer.contains("request bodies are not accepted"))
        #expect(client.isClosed(within: 2))
        #expect(routes.uploads.value.load(ordering: .relaxed) == 0)
    }

    /// A body the route accepts has the header deadline again to arrive whole: a client that trickles it, however
    /// actively (the idle timeout never fires), is closed at that deadline (1 s here, the body would take 60 s).
    @Test func aTricklingBodyIsClosedAtTheDeadline() throws {
        let listener = try listener(routes: UploadRoutes(limit: Self.limit), headerTimeout: .seconds(1))
        defer { listener.stop(timeout: .zero) }
        let client = try RawClient(port: listener.port)
        let start = Date()
        client.send("PUT /upload HTTP/1.1\r\nHost: a\r\nContent-Length: 200\r\n\r\n")
        var closed = false
        while Date().timeIntervalSince(start) < 20 {
            if !client.send("x") || client.isClosed(within: 0.3) {
                closed = true
                break
            }
        }
        let elapsed = Date().timeIntervalSince(start)
        #expect(closed)
        // The deadline is 1 s (the reaper looks every 0.25 s); the idle timeout (5 s) would never fire.
        #expect(elapsed < 4.5, "closed after \(elapsed) s")
    }
}
