import AASACore
import AASATestSupport
import Foundation
import Testing

@testable import AASAMicroHTTPD

/// Requests from a trusted proxy on a live listener: the forwarded client is the router's remote address, and
/// the per-client limit counts forwarded clients, not the proxy.
@Suite(.serialized) struct ForwardedClientTests {
    func listener(trusted: [String], limit: Int = 0, body: String = "hello") throws -> HTTPListener {
        var configuration = testConfiguration()
        configuration.trustedProxies = trusted.compactMap(IPNetwork.init)
        configuration.forwardedClientLimit = limit
        return try HTTPListener(configuration: configuration, routes: TestRoutes(helloBody: body))
    }

    @Test(arguments: [
        (["127.0.0.0/8"], "X-Forwarded-For: 203.0.113.7", "203.0.113.7"),
        (["127.0.0.1"], "X-Forwarded-For: 203.0.113.7, 127.0.0.1", "203.0.113.7"),
        (["127.0.0.0/8"], "Forwarded: for=\"[2001:db8::17]:4711\"", "2001:db8::17"),
        (["127.0.0.0/8"], "X-Forwarded-For: bogus", "127.0.0.1"),
        (["192.0.2.0/24", "::1/128"], "X-Forwarded-For: 203.0.113.7", "127.0.0.1"),  // the peer is not trusted
        ([], "X-Forwarded-For: 203.0.113.7", "127.0.0.1"),
    ])
    func theRouterSeesTheForwardedClient(trusted: [String], header: String, expected: String) throws {
        let listener = try listener(trusted: trusted)
        defer { listener.stop(timeout: .zero) }
        let answer = try curl("/echo", port: listener.port, extra: ["-H", header])
        #expect(echoFields(splitResponse(answer.output).body)["remote"] == expected, "\(answer.output)")
    }

    /// A client that never reads a 16 MiB answer keeps its request in progress (the socket buffers fill long
    /// before), so with a limit of one the same forwarded address gets 429 until that connection ends, while
    /// another address behind the same proxy is served.
    @Test func theLimitCountsRequestsInProgressPerForwardedClient() throws {
        let listener = try listener(
            trusted: ["127.0.0.0/8"], limit: 1, body: String(repeating: "x", count: 16 << 20))
        defer { listener.stop(timeout: .zero) }
        var holder: RawClient? = try RawClient(port: listener.port)
        try withExtendedLifetime(holder) {
            holder?.send("GET /hello HTTP/1.1\r\nHost: a\r\nX-Forwarded-For: 203.0.113.7\r\n\r\n")
            usleep(300_000)
            let refused = try curl("/echo", port: listener.port, extra: ["-H", "X-Forwarded-For: 203.0.113.7"])
            #expect(refused.output.hasPrefix("HTTP/1.1 429 "), "\(refused.output.prefix(200))")
            #expect(refused.output.contains("Retry-After: 1"))
            let other = try curl("/echo", port: listener.port, extra: ["-H", "X-Forwarded-For: 198.51.100.1"])
            #expect(other.output.hasPrefix("HTTP/1.1 200 "))
            // The proxy itself, naming nobody, is not limited this way.
            #expect(try curl("/echo", port: listener.port).output.hasPrefix("HTTP/1.1 200 "))
        }
        // Closed with the answer unread: the kernel resets the connection and libmicrohttpd ends the request.
        holder = nil
        var served = false
        for _ in 0..<TestTime.tries(40) where !served {
            usleep(50_000)
            let again = try curl("/echo", port: listener.port, extra: ["-H", "X-Forwarded-For: 203.0.113.7"])
            served = again.output.hasPrefix("HTTP/1.1 200 ")
        }
        #expect(served, "the count is released when the request ends")
    }
}
