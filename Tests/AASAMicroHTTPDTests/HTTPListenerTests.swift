import AASACore
import AASATestSupport
import Foundation
import Testing

@testable import AASAMicroHTTPD

@Suite(.serialized) struct HTTPListenerTests {
    @Test func getServesPreparedAndDynamicResponses() throws {
        let listener = try HTTPListener(configuration: testConfiguration(), routes: TestRoutes(helloBody: "hello\n"))
        defer { listener.stop(timeout: .zero) }
        #expect(listener.port != 0)

        let hello = try curl("/hello", port: listener.port)
        #expect(hello.status == 0, "\(hello.error)")
        let (head, body) = splitResponse(hello.output)
        #expect(head.hasPrefix("HTTP/1.1 200"))
        #expect(head.contains("Content-Length: 6"))
        #expect(head.contains("X-Route: prepared"))
        #expect(head.contains("Content-Type: text/plain"))
        #expect(body == "hello\n")

        let missing = try curl("/nope", port: listener.port)
        #expect(missing.output.hasPrefix("HTTP/1.1 404"))
        #expect(splitResponse(missing.output).body == "not found\n")
    }

    @Test func aResponseKeptOutsideTheTableIsBuiltForTheWireOnce() throws {
        let routes = TestRoutes(helloBody: "hello\n")
        let listener = try HTTPListener(configuration: testConfiguration(), routes: routes)
        defer { listener.stop(timeout: .zero) }
        #expect(routes.kept.transportForm(secure: false, as: NativeResponse.self) == nil)
        for _ in 0..<3 {
            let (head, body) = splitResponse(try curl("/kept", port: listener.port).output)
            #expect(head.hasPrefix("HTTP/1.1 200") && head.contains("X-Route: kept"))
            #expect(body == "kept body\n")
        }
        // The listener stored its native form after the first request: asking again builds nothing.
        let stored = routes.kept.transportForm(secure: false) { () -> NativeResponse in
            Issue.record("the native form was not kept")
            return try! NativeResponse(Response(status: 500))
        }
        #expect(stored.status == 200)
    }

    @Test(arguments: ["/hello", "/kept", "/dynamic"])
    func headSendsHeadersWithContentLengthButNoBody(path: String) throws {
        let listener = try HTTPListener(configuration: testConfiguration(), routes: TestRoutes(helloBody: "hello\n"))
        defer { listener.stop(timeout: .zero) }
        let getBody = splitResponse(try curl(path, port: listener.port).output).body
        // Raw socket: curl would hide a body sent after a HEAD response.
        let raw = try rawExchange(
            port: listener.port, request: "HEAD \(path) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        let text = String(decoding: raw, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 200"))
        #expect(text.contains("Content-Length: \(getBody.utf8.count)\r\n"))
        #expect(text.hasSuffix("\r\n\r\n"), "bytes after the header block: \(text)")
    }

    @Test func keepAliveReusesTheConnection() throws {
        let listener = try HTTPListener(configuration: testConfiguration(), routes: TestRoutes(helloBody: "hello\n"))
        defer { listener.stop(timeout: .zero) }
        let url = "http://127.0.0.1:\(listener.port)"
        let result = try runTool([
            "curl", "-sS", "-o", "/dev/null", "-o", "/dev/null", "-o", "/dev/null", "-w", "%{num_connects}\n",
            "\(url)/hello", "\(url)/echo", "\(url)/hello",
        ])
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output == "1\n0\n0\n")
    }

    @Test func pathAndQueryReachTheRouterRaw() throws {
        let listener = try HTTPListener(configuration: testConfiguration(), routes: TestRoutes(helloBody: ""))
        defer { listener.stop(timeout: .zero) }
        let cases: [(String, String, String)] = [
            ("/a%2Fb", "/a%2Fb", "<nil>"),
            ("/a%2Fb?x=1&y&z=&a+b=%20&x=2", "/a%2Fb", "x=1&y&z=&a+b=%20&x=2"),
            ("/echo?", "/echo", ""),
            ("/echo?%7E=%26&=v&&", "/echo", "%7E=%26&=v&&"),
            ("/raw%20x?q", "/raw%20x", "q"),
        ]
        for (target, path, query) in cases {
            let fields = echoFields(splitResponse(try curl(target, port: listener.port).output).body)
            #expect(fields["path"] == path, "\(target)")
            #expect(fields["query"] == query, "\(target)")
        }
    }

    @Test func routerSeesMethodHeadersAndClientAddress() throws {
        let listener = try HTTPListener(configuration: testConfiguration(), routes: TestRoutes(helloBody: ""))
        defer { listener.stop(timeout: .zero) }
        let get = echoFields(
            splitResponse(try curl("/echo", port: listener.port, extra: ["-H", "HOST: Shop.Example"]).output).body)
        #expect(get["method"] == "get")
        #expect(get["host"] == "Shop.Example")
        #expect(get["sni"] == "<nil>")
        #expect(get["remote"] == "127.0.0.1")
        // Any method reaches the router; a body would be refused before routing (413, ListenerLimitsTests).
        let post = echoFields(
            splitResponse(try curl("/echo", port: listener.port, extra: ["-X", "POST"]).output).body)
        #expect(post["method"] == "post")
        // PUT and DELETE are told apart (the admin API takes them); any other token is `other`.
        for (token, method) in [("PUT", "put"), ("DELETE", "delete"), ("PROPFIND", "other"), ("PATCH", "other")] {
            let answer = echoFields(
                splitResponse(try curl("/echo", port: listener.port, extra: ["-X", token]).output).body)
            #expect(answer["method"] == method, "\(token)")
        }
    }

    @Test func dualStackListenerReportsIPv4ClientsAsIPv4() throws {
        let listener = try HTTPListener(
            configuration: testConfiguration(bindAddress: nil), routes: TestRoutes(helloBody: ""))
        defer { listener.stop(timeout: .zero) }
        let fields = echoFields(splitResponse(try curl("/echo", port: listener.port).output).body)
        #expect(fields["remote"] == "127.0.0.1")
    }

    @Test func replaceRoutesSwapsResponsesWhileRunning() throws {
        let listener = try HTTPListener(configuration: testConfiguration(), routes: TestRoutes(helloBody: "one\n"))
        defer { listener.stop(timeout: .zero) }
        #expect(splitResponse(try curl("/hello", port: listener.port).output).body == "one\n")
        try listener.replaceRoutes(TestRoutes(helloBody: "two, longer\n"))
        let (head, body) = splitResponse(try curl("/hello", port: listener.port).output)
        #expect(body == "two, longer\n")
        #expect(head.contains("Content-Length: 12"))
    }

    @Test func invalidPreparedResponseIsRejectedAndOldRoutesStay() throws {
        struct BadRoutes: RouteTable {
            let preparedResponses: [PreparedResponse]
            init() {
                var builder = PreparedResponseBuilder()
                _ = builder.prepare(Response(status: 200, headers: [HTTPHeader("X-Bad", "a\r\nInjected: 1")]))
                preparedResponses = builder.responses
            }
            func route(_ request: some HTTPRequest) -> RouteDecision { .prepared(preparedResponses[0]) }
        }
        let listener = try HTTPListener(configuration: testConfiguration(), routes: TestRoutes(helloBody: "old\n"))
        defer { listener.stop(timeout: .zero) }
        let error = #expect(throws: HTTPListenerError.self) { try listener.replaceRoutes(BadRoutes()) }
        #expect(error?.code == .invalidResponse)
        #expect(splitResponse(try curl("/hello", port: listener.port).output).body == "old\n")
    }

    @Test func boundToLoopbackIsNotReachableOverIPv6() throws {
        let listener = try HTTPListener(configuration: testConfiguration(), routes: TestRoutes(helloBody: "hi\n"))
        defer { listener.stop(timeout: .zero) }
        #expect(try curl("/hello", port: listener.port).status == 0)
        let v6 = try runTool(["curl", "-sS", "--max-time", "5", "http://[::1]:\(listener.port)/hello"])
        #expect(v6.status != 0)
    }

    @Test func bindingToIPv6LoopbackWorks() throws {
        let listener = try HTTPListener(
            configuration: testConfiguration(bindAddress: "::1"), routes: TestRoutes(helloBody: ""))
        defer { listener.stop(timeout: .zero) }
        let result = try runTool(["curl", "-sS", "--max-time", "5", "http://[::1]:\(listener.port)/echo"])
        #expect(result.status == 0, "\(result.error)")
        #expect(echoFields(result.output)["remote"] == "::1")
    }

    @Test func portInUseIsAClearError() throws {
        let first = try HTTPListener(configuration: testConfiguration(), routes: TestRoutes(helloBody: ""))
        defer { first.stop(timeout: .zero) }
        let error = #expect(throws: HTTPListenerError.self) {
            _ = try HTTPListener(configuration: testConfiguration(port: first.port), routes: TestRoutes(helloBody: ""))
        }
        #expect(error?.code == .addressInUse)
        #expect(error?.reason.contains("port \(first.port)") == true)
    }

    @Test func invalidBindAddressIsRejected() {
        let error = #expect(throws: HTTPListenerError.self) {
            _ = try HTTPListener(
                configuration: testConfiguration(bindAddress: "localhost"), routes: TestRoutes(helloBody: ""))
        }
        #expect(error?.code == .invalidBindAddress)
    }

    @Test func stopClosesTheListeningSocket() throws {
        let listener = try HTTPListener(configuration: testConfiguration(), routes: TestRoutes(helloBody: "hi\n"))
        let port = listener.port
        #expect(try curl("/hello", port: port).status == 0)
        listener.stop(timeout: .seconds(2))
        #expect(listener.openConnections == 0)
        #expect(try curl("/hello", port: port).status != 0)
        listener.stop()  // idempotent
    }

    @Test func plainListenerHasNoCertificatesToReplace() throws {
        let pki = try TestPKI()
        let listener = try HTTPListener(configuration: testConfiguration(), routes: TestRoutes(helloBody: ""))
        defer { listener.stop(timeout: .zero) }
        let table = try CertificateTable(entries: [pki.entry(["a.test"]).entry])
        let error = #expect(throws: HTTPListenerError.self) { try listener.replaceCertificates(table) }
        #expect(error?.code == .notTLS)
    }
}
