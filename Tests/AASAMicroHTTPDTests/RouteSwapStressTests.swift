import AASAMicroHTTPD
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
}
