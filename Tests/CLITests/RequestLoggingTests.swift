import AASACore
import AASATestSupport
import Foundation
import Testing

/// What `serve` writes about requests (access log, `--dev` fetch lines), read from a real process's output.
@Suite(.serialized) struct RequestLoggingTests {
    /// A User-Agent that would clear the screen, ring the bell and (as C1 CSI) recolour a terminal.
    static let hostileAgent = "evil\u{1b}[2J\u{7}bell\u{9b}31m\u{7f}end"
    static let escapedAgent = "evil\\x1b[2J\\x07bell\\x9b31m\\x7fend"

    @Test(arguments: ["json", "common"])
    func controlCharactersFromRequestsAreEscapedInTheAccessLogAndTheDevOutput(format: String) throws {
        let directory = TemporaryDirectory("aasa-logging")
        try directory.copy(RepositoryPaths.siteConfig, to: "site-config")
        let outputPath = directory.path + "/stdout.log"
        #expect(FileManager.default.createFile(atPath: outputPath, contents: nil))
        let serve = try ServeProcess(
            in: directory.path, arguments: ["--dev", "--no-watch", "--access-log", format, "--access-log-queries"],
            output: try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath)))
        #expect(serve.waitUntilHealthy())
        let response = try Curl.request(
            "https://shop.example:\(serve.port)/.well-known/apple-app-site-association?q=%1b",
            headers: ["User-Agent: \(Self.hostileAgent)"], caFile: directory.path + "/certs/dev-ca/ca.pem",
            resolve: ("shop.example", serve.port))
        #expect(response.status == 200, "\(response.error)")
        #expect(serve.terminate(within: 5) == 0)

        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: outputPath)))
        // No control character but the line ends, anywhere in what the server printed.
        let controls = bytes.enumerated().filter { $0.element < 0x20 && $0.element != 0x0A || $0.element == 0x7F }
        #expect(controls.isEmpty, "control bytes at \(controls.map(\.offset))")
        #expect(!String(decoding: bytes, as: UTF8.self).unicodeScalars.contains { (0x80...0x9F).contains($0.value) })
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
        let fetchLine = lines.first { $0.contains(" fetched shop.example/.well-known/apple-app-site-association") }
        #expect(fetchLine?.hasSuffix("[\(Self.escapedAgent)]") == true, "\(lines)")
        switch format {
        case "json":
            let logged = lines.compactMap { line -> [String: Any]? in
                guard line.hasPrefix("{") else { return nil }
                return try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            }
            let entry = logged.first { ($0["path"] as? String)?.hasPrefix("/.well-known/") == true }
            #expect(entry?["userAgent"] as? String == Self.escapedAgent, "\(lines)")
        default:
            let entry = lines.first { $0.contains("\"GET /.well-known/apple-app-site-association?q=%1b HTTP/1.1\"") }
            #expect(entry?.hasSuffix("\"\(Self.escapedAgent)\"") == true, "\(lines)")
        }
    }
}
