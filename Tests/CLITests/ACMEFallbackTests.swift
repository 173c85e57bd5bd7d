import AASATestSupport
import Foundation
import Testing

/// `serve --acme --acme-fallback-directory`: the primary CA is pebble behind the ACME front (failing every new order,
/// or pausing them), the fallback a second pebble with roots of its own; the served chains verify against the
/// fallback's root, and `/status` names the CA that issued each.
@Suite(.serialized, .enabled(if: Pebble.isInstalled)) struct ACMEFallbackTests {
    final class Setup {
        let directory = TemporaryDirectory("aasa-acme-fallback")
        let httpPort = freePort()
        let primary: Pebble
        let front: ACMEFront
        let fallback: Pebble

        init() throws {
            primary = try Pebble(httpPort: httpPort)
            front = try ACMEFront(pebble: primary)
            fallback = try Pebble(httpPort: httpPort)
            try directory.copy(RepositoryPaths.siteConfig, to: "site-config")
        }

        func serve(_ extra: [String] = []) throws -> ServeProcess {
            try ServeProcess(
                in: directory.path,
                arguments: [
                    "--acme", "--http-port", "\(httpPort)", "--acme-directory", front.directoryURL, "--acme-ca-file",
                    primary.caFile, "--acme-fallback-directory", fallback.directoryURL, "--acme-fallback-ca-file",
                    fallback.caFile, "--acme-agree-tos", "--acme-retry-min", "600", "--config", "site-config",
                    "--certs", "certs",
                ] + extra, errorLog: directory.path + "/serve.log")
        }

        var log: String { (try? String(contentsOfFile: directory.path + "/serve.log", encoding: .utf8)) ?? "" }

        /// Each domain's `certificate` member of `/status`, once every domain is valid (polled up to a minute).
        func certificates(_ serve: ServeProcess) throws -> [String: [String: Any]]? {
            let deadline = TestTime.deadline(60)
            while Date() < deadline {
                let answer = try Curl.request("http://127.0.0.1:\(serve.admin)/status")
                let status = try? JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any]
                var certificates: [String: [String: Any]] = [:]
                for (name, domain) in status?["domains"] as? [String: [String: Any]] ?? [:] {
                    if let certificate = domain["certificate"] as? [String: Any] { certificates[name] = certificate }
                }
                if certificates.count == 2, certificates.values.allSatisfy({ $0["state"] as? String == "valid" }) {
                    return certificates
                }
                usleep(250_000)
            }
            return nil
        }

        func verifies(_ serve: ServeProcess, _ domain: String, root: String) throws -> Bool {
            try Curl.request(
                "https://\(domain):\(serve.port)/.well-known/apple-app-site-association", caFile: root,
                resolve: (domain, serve.port)
            ).status == 200
        }
    }

    @Test func aPrimaryCAThatCannotIssueSendsTheOrdersToTheFallback() throws {
        let setup = try Setup()
        try setup.front.failOrders(true)
        let serve = try setup.serve()
        let certificates = try #require(try setup.certificates(serve), "\(setup.log.suffix(3000))")
        for domain in ["links.example", "shop.example"] {
            #expect(certificates[domain]?["issuer"] as? String == setup.fallback.directoryURL, "\(certificates)")
            #expect(try setup.verifies(serve, domain, root: try setup.fallback.rootFile()))
        }
        #expect(setup.log.contains("ordering from the fallback CA"))
        #expect(serve.terminate() == 0)
    }

    @Test func aRateLimitPauseLongerThanFallbackAfterSendsTheOrdersToTheFallback() throws {
        let setup = try Setup()
        try setup.front.pause(seconds: 7200)
        let serve = try setup.serve(["--acme-fallback-after", "1"])
        let certificates = try #require(try setup.certificates(serve), "\(setup.log.suffix(3000))")
        for domain in ["links.example", "shop.example"] {
            #expect(certificates[domain]?["issuer"] as? String == setup.fallback.directoryURL, "\(certificates)")
        }
        // The primary saw the refused orders only: a validation failure never switches CA (ACMELiveTests).
        #expect(try setup.front.stats().newOrders == 0)
        #expect(serve.terminate() == 0)
    }

    @Test func aWorkingPrimaryIssuesAndIsNamedAsTheIssuer() throws {
        let setup = try Setup()
        let serve = try setup.serve()
        let certificates = try #require(try setup.certificates(serve), "\(setup.log.suffix(3000))")
        for domain in ["links.example", "shop.example"] {
            #expect(certificates[domain]?["issuer"] as? String == setup.front.directoryURL, "\(certificates)")
            #expect(try setup.verifies(serve, domain, root: try setup.primary.rootFile()))
        }
        #expect(serve.terminate() == 0)
    }
}
