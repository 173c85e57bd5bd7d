import AASATestSupport
import Foundation
import Testing

/// `serve` with one broken domain beside a good one, as an operator starts it: the good one is served.
@Suite(.serialized) struct PartialStartTests {
    static let good = #"{"webCredentials": ["ABCDE12345.com.example.good"]}"#
    /// An app ID without a team ID: an error, so the domain cannot be published.
    static let broken = #"{"universalLinks": {"apps": [{"appIDs": ["com.example.app"], "rules": [{"path": "/*"}]}]}}"#

    static func prepare() throws -> TemporaryDirectory {
        let directory = TemporaryDirectory("aasa-partial")
        try directory.write("site-config/good.example/site.json", good)
        try directory.write("site-config/broken.example/site.json", broken)
        let issued = try Command.run(
            RepositoryPaths.executable, ["certs", "dev", "--config", "site-config", "--certs", "certs"],
            currentDirectory: directory.path)
        #expect(issued.status == 0, "\(issued.stderr)")
        return directory
    }

    @Test func theGoodDomainIsServedAndReadyzNamesTheBrokenOne() throws {
        let directory = try Self.prepare()
        let logPath = directory.path + "/serve.err"
        let serve = try ServeProcess(in: directory.path, arguments: ["--no-watch"], errorLog: logPath)
        #expect(serve.waitUntilHealthy())
        let good = try Curl.request(
            "https://good.example:\(serve.port)/.well-known/apple-app-site-association",
            caFile: directory.path + "/certs/dev-ca/ca.pem", resolve: ("good.example", serve.port))
        #expect(good.status == 200)
        #expect(good.text.contains("ABCDE12345.com.example.good"))
        let broken = try Curl.request(
            "https://broken.example:\(serve.port)/.well-known/apple-app-site-association",
            caFile: directory.path + "/certs/dev-ca/ca.pem", resolve: ("broken.example", serve.port))
        #expect(broken.status == 404)
        let ready = try Curl.request("http://127.0.0.1:\(serve.admin)/readyz")
        #expect(ready.status == 503)
        #expect(ready.text.hasPrefix("broken.example: site-config/broken.example/site.json:1:"), "\(ready.text)")
        #expect(ready.text.contains("[app-id-format]"))
        #expect(!ready.text.contains("good.example"))
        let metrics = try Curl.request("http://127.0.0.1:\(serve.admin)/metrics").text
        #expect(metrics.contains(#"aasa_domains{state="published"} 1"#), "\(metrics)")
        #expect(metrics.contains(#"aasa_domains{state="failed"} 1"#))
        #expect(serve.terminate() == 0)
        let log = try String(contentsOfFile: logPath, encoding: .utf8)
        #expect(log.contains("site-config/broken.example/site.json:1:"), "\(log)")
        #expect(log.contains("failed=1"), "\(log)")
    }

    /// With a token, `/readyz` (open to probes) says how many domains are not served, never which or why: their
    /// paths and errors (where a symlink leads, whether a file exists) are on `/status`, behind the token.
    @Test func withATokenReadyzCountsTheBrokenDomainsAndStatusNamesThem() throws {
        let directory = try Self.prepare()
        let tokenFile = try directory.write("admin-token", "t0ken\n")
        #expect(chmod(tokenFile, 0o600) == 0)
        let serve = try ServeProcess(in: directory.path, arguments: ["--no-watch", "--admin-token-file", tokenFile])
        #expect(serve.waitUntilHealthy())
        let ready = try Curl.request("http://127.0.0.1:\(serve.admin)/readyz")
        #expect(ready.status == 503)
        #expect(ready.text == "not ready: 1 of 2 domains not served; /status (with the token) says which and why\n")
        for leak in ["broken.example", "site-config", directory.path, "app-id-format"] {
            #expect(!ready.text.contains(leak), "\(leak)")
        }
        let status = try Curl.request(
            "http://127.0.0.1:\(serve.admin)/status", headers: ["Authorization: Bearer t0ken"])
        #expect(status.status == 200)
        #expect(status.text.contains("broken.example"))
        #expect(status.text.contains("[app-id-format]"))
        #expect(serve.terminate() == 0)
    }

    @Test func strictRefusesToStartAndNoServableDomainExitsWithStatus2() throws {
        let directory = try Self.prepare()
        let strict = try Command.run(
            RepositoryPaths.executable, ["serve", "--strict", "--https-port", "\(freePort())", "--admin-port", "0"],
            currentDirectory: directory.path, timeout: 30)
        #expect(strict.status == 2)
        #expect(strict.stderr.contains("site-config/broken.example/site.json:1:"), "\(strict.stderr)")
        #expect(strict.stderr.contains("aasa-server did not start"))

        try FileManager.default.removeItem(atPath: directory.path + "/site-config/good.example")
        let none = try Command.run(
            RepositoryPaths.executable, ["serve", "--https-port", "\(freePort())", "--admin-port", "0"],
            currentDirectory: directory.path, timeout: 30)
        #expect(none.status == 2)
        #expect(none.stderr.contains("[no-domain-served]"), "\(none.stderr)")
    }

    @Test func aPortInUseIsOneErrorNamingThePort() throws {
        let directory = try Self.prepare()
        let port = freePort()
        // Something else listens on the port.
        let blocker = try #require(boundLoopbackSocket(port: port))
        defer { close(blocker) }
        #expect(listen(blocker, 1) == 0)
        let serve = try Command.run(
            RepositoryPaths.executable, ["serve", "--https-port", "\(port)", "--admin-port", "0", "--threads", "1"],
            currentDirectory: directory.path, timeout: 30)
        #expect(serve.status == 1)
        let line = try #require(serve.stderr.split(separator: "\n").first { $0.contains("[listener]") })
        #expect(line.hasPrefix("error: [listener] port \(port) on all interfaces is already in use"), "\(line)")
        #expect(line.components(separatedBy: "error").count == 2, "\(line)")
    }
}
