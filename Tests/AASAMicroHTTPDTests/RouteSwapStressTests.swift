import AASAMicroHTTPD
import AASATestSupport
import Foundation
import Testing

@Suite(.serialized) struct RouteSwapStressTests {
    /// Parallel keep-alive clients while routes are swapped repeatedly: every response is one of the
    /// tables' bodies, complete and with a matching Content-Length, and no request fails.
    @Test func swappingRoutesUnderLoadNeverServesATornOrFreedResponse() throws {
        let listener = try HTTPListener(configuration: testConfiguration(), routes: TestRoutes(helloBody: "A\n"))
        defer { listener.stop(timeout: .zero) }
        let url = "http://127.0.0.1:\(listener.port)/hello"
        let client = Process()
        client.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        client.arguments =
            ["curl", "-sS", "--parallel", "--parallel-max", "8", "-w", "[%{http_code} %{size_download}]\n"]
            + Array(repeating: url, count: 400)
        let output = Pipe()
        client.standardOutput = output
        client.standardError = FileHandle.nullDevice
        try client.run()
        let reader = Thread.detachNewThreadReadAll(output.fileHandleForReading)
        var swaps = 0
        while client.isRunning {
            try listener.replaceRoutes(TestRoutes(helloBody: swaps % 2 == 0 ? "BB\n" : "A\n"))
            swaps += 1
        }
        client.waitUntilExit()
        let text = String(decoding: reader.wait(), as: UTF8.self)
        #expect(client.terminationStatus == 0)
        let lines = text.split(separator: "\n")
        let statusLines = lines.filter { $0.hasPrefix("[") }
        let bodies = lines.filter { !$0.hasPrefix("[") }
        #expect(statusLines.count == 400)
        #expect(statusLines.allSatisfy { $0 == "[200 2]" || $0 == "[200 3]" })
        #expect(bodies.allSatisfy { $0 == "A" || $0 == "BB" })
        #expect(swaps > 0)
    }

    /// libmicrohttpd sends a body straight from the Swift array that holds it (no copy): a body still being sent
    /// when its table is replaced, and the table freed, must stay alive until the last byte leaves.
    @Test func aBodyBeingSentOutlivesTheTableThatHeldIt() throws {
        let line = Array("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n".utf8)
        // 16 MiB: a client that reads nothing takes a few MiB into the kernel's buffers, the rest waits in the
        // server, read from the body's storage, while the table is replaced.
        let body = String(decoding: Array([[UInt8]](repeating: line, count: 262_144).joined()), as: UTF8.self)
        let listener = try HTTPListener(configuration: testConfiguration(), routes: TestRoutes(helloBody: body))
        defer { listener.stop(timeout: .zero) }
        let client = try RawClient(port: listener.port)
        #expect(client.send("GET /hello HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"))
        Thread.sleep(forTimeInterval: 0.2)
        // Two swaps: the first table is released, and nothing else refers to its responses.
        try listener.replaceRoutes(TestRoutes(helloBody: "A\n"))
        try listener.replaceRoutes(TestRoutes(helloBody: "BB\n"))
        let received = client.readAllBytes(timeout: 10)
        let expected = Array(body.utf8)
        // Compared outside the expectation: a failure prints the operands, here 16 MiB.
        let intact = received.count > expected.count && received.suffix(expected.count).elementsEqual(expected)
        #expect(intact, "received \(received.count) bytes; the body's last \(expected.count) differ or are missing")
        #expect(splitResponse(try curl("/hello", port: listener.port).output).body == "BB\n")
    }
}
