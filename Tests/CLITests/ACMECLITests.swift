import AASATestSupport
import Foundation
import Testing

/// `aasa-server certs acme` and `serve --acme` as an operator types them, against Debian's pebble.
@Suite(.serialized) struct ACMECLITests {
    /// The sample config and an empty certificate folder in a fresh directory, and a pebble validating on `httpPort`.
    final class Setup {
        let directory = TemporaryDirectory("aasa-acme-cli")
        let httpPort = freePort()
        let pebble: Pebble

        init() throws {
            try #require(Pebble.isInstalled, "install pebble: scripts/setup.sh --test")
            pebble = try Pebble(httpPort: httpPort)
            try directory.copy(RepositoryPaths.siteConfig, to: "site-config")
        }

        /// `--acme-directory` and `--acme-ca-file` for this pebble, and the folders.
        var common: [String] {
            [
                "--acme-directory", pebble.directoryURL, "--acme-ca-file", pebble.caFile, "--config",
                directory.path + "/site-config", "--certs", directory.path + "/certs",
            ]
        }

        func aasa(_ arguments: [String]) throws -> Command.Output {
            try Command.run(RepositoryPaths.executable, arguments, currentDirectory: directory.path, timeout: 120)
        }

        func fullchain(_ domain: String) throws -> String {
            try String(contentsOfFile: directory.path + "/certs/\(domain)/fullchain.pem", encoding: .utf8)
        }
    }

    @Test func certsAcmeStandaloneObtainsEachDomainOnceAndExits() throws {
        let setup = try Setup()
        let arguments =
            ["certs", "acme", "--standalone", "--http-port", "\(setup.httpPort)", "--acme-agree-tos"] + setup.common
        let first = try setup.aasa(arguments)
        #expect(first.status == 0, "\(first.stdout)\n\(first.stderr)")
        for domain in ["links.example", "shop.example"] {
            #expect(first.stdout.contains("\(domain): certificate valid until 20"), "\(first.stdout)")
            #expect(try setup.fullchain(domain).hasPrefix("-----BEGIN CERTIFICATE-----"))
        }
        // The issued chain verifies against pebble's root.
        let root = try setup.pebble.rootFile()
        let verified = try Command.run(
            "openssl",
            [
                "verify", "-CAfile", root, "-untrusted", setup.directory.path + "/certs/shop.example/fullchain.pem",
                setup.directory.path + "/certs/shop.example/fullchain.pem",
            ])
        #expect(verified.status == 0, "\(verified.stdout)\(verified.stderr)")
        // Run again (a cron job): nothing is due, nothing is ordered.
        let before = try setup.fullchain("shop.example")
        let second = try setup.aasa(arguments)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdout.contains("shop.example: certificate valid until"), "\(second.stdout)")
        #expect(try setup.fullchain("shop.example") == before)
    }

    @Test func certsAcmeAnsweredThroughARunningServersWebroot() throws {
        let setup = try Setup()
        let webroot = setup.directory.path + "/webroot"
        // A server that keeps its own certificates (--dev) and answers the webroot on the port pebble validates.
        let serve = try ServeProcess(
            in: setup.directory.path,
            arguments: [
                "--dev", "--http-port", "\(setup.httpPort)", "--acme-webroot", webroot, "--config", "site-config",
                "--certs", "certs",
            ])
        #expect(serve.waitUntilHealthy())
        let result = try setup.aasa(
            ["certs", "acme", "--acme-webroot", webroot, "--domain", "extra.example", "--acme-agree-tos"]
                + setup.common)
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        #expect(result.stdout.contains("extra.example: certificate valid until"), "\(result.stdout)")
        #expect(try setup.fullchain("extra.example").hasPrefix("-----BEGIN CERTIFICATE-----"))
        // The answer files are gone once validated.
        let left = try FileManager.default.contentsOfDirectory(atPath: webroot + "/.well-known/acme-challenge")
        #expect(left.isEmpty, "\(left)")
        // The operator's (development) certificates were not touched.
        #expect(!FileManager.default.fileExists(atPath: setup.directory.path + "/certs/shop.example/acme.json"))
        #expect(serve.terminate() == 0)
    }

    @Test func badInputGetsAClearErrorNamingTheFix() throws {
        let setup = try Setup()
        let standalone = ["certs", "acme", "--standalone", "--http-port", "\(setup.httpPort)"]
        // Terms of service the CA requires, not accepted: each domain says so, with the flag to pass.
        let terms = try setup.aasa(standalone + setup.common)
        #expect(terms.status == 1)
        #expect(
            terms.stderr.contains("shop.example: the CA requires agreeing to its terms of service"), "\(terms.stderr)")
        #expect(terms.stderr.contains("--acme-agree-tos"))
        // A URL that is not an ACME directory (pebble's management interface answers a PEM there).
        let notACME = try setup.aasa(
            standalone + [
                "--acme-agree-tos", "--acme-directory", "https://127.0.0.1:\(setup.pebble.managementPort)/roots/0",
                "--acme-ca-file", setup.pebble.caFile, "--certs", setup.directory.path + "/certs", "--config",
                setup.directory.path + "/site-config",
            ])
        #expect(notACME.status == 1)
        #expect(notACME.stderr.contains("it is not an ACME directory"), "\(notACME.stderr)")
        #expect(notACME.stderr.contains("/roots/0"))
        // An unreachable directory names the URL.
        let closed = "https://127.0.0.1:\(freePort())/dir"
        let unreachable = try setup.aasa(
            standalone + [
                "--acme-agree-tos", "--acme-directory", closed, "--certs", setup.directory.path + "/certs",
                "--config", setup.directory.path + "/site-config",
            ])
        #expect(unreachable.status == 1)
        #expect(unreachable.stderr.contains("could not reach the ACME server") && unreachable.stderr.contains(closed))
        // Options that cannot work are refused before anything runs.
        let noAnswer = try setup.aasa(["certs", "acme", "--acme-agree-tos"] + setup.common)
        #expect(noAnswer.status == 64 && noAnswer.stderr.contains("--standalone"), "\(noAnswer.stderr)")
        let noHTTP = try setup.aasa(["serve", "--acme"] + setup.common)
        #expect(noHTTP.status == 64 && noHTTP.stderr.contains("--http-port 80"), "\(noHTTP.stderr)")
        let email = try setup.aasa(standalone + ["--acme-email", "ops"] + setup.common)
        #expect(email.status == 64 && email.stderr.contains("is not an email address"), "\(email.stderr)")
        #expect(!FileManager.default.fileExists(atPath: setup.directory.path + "/certs/shop.example"))
    }
}
