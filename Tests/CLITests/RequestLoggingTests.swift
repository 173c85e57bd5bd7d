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

    /// Requests over plain HTTP from 127.0.0.1 with forwarding headers: (headers, the address logged when
    /// 127.0.0.0/8 is trusted, the address logged when no proxy is trusted).
    static let forwardingCases: [([String], String, String)] = [
        (["X-Forwarded-For: 203.0.113.7"], "203.0.113.7", "127.0.0.1"),
        (["X-Forwarded-For: 198.51.100.1, 203.0.113.7, 127.0.0.2"], "203.0.113.7", "127.0.0.1"),
        (["Forwarded: for=\"[2001:db8::17]:4711\";proto=https"], "2001:db8::17", "127.0.0.1"),
        (["X-Forwarded-For: not-an-address"], "127.0.0.1", "127.0.0.1"),
        (["X-Forwarded-For: 203.0.113.7, \u{1b}[31m"], "127.0.0.1", "127.0.0.1"),
        (["Forwarded: for=unknown"], "127.0.0.1", "127.0.0.1"),
        ([], "127.0.0.1", "127.0.0.1"),
    ]

    @Test(arguments: [true, false])
    func behindATrustedProxyTheForwardedClientIsLogged(trusted: Bool) throws {
        let directory = TemporaryDirectory("aasa-logging")
        try directory.copy(RepositoryPaths.siteConfig, to: "site-config")
        let outputPath = directory.path + "/stdout.log"
        #expect(FileManager.default.createFile(atPath: outputPath, contents: nil))
        let http = freePort()
        let serve = try ServeProcess(
            in: directory.path,
            arguments: ["--dev", "--no-watch", "--access-log", "json", "--http-port", "\(http)"]
                + (trusted ? ["--trusted-proxies", "192.0.2.0/24, 127.0.0.0/8"] : []),
            output: try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath)))
        #expect(serve.waitUntilHealthy())
        for (index, (headers, _, _)) in Self.forwardingCases.enumerated() {
            let response = try Curl.request(
                "http://127.0.0.1:\(http)/.well-known/apple-app-site-association",
                headers: headers + ["Host: shop.example", "User-Agent: case-\(index)"])
            #expect(response.status == 200, "\(headers): \(response.error)")
        }
        let fetches = try Curl.request("http://127.0.0.1:\(serve.admin)/fetches?domain=shop.example")
        #expect(serve.terminate(within: 5) == 0)

        let lines = try String(contentsOfFile: outputPath, encoding: .utf8).split(separator: "\n").map(String.init)
        let logged = lines.compactMap { line -> [String: Any]? in
            guard line.hasPrefix("{") else { return nil }
            return try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        }
        let recent = try JSONSerialization.jsonObject(with: Data(fetches.body)) as? [[String: Any]] ?? []
        for (index, (headers, whenTrusted, otherwise)) in Self.forwardingCases.enumerated() {
            let expected = trusted ? whenTrusted : otherwise
            let entry = logged.first { $0["userAgent"] as? String == "case-\(index)" }
            #expect(entry?["remote"] as? String == expected, "access log, \(headers)")
            let fetch = recent.first { $0["userAgent"] as? String == "case-\(index)" }
            #expect(fetch?["remoteAddress"] as? String == expected, "fetch log, \(headers)")
            let printed = lines.first { $0.hasSuffix("[case-\(index)]") }
            #expect(printed?.contains(" from \(expected) → 200 ") == true, "--dev line, \(headers)")
        }
    }

    @Test(arguments: ["10.0.0.0/33", "127.0.0.1/8/8", "localhost", "10.0.0.0/8;1.2.3.4"])
    func anInvalidTrustedProxyBlockIsAUsageError(value: String) throws {
        let output = try Command.run(
            RepositoryPaths.executable, ["serve", "--http-port", "\(freePort())", "--trusted-proxies", value])
        #expect(output.status == 64)
        #expect(output.stderr.contains("is not an address block"), "\(output.stderr)")
    }
}
