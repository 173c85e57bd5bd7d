import AASACore
import AASATestSupport
import Foundation
import Testing

@testable import AASAMicroHTTPD

/// Limits against hostile clients, on a real listener: bodies (413), oversized heads (414/431) and the
/// request-head deadline that defeats trickling (slowloris) clients.
@Suite struct ListenerLimitsTests {
    func listener(
        headerTimeout: Duration = .seconds(10), tls: TLSConfiguration? = nil,
        lingering: Duration = LingeringClose.duration
    ) throws -> HTTPListener {
        var configuration = testConfiguration(tls: tls)
        configuration.headerTimeout = headerTimeout
        configuration.lingeringDuration = lingering
        return try HTTPListener(configuration: configuration, routes: TestRoutes(helloBody: "hello"))
    }

    @Test(arguments: [
        "POST /hello HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello",
        "PUT /hello HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
        "GET /hello HTTP/1.1\r\nHost: a\r\nContent-Length: 100000000\r\n\r\n",
    ])
    func aRequestThatAnnouncesABodyGets413AndTheConnectionCloses(request: String) throws {
        let listener = try listener()
        let client = try RawClient(port: listener.port)
        client.send(request)
        let answer = client.readAll()
        #expect(answer.hasPrefix("HTTP/1.1 413 "), "\(answer)")
        #expect(answer.contains("request bodies are not accepted"))
        #expect(client.isClosed(within: 2))
    }

    /// libmicrohttpd hands the target over as a C string: without the check, these would be routed as `/hello`.
    @Test(arguments: [
        "GET /hello\u{0}.png HTTP/1.1\r\nHost: a\r\n\r\n",
        "GET /hello\u{0}/../../secret HTTP/1.1\r\nHost: a\r\n\r\n",
        "GET /echo?q=1\u{0}&admin=1 HTTP/1.1\r\nHost: a\r\n\r\n",
    ])
    func aTargetHidingBytesBehindANULGets400(request: String) throws {
        let listener = try listener()
        let answer = String(decoding: try rawExchange(port: listener.port, request: request), as: UTF8.self)
        #expect(answer.hasPrefix("HTTP/1.1 400 "), "\(answer.prefix(80))")
        #expect(answer.contains("NUL byte"))
    }

    @Test(arguments: [
        "GET /hello HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
        "GET /echo?a=%41+b&c=&&d HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
        "GET /echo? HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
        "GET /echo HTTP/1.0\r\n\r\n",
    ])
    func ordinaryTargetsAreNotMistakenForHiddenBytes(request: String) throws {
        let listener = try listener()
        let answer = String(decoding: try rawExchange(port: listener.port, request: request), as: UTF8.self)
        #expect(answer.hasPrefix("HTTP/1.1 200 "), "\(answer.prefix(80))")
    }

    @Test func aZeroContentLengthIsNoBody() throws {
        let listener = try listener()
        let answer = String(
            decoding: try rawExchange(
                port: listener.port,
                request: "GET /hello HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"),
            as: UTF8.self)
        #expect(answer.hasPrefix("HTTP/1.1 200 "), "\(answer)")
    }

    @Test func headersBeyondTheLimitGet431AndARequestLineBeyondItGets414() throws {
        let listener = try listener()  // the default limit: 16 KiB
        let big = String(repeating: "a", count: 20_000)
        let headers = String(
            decoding: try rawExchange(
                port: listener.port, request: "GET /hello HTTP/1.1\r\nHost: a\r\nX-Big: \(big)\r\n\r\n"),
            as: UTF8.self)
        #expect(headers.hasPrefix("HTTP/1.1 431 "), "\(headers.prefix(80))")
        let line = String(
            decoding: try rawExchange(port: listener.port, request: "GET /\(big) HTTP/1.1\r\nHost: a\r\n\r\n"),
            as: UTF8.self)
        #expect(line.hasPrefix("HTTP/1.1 414 "), "\(line.prefix(80))")
        // Large ordinary heads fit: a 15 kB header, and 7.5 kB of cookies (which count twice).
        for (name, size) in [("X-Large", 15_000), ("Cookie", 7_500)] {
            let value = String(repeating: "c", count: size)
            let fits = String(
                decoding: try rawExchange(
                    port: listener.port,
                    request: "GET /hello HTTP/1.1\r\nHost: a\r\n\(name): \(value)\r\nConnection: close\r\n\r\n"),
                as: UTF8.self)
            #expect(fits.hasPrefix("HTTP/1.1 200 "), "\(name) \(size): \(fits.prefix(80))")
        }
    }

    /// Over HTTPS, a close with the client's bytes unread used to reset the connection while curl was still sending:
    /// `curl: (55) Send failure: Broken pipe` in about one exchange of three, where plain HTTP read the refusal.
    @Test(arguments: [
        (false, "header", 431), (true, "header", 431), (false, "line", 414), (true, "line", 414),
        (true, "body", 413),
    ])
    func aClientRefusedForItsSizeReadsTheRefusalOverHTTPAndHTTPS(tls: Bool, part: String, status: Int) throws {
        let pki = try TestPKI()
        let table = try CertificateTable(entries: [try pki.entry(["a.test"]).entry])
        // Lingering far longer than the wait below, so that only the clients' closes can end it in time.
        let listener = try listener(tls: tls ? TLSConfiguration(certificates: table) : nil, lingering: .seconds(120))
        let big = String(repeating: "a", count: 65_000)
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let body = directory + "/body"
        // Within what a lingering close reads (LingeringClose.byteLimit, 1 MiB): a client that sends more may be reset
        // before it reads the refusal, which is a race with its own reading, won or lost by how busy the machine is.
        #expect(FileManager.default.createFile(atPath: body, contents: Data(count: 768 << 10)))
        let (path, extra): (String, [String]) =
            switch part {
            case "header": ("/hello", ["-H", "X-Big: \(big)"])
            case "line": ("/\(big)", [])
            default: ("/hello", ["-H", "Expect:", "--data-binary", "@\(body)"])
            }
        for attempt in 0..<20 {
            let result = try curl(
                path, port: listener.port, host: "a.test", tls: tls, caPath: tls ? pki.caPath : nil,
                extra: ["-o", "/dev/null", "-w", "%{http_code}"] + extra)
            #expect(
                result.output.hasSuffix("\(status)"), "attempt \(attempt): \(result.output.suffix(40)) \(result.error)")
        }
        // Each client closed after reading: nothing lingers on (a busy machine may take seconds to say so).
        let deadline = TestTime.deadline(30)
        while listener.lingeringConnections > 0 && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        #expect(listener.lingeringConnections == 0)
    }

    /// The lingering close is bounded: a refused client that never stops sending reads its refusal and the end of
    /// the answer at once, and its bytes are read for ``LingeringClose/duration`` (5 s), then its sends fail.
    @Test func aRefusedClientThatKeepsSendingIsClosedAtTheLingeringBound() throws {
        let listener = try listener()
        let client = try RawClient(port: listener.port)
        client.send("GET /hello HTTP/1.1\r\nHost: a\r\nX-Big: " + String(repeating: "a", count: 20_000))
        let start = Date()
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        var endOfAnswer: TimeInterval?
        while Date().timeIntervalSince(start) < 20 {
            // 100 bytes every 50 ms: far below the byte bound, so only the time bound can end it.
            if !client.send(String(repeating: "a", count: 100)) { break }
            var poller = pollfd(fd: client.fd, events: Int16(POLLIN), revents: 0)
            if endOfAnswer == nil, poll(&poller, 1, 0) > 0 {
                let count = buffer.withUnsafeMutableBytes { recv(client.fd, $0.baseAddress, $0.count, 0) }
                if count > 0 { received += buffer[0..<count] } else { endOfAnswer = Date().timeIntervalSince(start) }
            }
            usleep(50_000)
        }
        let elapsed = Date().timeIntervalSince(start)
        let answer = String(decoding: received, as: UTF8.self)
        #expect(answer.hasPrefix("HTTP/1.1 431 "), "\(answer.prefix(80))")
        #expect((endOfAnswer ?? 99) < 1, "the answer ended after \(endOfAnswer ?? -1) s")
        #expect(elapsed > 3, "sends failed after \(elapsed) s: the close did not linger")
        #expect(elapsed < 12, "sends failed after \(elapsed) s; the bound is 5 s")
        #expect(listener.lingeringConnections == 0)
    }

    /// Stopping the listener ends the lingering at once: the sockets still lingering are closed and their thread is
    /// joined before `stop` returns, not left to run out its 5 s.
    @Test func stoppingTheListenerClosesTheLingeringSocketsAndJoinsTheirThread() throws {
        let listener = try listener()
        let client = try RawClient(port: listener.port)
        client.send("GET /hello HTTP/1.1\r\nHost: a\r\nX-Big: " + String(repeating: "a", count: 20_000))
        let deadline = TestTime.deadline(10)
        while (listener.lingeringConnections == 0 || listener.lingeringThreadID == 0) && Date() < deadline {
            _ = client.send(String(repeating: "a", count: 100))
            usleep(20_000)
        }
        let thread = listener.lingeringThreadID
        #expect(listener.lingeringConnections == 1 && thread != 0)
        let stopping = ContinuousClock.now
        listener.stop(timeout: .zero)
        // The lingering bound is 5 s; the thread looks every 0.1 s.
        #expect(stopping.duration(to: .now) < .seconds(4))
        #expect(!FileManager.default.fileExists(atPath: "/proc/self/task/\(thread)"), "the lingering thread still runs")
        #expect(listener.lingeringConnections == 0 && listener.lingeringThreadID == 0)
    }

    /// The header-deadline reaper is a thread of the listener's own, joined by `stop`: once it returns, the kernel no
    /// longer lists it.
    @Test func stoppingTheListenerJoinsTheReaperThread() throws {
        let listener = try listener()
        let deadline = TestTime.deadline(5)
        while listener.reaperThreadID == 0 && Date() < deadline { usleep(10_000) }
        let thread = listener.reaperThreadID
        #expect(thread != 0, "the listener has a header deadline, so a reaper")
        #expect(FileManager.default.fileExists(atPath: "/proc/self/task/\(thread)"))
        listener.stop(timeout: .zero)
        #expect(!FileManager.default.fileExists(atPath: "/proc/self/task/\(thread)"), "the reaper still runs")
        #expect(listener.reaperThreadID == 0)
    }

    /// RFC 9112 §3.2: a request with more than one Host gets 400, whichever names a site we serve.
    @Test(arguments: [false, true])
    func aRequestWithTwoHostHeadersGets400(tls: Bool) throws {
        let pki = try TestPKI()
        let table = try CertificateTable(entries: [try pki.entry(["a.test"]).entry])
        let listener = try listener(tls: tls ? TLSConfiguration(certificates: table) : nil)
        for request in [
            "GET /hello HTTP/1.1\r\nHost: a.test\r\nHost: b.test\r\n\r\n",
            "GET /hello HTTP/1.1\r\nHost: a.test\r\nX-A: 1\r\nhost: a.test\r\n\r\n",
        ] {
            let answer: String
            if tls {
                answer =
                    try runTool(
                        [
                            "openssl", "s_client", "-quiet", "-connect", "127.0.0.1:\(listener.port)", "-servername",
                            "a.test", "-CAfile", pki.caPath,
                        ], input: request
                    ).output
            } else {
                answer = String(decoding: try rawExchange(port: listener.port, request: request), as: UTF8.self)
            }
            #expect(answer.hasPrefix("HTTP/1.1 400 "), "\(answer.prefix(80))")
            #expect(answer.contains("more than one Host header"))
            #expect(!answer.contains("hello"))
        }
    }

    @Test func aTricklingClientIsClosedAtTheHeaderDeadlineHoweverActiveItIs() throws {
        let listener = try listener(headerTimeout: .seconds(1))
        let client = try RawClient(port: listener.port)
        let start = Date()
        var closed = false
        // One byte every 200 ms keeps libmicrohttpd's inactivity timer (5 s here) from ever firing.
        for byte in "GET /hello HTTP/1.1\r\nHost: a\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" {
            if !client.send(String(byte)) || client.isClosed(within: 0.2) {
                closed = true
                break
            }
        }
        let elapsed = Date().timeIntervalSince(start)
        #expect(closed, "a client trickling a header for \(elapsed) s was never closed")
        #expect(elapsed >= 0.9 && elapsed < 3, "closed after \(elapsed) s; the deadline is 1 s (+ up to 0.25 s sweep)")
        #expect(listener.headerTimeouts == 1)
    }

    @Test func aSilentTLSClientIsClosedAtTheDeadlineToo() throws {
        let pki = try TestPKI()
        let table = try CertificateTable(entries: [try pki.entry(["a.test"]).entry])
        let listener = try listener(headerTimeout: .seconds(1), tls: TLSConfiguration(certificates: table))
        let client = try RawClient(port: listener.port)  // connects and never starts the handshake
        let start = Date()
        #expect(client.isClosed(within: 4))
        let elapsed = Date().timeIntervalSince(start)
        #expect(elapsed >= 0.9 && elapsed < 3, "closed after \(elapsed) s")
        #expect(listener.headerTimeouts == 1)
    }

    @Test func aKeepAliveClientThatSendsPromptlyIsNeverCutOff() throws {
        let listener = try listener(headerTimeout: .seconds(1))
        let client = try RawClient(port: listener.port)
        // 8 requests 400 ms apart: 3.2 s in all, each head well inside its own 1 s window.
        for index in 0..<8 {
            #expect(client.send("GET /hello HTTP/1.1\r\nHost: a\r\n\r\n"), "request \(index) could not be sent")
            let answer = client.readResponse()
            #expect(answer.hasPrefix("HTTP/1.1 200 "), "request \(index): \(answer.prefix(60))")
            Thread.sleep(forTimeInterval: 0.4)
        }
        #expect(listener.headerTimeouts == 0)
        // Then silence: the next head is overdue after 1 s, and the connection goes.
        #expect(client.isClosed(within: 3))
        #expect(listener.headerTimeouts == 1)
    }

    @Test func aZeroHeaderTimeoutLeavesOnlyTheInactivityTimer() throws {
        let listener = try listener(headerTimeout: .zero)
        let client = try RawClient(port: listener.port)
        client.send("GET /hello HTTP/1.1\r\n")
        #expect(!client.isClosed(within: 1.5))
        #expect(listener.headerTimeouts == 0)
    }

    /// Each of the worker threads (one socket each, SO_REUSEPORT) enforces its share: never more in all.
    @Test func thePerAddressLimitHoldsForTheWholeListener() throws {
        var configuration = testConfiguration()  // two worker threads
        configuration.perIPConnectionLimit = 6
        let listener = try HTTPListener(configuration: configuration, routes: TestRoutes(helloBody: "hello"))
        let clients = try (0..<20).map { _ in try RawClient(port: listener.port) }
        Thread.sleep(forTimeInterval: 0.3)
        let open = clients.filter { !$0.isClosed(within: 0.2) }.count
        #expect(open <= 6, "\(open) connections from one address stayed open; the limit is 6")
        #expect(open >= 3, "only \(open) stayed open")
        #expect(listener.openConnections <= 6)
    }

    @Test func theRegistryForgetsEveryClosedConnection() throws {
        let listener = try listener()
        for _ in 0..<20 {
            _ = try rawExchange(
                port: listener.port, request: "GET /hello HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
        }
        let deadline = TestTime.deadline(3)
        while listener.openConnections > 0 && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        #expect(listener.trackedConnections == 0)
    }
}
