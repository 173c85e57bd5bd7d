import AASATestSupport
import Foundation
import Testing

/// `serve --acme` with `--acme-profile` (through the ACME front, which lists profiles pebble 2.4 lacks) and with an
/// external account binding (pebble requiring one), as an operator runs it: a real daemon, real pebble, the served
/// chain verified against pebble's root.
@Suite(.serialized) struct ACMEProfileAndBindingTests {
    /// The HMAC key pebble knows for `kid-1`, base64url as a CA hands it out (32 bytes).
    static let macKey = "zWNDZM6eQGHWpSRTPal5eIUYFTu7EajVIoguysqZ9wG44nMEtx3MUAsUDkMTQ12W"

    final class Setup {
        let directory = TemporaryDirectory("aasa-acme-options")
        let httpPort = freePort()
        let pebble: Pebble
        let front: ACMEFront?

        init(profiles: [String: String]? = nil, externalAccountKeys: [String: String] = [:]) throws {
            try #require(Pebble.isInstalled, "install pebble: scripts/setup.sh --test")
            let pebble = try Pebble(httpPort: httpPort, externalAccountKeys: externalAccountKeys)
            self.pebble = pebble
            front = try profiles.map { try ACMEFront(pebble: pebble, profiles: $0) }
            try directory.copy(RepositoryPaths.siteConfig, to: "site-config")
        }

        var directoryURL: String { front?.directoryURL ?? pebble.directoryURL }

        var arguments: [String] {
            [
                "--acme", "--http-port", "\(httpPort)", "--acme-directory", directoryURL, "--acme-ca-file",
                pebble.caFile, "--acme-agree-tos", "--acme-retry-min", "600", "--config", "site-config", "--certs",
                "certs",
            ]
        }

        /// `serve` with `extra`, its log in `serve.log`.
        func serve(_ extra: [String]) throws -> ServeProcess {
            try ServeProcess(in: directory.path, arguments: arguments + extra, errorLog: directory.path + "/serve.log")
        }

        /// `serve` with `extra` run to its end (it must stop by itself).
        func serveToTheEnd(_ extra: [String]) throws -> Command.Output {
            try Command.run(
                RepositoryPaths.executable,
                ["serve", "--https-port", "\(freePort())", "--admin-port", "\(freePort())"] + arguments + extra,
                currentDirectory: directory.path, timeout: 30)
        }

        var log: String { (try? String(contentsOfFile: directory.path + "/serve.log", encoding: .utf8)) ?? "" }

        /// Whether a handshake for `domain` verifies against pebble's root (polled up to `seconds`).
        func servesTrusted(_ domain: String, port: UInt16, seconds: Double = 60) throws -> Bool {
            let root = try pebble.rootFile()
            let deadline = TestTime.deadline(seconds)
            while Date() < deadline {
                let handshake = try Command.run(
                    "openssl",
                    [
                        "s_client", "-connect", "127.0.0.1:\(port)", "-servername", domain, "-CAfile", root,
                        "-verify_return_error",
                    ], input: Array("Q\n".utf8), timeout: 15)
                if handshake.status == 0, handshake.stdout.contains("Verify return code: 0 (ok)") { return true }
                usleep(250_000)
            }
            return false
        }

        /// `/status` from the admin listener.
        func status(_ serve: ServeProcess) throws -> String {
            try Curl.request("http://127.0.0.1:\(serve.admin)/status").text
        }
    }

    static let profiles = ["classic": "the default profile", "tlsserver": "45-day certificates for TLS servers"]

    @Test func aListedProfileIsAskedForInEveryOrderAndTheCertificatesAreServed() throws {
        let setup = try Setup(profiles: Self.profiles)
        let serve = try setup.serve(["--acme-profile", "tlsserver"])
        for domain in ["links.example", "shop.example"] {
            #expect(try setup.servesTrusted(domain, port: serve.port), "\(domain): \(setup.log)")
        }
        let stats = try #require(setup.front).stats()
        #expect(stats.newOrders == 2 && stats.profiles == ["tlsserver", "tlsserver"], "\(stats)")
        #expect(serve.terminate() == 0)
    }

    @Test(arguments: [
        (profiles: profiles as [String: String]?, lists: "lists classic, tlsserver"),
        (profiles: nil, lists: "lists no profiles"),
    ])
    func aProfileTheDirectoryDoesNotListStopsTheStart(_ ca: (profiles: [String: String]?, lists: String)) throws {
        // Without profiles the front still stands in front of pebble: its directory simply has no meta.profiles.
        let setup = try Setup(profiles: ca.profiles ?? [:])
        let result = try setup.serveToTheEnd(["--acme-profile", "nope"])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("'nope'") && result.stderr.contains(ca.lists), "\(result.stderr)")
        #expect(result.stderr.contains(setup.directoryURL) && result.stderr.contains("--acme-profile"))
        #expect(try #require(setup.front).stats().newOrders == 0)
    }

    @Test func theRightBindingRegistersTheAccountAndTheCertificatesAreServed() throws {
        let setup = try Setup(externalAccountKeys: ["kid-1": Self.macKey])
        let keyFile = try setup.directory.write("eab.key", Self.macKey + "\n")
        let serve = try setup.serve(["--acme-eab-kid", "kid-1", "--acme-eab-hmac-key-file", keyFile])
        for domain in ["links.example", "shop.example"] {
            #expect(try setup.servesTrusted(domain, port: serve.port), "\(domain): \(setup.log)")
        }
        // The key is never logged.
        #expect(!setup.log.contains(Self.macKey))
        #expect(serve.terminate() == 0)
    }

    @Test func aWrongKeyGetsNoCertificateAndStatusNamesTheRefusalAndTheOptions() throws {
        let setup = try Setup(externalAccountKeys: ["kid-1": Self.macKey])
        // A key of the same length, but not the one pebble knows for kid-1.
        let keyFile = try setup.directory.write("eab.key", String(Self.macKey.reversed()))
        let serve = try setup.serve(["--acme-eab-kid", "kid-1", "--acme-eab-hmac-key-file", keyFile])
        #expect(serve.waitUntilHealthy())
        var status = ""
        let deadline = TestTime.deadline(60)
        while Date() < deadline {
            status = try setup.status(serve)
            if status.contains("--acme-eab-hmac-key-file") { break }
            usleep(250_000)
        }
        #expect(status.contains("the CA refused the external account binding"), "\(status)")
        #expect(status.contains("--acme-eab-kid") && status.contains("--acme-eab-hmac-key-file"))
        #expect(!FileManager.default.fileExists(atPath: setup.directory.path + "/certs/shop.example/fullchain.pem"))
        #expect(!setup.pebble.log.contains("Added order"))
        #expect(serve.terminate() == 0)
    }

    @Test func aCARequiringABindingWithoutOneStopsTheStartNamingTheOptions() throws {
        let setup = try Setup(externalAccountKeys: ["kid-1": Self.macKey])
        let result = try setup.serveToTheEnd([])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("requires an external account binding"), "\(result.stderr)")
        #expect(result.stderr.contains("--acme-eab-kid") && result.stderr.contains("--acme-eab-hmac-key-file"))
    }

    @Test(arguments: [
        (["--acme-eab-kid", "kid-1"], "--acme-eab-kid and --acme-eab-hmac-key-file go together"),
        (["--acme-eab-kid", "kid-1", "--acme-eab-hmac-key-file", "KEYFILE"], "does not hold base64url text"),
        (["--acme-profile", "two words"], "is not a profile name"),
    ])
    func badOptionsAreUsageErrorsNamingTheFix(_ extra: [String], _ message: String) throws {
        let directory = TemporaryDirectory("aasa-acme-options")
        let keyFile = try directory.write("eab.key", "not+base64url/")
        let result = try Command.run(
            RepositoryPaths.executable,
            ["serve", "--acme", "--http-port", "\(freePort())", "--acme-agree-tos"]
                + extra.map { $0 == "KEYFILE" ? keyFile : $0 }, currentDirectory: directory.path, timeout: 30)
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
        if extra.contains("KEYFILE") { #expect(result.stderr.contains(keyFile)) }
    }
}
