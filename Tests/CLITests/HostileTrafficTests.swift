import AASATestSupport
import Foundation
import Testing

/// The attack scripts of `scripts/` against a real `aasa-server serve` process, as an operator would run
/// them before trusting the server: trickling connections must not deny service, and thousands of
/// malformed requests must neither kill the process nor change a single answer.
@Suite(.serialized) struct HostileTrafficTests {
    /// Runs a script of `scripts/`; its JSON report is printed into the test log on failure.
    func script(_ name: String, _ arguments: [String], timeout: TimeInterval) throws -> (status: Int32, report: String)
    {
        let output = try Command.run(
            RepositoryPaths.root + "/scripts/" + name, arguments, timeout: timeout)
        return (output.status, output.stdout + output.stderr)
    }

    func startServer(_ extra: [String] = []) throws -> (ServeProcess, TemporaryDirectory, UInt16) {
        let directory = TemporaryDirectory("aasa-hostile")
        try directory.copy(RepositoryPaths.siteConfig, to: "site-config")
        let http = freePort()
        let serve = try ServeProcess(
            in: directory.path, arguments: ["--dev", "--no-watch", "--http-port", "\(http)"] + extra)
        #expect(serve.waitUntilHealthy())
        return (serve, directory, http)
    }

    @Test func tenThousandMalformedRequestsNeitherKillTheServerNorChangeAnAnswer() throws {
        let (serve, _, http) = try startServer()
        let pid = "\(serve.process.processIdentifier)"
        let plain = try script(
            "hostile-requests",
            [
                "--port", "\(http)", "--server-name", "shop.example", "--count", "10000", "--timeout", "0.5", "--pid",
                pid,
            ],
            timeout: 300)
        #expect(plain.status == 0, "\(plain.report)")
        #expect(plain.report.contains(#""sent": 10000"#))
        let tls = try script(
            "hostile-requests",
            [
                "--port", "\(serve.port)", "--tls", "--server-name", "shop.example", "--count", "2000", "--seed", "2",
                "--timeout", "0.5", "--pid", pid,
            ],
            timeout: 300)
        #expect(tls.status == 0, "\(tls.report)")
        #expect(serve.process.isRunning)
        #expect(serve.terminate(within: 5) == 0)
    }

    /// A client refused for its size reads its 431 or 414 over HTTPS as over HTTP (the close lingers instead of
    /// resetting), and a request with two `Host` headers gets 400 instead of the first one's file.
    @Test func refusalsAreReadWholeAndTwoHostHeadersGet400OverHTTPAndHTTPS() throws {
        let (serve, directory, http) = try startServer()
        let ca = directory.path + "/certs/dev-ca/ca.pem"
        let big = String(repeating: "a", count: 65_000)
        let path = "/.well-known/apple-app-site-association"
        for (url, resolve) in [
            ("https://shop.example:\(serve.port)", ("shop.example", serve.port)),
            ("http://shop.example:\(http)", ("shop.example", http)),
        ] {
            for (suffix, headers, status) in [(path, ["X-Big: \(big)"], 431), ("/\(big)", [], 414)] {
                for attempt in 0..<10 {
                    let answer = try Curl.request(url + suffix, headers: headers, caFile: ca, resolve: resolve)
                    #expect(answer.status == status, "\(url) attempt \(attempt): \(answer.error)")
                }
            }
        }
        let twoHosts = "GET \(path) HTTP/1.1\r\nHost: shop.example\r\nHost: links.example\r\n\r\n"
        let overTLS = try runTool(
            [
                "openssl", "s_client", "-quiet", "-connect", "127.0.0.1:\(serve.port)", "-servername", "shop.example",
                "-CAfile", ca,
            ], input: twoHosts)
        let overTCP = try runTool(["curl", "-sS", "--max-time", "10", "telnet://127.0.0.1:\(http)"], input: twoHosts)
        for answer in [overTLS.output, overTCP.output] {
            #expect(answer.hasPrefix("HTTP/1.1 400 "), "\(answer.prefix(200))")
            #expect(answer.contains("more than one Host header"))
            #expect(!answer.contains("applinks"))
        }
        #expect(serve.terminate(within: 5) == 0)
    }

    @Test(arguments: [false, true])
    func aTrickleAttackFromOneAddressDoesNotDenyServiceToAnother(tls: Bool) throws {
        let (serve, _, http) = try startServer(["--header-timeout", "2"])
        var arguments = [
            "--port", "\(tls ? serve.port : http)", "--server-name", "shop.example", "--connections", "300",
            "--interval", "0.5", "--duration", "12", "--attack-source", "127.0.0.1", "--probe-source", "127.0.0.2",
            "--max-wait", "1", "--expect-closed-within", "5",
        ]
        if tls { arguments.append("--tls") }
        let attack = try script("slowloris", arguments, timeout: 120)
        #expect(attack.status == 0, "\(attack.report)")
        #expect(attack.report.contains(#""failureCount": 0"#), "\(attack.report)")
        #expect(serve.terminate(within: 5) == 0)
    }
}
