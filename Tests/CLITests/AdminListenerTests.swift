import AASACore
import AASATestSupport
import Foundation
import Testing

/// The admin listener of a real `aasa-server serve`: which Host names it answers (DNS rebinding) and the
/// bearer token of `--admin-token-file`.
@Suite(.serialized) struct AdminListenerTests {
    /// A served sample config with development certificates, and extra `serve` arguments.
    static func serve(_ arguments: [String], environment: [String: String] = [:], in directory: TemporaryDirectory)
        throws -> ServeProcess
    {
        if !FileManager.default.fileExists(atPath: directory.path + "/site-config") {
            try directory.copy(RepositoryPaths.siteConfig, to: "site-config")
        }
        return try ServeProcess(
            in: directory.path, arguments: ["--dev", "--no-watch"] + arguments, environment: environment)
    }

    /// The status of `path` on the admin listener with these request headers (`Host:` alone removes Host; the
    /// request is then HTTP/1.0, which may omit it).
    static func status(_ serve: ServeProcess, _ path: String, headers: [String]) throws -> CurlResponse {
        try Curl.request(
            "http://127.0.0.1:\(serve.admin)\(path)", headers: headers,
            extra: headers.contains("Host:") ? ["--http1.0"] : [])
    }

    @Test(arguments: [
        ("localhost", 200), ("LOCALHOST.", 200), ("localhost:1", 200), ("127.0.0.1", 200), ("127.5.6.7:9090", 200),
        ("[::1]", 200), ("[::1]:9090", 200), ("10.1.2.3:9090", 200), ("[2001:db8::7]", 200),
        ("prometheus.monitoring.svc:9090", 200), ("Prometheus.Monitoring.SVC.", 200),
        ("ignored.example", 421),  // only in the variable: the flag wins
        ("evil.example", 421), ("localhost.evil.example", 421), ("127.0.0.1.evil.example", 421),
        ("monitoring.svc", 421), ("0x7f.0.0.1", 421), ("", 421),
    ])
    func onlyRequestsAddressedToAKnownNameAreAnswered(host: String, expected: Int) throws {
        let directory = TemporaryDirectory("aasa-admin")
        let serve = try Self.serve(
            ["--admin-host", "prometheus.monitoring.svc"], environment: ["AASA_SERVER_ADMIN_HOST": "ignored.example"],
            in: directory)
        #expect(serve.waitUntilHealthy())
        for path in ["/healthz", "/status", "/metrics"] {
            // An empty host stands for none at all.
            let answer = try Self.status(serve, path, headers: [host.isEmpty ? "Host:" : "Host: \(host)"])
            #expect(answer.status == expected, "\(path) Host: \(host)")
            if expected == 421 {
                #expect(answer.text.hasPrefix("misdirected request"))
                #expect(!answer.text.contains(host.isEmpty ? "\u{0}" : host), "the Host is not reflected")
            }
        }
        #expect(serve.terminate(within: 5) == 0)
    }

    /// A web page the operator visits cannot make the browser call the admin routes (`/match` costs CPU), with or
    /// without a token; the probes, curl, and the listener's own pages are answered.
    @Test func crossSiteRequestsGet403ButTheProbesAndTheListenersOwnPagesAreAnswered() throws {
        let directory = TemporaryDirectory("aasa-admin")
        let serve = try Self.serve([], in: directory)
        #expect(serve.waitUntilHealthy())
        let own = "http://127.0.0.1:\(serve.admin)"
        let match = "/match?url=https%3A%2F%2Fshop.example%2Fbuy%2Fx"
        for (path, headers, expected) in [
            (match, ["Sec-Fetch-Site: cross-site"], 403), (match, ["Origin: https://evil.example"], 403),
            ("/status", ["Sec-Fetch-Site: same-site", "Origin: http://localhost:3000"], 403),
            ("/", ["Sec-Fetch-Site: cross-site", "Sec-Fetch-Mode: navigate"], 403),
            ("/metrics", ["Origin: null"], 403),
            (match, ["Sec-Fetch-Site: same-origin"], 200),
            (match, ["Origin: \(own)", "Sec-Fetch-Site: same-origin"], 200),
            ("/", ["Sec-Fetch-Site: none", "Sec-Fetch-Mode: navigate"], 200), (match, [], 200),
            ("/healthz", ["Sec-Fetch-Site: cross-site", "Origin: https://evil.example"], 200),
            ("/readyz", ["Sec-Fetch-Site: cross-site", "Origin: https://evil.example"], 200),
        ] {
            let answer = try Self.status(serve, path, headers: headers)
            #expect(answer.status == expected, "\(path) \(headers)")
            if expected == 403 { #expect(answer.text.hasPrefix("forbidden: a cross-site request")) }
        }
        #expect(serve.terminate(within: 5) == 0)
    }

    @Test func adminHostNamesComeFromTheEnvironmentCommaSeparated() throws {
        let directory = TemporaryDirectory("aasa-admin")
        let serve = try Self.serve(
            [], environment: ["AASA_SERVER_ADMIN_HOST": "prometheus.monitoring.svc, Grafana.Example"], in: directory)
        #expect(serve.waitUntilHealthy())
        for (host, expected) in [
            ("prometheus.monitoring.svc", 200), ("grafana.example:3000", 200), ("evil.example", 421),
        ] {
            #expect(try Self.status(serve, "/status", headers: ["Host: \(host)"]).status == expected, "\(host)")
        }
        #expect(serve.terminate(within: 5) == 0)
    }

    @Test func theTokenGuardsStatusFetchesMatchAndMetricsButNotTheProbes() throws {
        let directory = TemporaryDirectory("aasa-admin")
        let tokenFile = try directory.write("admin-token", "s3cret-t0ken\n")
        #expect(chmod(tokenFile, 0o600) == 0)
        let serve = try Self.serve(["--admin-token-file", tokenFile], in: directory)
        #expect(serve.waitUntilHealthy())
        for path in ["/healthz", "/readyz"] {
            #expect(try Self.status(serve, path, headers: []).status == 200, "\(path) is open")
        }
        let protected = ["/status", "/fetches", "/metrics", "/match?url=https%3A%2F%2Fshop.example%2Fbuy%2Fx"]
        for path in protected {
            let missing = try Self.status(serve, path, headers: [])
            #expect(missing.status == 401, "\(path) without a token")
            #expect(missing.headers["www-authenticate"] == "Bearer")
            for wrong in [
                "Bearer s3cret-t0keN", "Bearer s3cret-t0ke", "Bearer s3cret-t0ken2", "Basic czNjcmV0LXQwa2Vu",
                "s3cret-t0ken", "Bearer",
            ] {
                #expect(try Self.status(serve, path, headers: ["Authorization: \(wrong)"]).status == 401, "\(wrong)")
            }
            for right in ["Bearer s3cret-t0ken", "bearer s3cret-t0ken"] {
                let answer = try Self.status(serve, path, headers: ["Authorization: \(right)"])
                #expect(answer.status == 200, "\(path) with \(right)")
            }
        }
        // A right token does not make a foreign Host acceptable.
        #expect(
            try Self.status(serve, "/status", headers: ["Authorization: Bearer s3cret-t0ken", "Host: evil.example"])
                .status == 421)
        // The container HEALTHCHECK keeps working.
        let check = try Command.run(RepositoryPaths.executable, ["healthcheck", "--port", "\(serve.admin)"])
        #expect(check.status == 0, "\(check.stderr)")
        let ready = try Command.run(
            RepositoryPaths.executable, ["healthcheck", "--port", "\(serve.admin)", "--path", "/readyz"])
        #expect(ready.status == 0, "\(ready.stderr)")
        #expect(serve.terminate(within: 5) == 0)
    }

    /// A file of named, scoped tokens: each token opens the token routes; the probes stay open.
    @Test func eachTokenOfAFileOfSeveralOpensTheTokenRoutes() throws {
        let directory = TemporaryDirectory("aasa-admin")
        let tokenFile = try directory.write(
            "admin-tokens",
            "# who scope token\nprometheus read 0123456789abcdef0123\n\nci-deploy write fedcba9876543210fedc\n")
        #expect(chmod(tokenFile, 0o600) == 0)
        let serve = try Self.serve(["--admin-token-file", tokenFile], in: directory)
        #expect(serve.waitUntilHealthy())
        for token in ["0123456789abcdef0123", "fedcba9876543210fedc"] {
            #expect(try Self.status(serve, "/status", headers: ["Authorization: Bearer \(token)"]).status == 200)
        }
        for wrong in ["0123456789abcdef012", "prometheus", "read 0123456789abcdef0123"] {
            #expect(try Self.status(serve, "/metrics", headers: ["Authorization: Bearer \(wrong)"]).status == 401)
        }
        #expect(try Self.status(serve, "/healthz", headers: []).status == 200)
        #expect(serve.terminate(within: 5) == 0)
    }

    /// The error names the file, or the file and line (`path:1:`) for a malformed line.
    @Test(arguments: [
        ("", 0o600, "", "the admin token file is empty; fix: write a token into it"),
        ("\n", 0o600, "", "the admin token file is empty"),
        (
            "token\n", 0o644, "",
            "has mode 644: readable by others, so other users on this machine can read the token; fix: chmod 600"
        ),
        ("token\n", 0o604, "", "readable by others"),
        ("two words\n", 0o600, ":1", "printable ASCII without spaces"),
        ("ci write 0123456789abcdef\nci read 0123456789abcdeX\n", 0o600, ":2", "the token's name, is already used"),
        ("ci admin 0123456789abcdef\n", 0o600, ":1", "is neither read nor write (are the fields in the order"),
    ])
    func aTokenFileThatIsEmptyOrReadableByOthersStopsTheStart(
        content: String, mode: Int, line: String, message: String
    ) throws {
        let directory = TemporaryDirectory("aasa-admin")
        try directory.copy(RepositoryPaths.siteConfig, to: "site-config")
        let tokenFile = try directory.write("admin-token", content)
        #expect(chmod(tokenFile, mode_t(mode)) == 0)
        let output = try Command.run(
            RepositoryPaths.executable,
            ["serve", "--dev", "--https-port", "\(freePort())", "--admin-port", "\(freePort())"],
            currentDirectory: directory.path,
            environment: ProcessInfo.processInfo.environment.merging(["AASA_SERVER_ADMIN_TOKEN_FILE": tokenFile]) {
                _, new in new
            }, timeout: 30)
        #expect(output.status == 2)
        #expect(output.stderr.contains("\(tokenFile)\(line): error: "), "\(output.stderr)")
        #expect(output.stderr.contains(message), "\(output.stderr)")
    }
}
