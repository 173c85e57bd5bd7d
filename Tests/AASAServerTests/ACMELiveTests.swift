import AASACore
import AASATestSupport
import Foundation
import Logging
import Testing

@testable import AASAServer

/// A server with `--acme` against Debian's pebble: the sample's two domains, an empty certificate folder unless a
/// test puts something there, and the plain HTTP listener on the port pebble validates.
final class ACMELiveServer: @unchecked Sendable {
    let directory = TemporaryDirectory("aasa-acme")
    let pebble: Pebble
    let httpPort = freePort()
    private(set) var server: Server?
    var configDirectory: String { directory.path + "/site-config" }
    var certsDirectory: String { directory.path + "/certs" }
    var https: UInt16 { server?.httpsPort ?? 0 }

    /// Copies the sample config, lets `prepare` add to the folders, and starts pebble with `environment`.
    init(pebbleEnvironment: [String: String] = [:], prepare: (ACMELiveServer) throws -> Void = { _ in }) throws {
        try #require(Pebble.isInstalled, "install pebble: scripts/setup.sh --test")
        pebble = try Pebble(httpPort: httpPort, environment: pebbleEnvironment)
        try directory.copy(RepositoryPaths.siteConfig, to: "site-config")
        try FileManager.default.createDirectory(atPath: certsDirectory, withIntermediateDirectories: true)
        try prepare(self)
    }

    deinit { server?.stop(timeout: .seconds(1)) }

    /// Starts the server, its ACME options changed by `configure`.
    func start(configure: (inout ACMESettings) -> Void = { _ in }) throws {
        var settings = ACMESettings()
        settings.directoryURL = pebble.directoryURL
        settings.caFile = pebble.caFile
        settings.agreesToTerms = true
        settings.email = "ops@example.com"
        settings.minimumRetry = .seconds(1)
        configure(&settings)
        var configuration = ServerConfiguration()
        configuration.configDirectory = configDirectory
        configuration.certificateDirectory = certsDirectory
        configuration.httpsPort = 0
        configuration.httpPort = httpPort
        configuration.adminPort = 0
        configuration.threadPoolSize = 2
        // A connection a test keeps open across an order (OpenTLSConnection) sends its request only after the order,
        // which takes longer than the slowloris deadline and the idle timeout on a slow machine.
        configuration.headerTimeout = .seconds(600)
        configuration.idleTimeoutSeconds = 600
        configuration.acme = settings
        let server = Server(configuration: configuration, logger: Logger(label: "test"))
        try server.start()
        self.server = server
    }

    func stop() {
        server?.stop(timeout: .seconds(1))
        server = nil
    }

    /// The ACME status of `domain` once `condition` holds (polled for up to `seconds`), or the last one seen.
    @discardableResult
    func waitFor(
        _ domain: String, seconds: Double = 60, until condition: (DomainCertificateStatus) -> Bool
    ) throws -> DomainCertificateStatus {
        let deadline = TestTime.deadline(seconds)
        var last: DomainCertificateStatus?
        while Date() < deadline {
            last = server?.acme?.statuses[domain]
            if let last, condition(last) { return last }
            usleep(100_000)
        }
        Issue.record(
            "\(domain) never got there; last status: \(String(describing: last)); pebble: \(pebble.log.suffix(2000))")
        return try #require(last)
    }

    /// Waits until `domain` has an issued certificate that the server serves.
    func waitUntilIssued(_ domain: String, replacing fingerprint: String? = nil) throws -> String {
        let deadline = TestTime.deadline(60)
        while Date() < deadline {
            if server?.acme?.statuses[domain]?.state == .valid, let served = try? servedFingerprint(domain),
                served == (try? fileFingerprint(domain)), served != fingerprint
            {
                return served
            }
            usleep(200_000)
        }
        Issue.record(
            "\(domain): no new certificate served; status \(String(describing: server?.acme?.statuses[domain]))")
        return ""
    }

    /// The fingerprint of the certificate a new connection for `domain` gets.
    func servedFingerprint(_ domain: String) throws -> String {
        let handshake = try Command.run(
            "openssl", ["s_client", "-connect", "127.0.0.1:\(https)", "-servername", domain],
            input: Array("Q\n".utf8), timeout: 15)
        return try LiveReloadTests.fingerprint(pem: handshake.stdout)
    }

    /// The fingerprint of `certs/<domain>/fullchain.pem`'s leaf.
    func fileFingerprint(_ domain: String) throws -> String {
        try LiveReloadTests.fingerprint(
            pem: String(contentsOfFile: certsDirectory + "/\(domain)/fullchain.pem", encoding: .utf8))
    }

    /// The plain HTTP listener's answer for `path` on `host`.
    func plain(_ host: String, _ path: String) throws -> Answer {
        try HTTPProbe.get(port: httpPort, host: host, path: path)
    }
}

@Suite(.serialized) struct ACMELiveTests {
    static let domains = ["links.example", "shop.example"]
    static let associationRequest =
        "GET /.well-known/apple-app-site-association HTTP/1.1\r\nHost: %@\r\nConnection: close\r\n\r\n"

    @Test func emptyCertificateFolderGetsTrustedCertificatesAndANewFolderOneWithoutRestart() throws {
        let live = try ACMELiveServer()
        try live.start()
        for domain in Self.domains { _ = try live.waitUntilIssued(domain) }
        // Served by SNI, each chain verified against pebble's root by openssl.
        let root = try live.pebble.rootFile()
        for domain in Self.domains {
            let connection = try OpenTLSConnection(port: live.https, serverName: domain, caFile: root)
            let response = try connection.request(String(format: Self.associationRequest, domain))
            #expect(response.hasPrefix("HTTP/1.1 200"), "\(domain): \(response.prefix(200))")
            let status = try #require(live.server?.acme?.statuses[domain])
            #expect(status.source == .acme && status.state == .valid && status.lastError == nil)
            let expiry = try #require(status.expiry)
            let renewal = try #require(status.nextRenewal)
            // A third of the lifetime before expiry, moved earlier by at most a tenth of that.
            #expect(renewal < expiry && renewal > Date())
            // certbot's layout, the key private to the server's user, and the record that marks it as ACME's.
            let folder = live.certsDirectory + "/" + domain
            #expect(try Self.mode(folder + "/privkey.pem") == 0o600)
            #expect(CertificateRecord.read(in: folder)?.names == [domain])
        }
        #expect(try Self.mode(live.certsDirectory + "/acme/account.key") == 0o600)
        #expect(live.server?.acme?.orderCounts["valid"] == 2)
        // A client without SNI gets the first configured domain's certificate, whichever was issued first.
        let withoutName = try Command.run(
            "openssl", ["s_client", "-connect", "127.0.0.1:\(live.https)", "-noservername"], input: Array("Q\n".utf8),
            timeout: 15)
        #expect(try LiveReloadTests.fingerprint(pem: withoutName.stdout) == live.fileFingerprint("links.example"))
        // /status and /metrics say the same.
        let status = try HTTPProbe.get(port: live.server!.adminPort!, host: "127.0.0.1", path: "/status")
        #expect(status.text.contains(#""source": "acme""#) && status.text.contains(#""nextRenewal": "20"#))
        let metrics = try HTTPProbe.get(port: live.server!.adminPort!, host: "127.0.0.1", path: "/metrics")
        #expect(metrics.text.contains(#"aasa_acme_orders_total{result="valid"} 2"#), "\(metrics.text)")

        // A third domain folder: its certificate comes by itself, no restart.
        _ = try live.directory.write(
            "site-config/third.example/site.json", #"{"webCredentials": ["ABCDE12345.com.example.third"]}"#)
        _ = try live.waitUntilIssued("third.example")
        let third = try OpenTLSConnection(port: live.https, serverName: "third.example", caFile: root)
        #expect(try third.request(String(format: Self.associationRequest, "third.example")).hasPrefix("HTTP/1.1 200"))
    }

    @Test func untilIssuedAHandshakeGetsATemporaryCertificateAndChallengesAreAnswered() throws {
        let live = try ACMELiveServer()
        live.pebble.stop()
        try live.start()
        // The CA is down: the failure names the URL and the fix, and the domain is retried.
        let failed = try live.waitFor("shop.example") { $0.state == .failed }
        #expect(failed.source == .acme && failed.expiry == nil)
        #expect(failed.lastError?.contains("could not reach the ACME server") == true, "\(failed)")
        #expect(failed.lastError?.contains(live.pebble.directoryURL) == true, "\(failed)")
        #expect(try #require(failed.nextRenewal) > Date().addingTimeInterval(-1))
        // Meanwhile the handshake completes with a self-signed certificate that says what it is and verifies nowhere.
        let handshake = try Command.run(
            "openssl",
            [
                "s_client", "-connect", "127.0.0.1:\(live.https)", "-servername", "shop.example", "-CAfile",
                live.pebble.caFile, "-verify_return_error",
            ], input: Array("Q\n".utf8), timeout: 15)
        #expect(handshake.stdout.contains("aasa-server temporary certificate"), "\(handshake.stdout.prefix(800))")
        #expect(handshake.status != 0)
        // The plain HTTP listener answers a published challenge for its domain only, and nothing else there.
        let acme = try #require(live.server?.acme)
        acme.challenges.publish(token: "tok_en-1", keyAuthorization: "tok_en-1.thumb", domain: "shop.example")
        let path = "/.well-known/acme-challenge/tok_en-1"
        let answer = try live.plain("shop.example", path)
        #expect(answer.status == 200 && answer.text == "tok_en-1.thumb")
        #expect(try live.plain("links.example", path).status == 404)
        #expect(try live.plain("shop.example", "/.well-known/acme-challenge/other").status == 404)
        #expect(try live.plain("shop.example", "/.well-known/acme-challenge/..%2Fsecret").status == 404)
        acme.challenges.withdraw(token: "tok_en-1", domain: "shop.example")
        #expect(try live.plain("shop.example", path).status == 404)

        // The CA comes back: the next retry gets the certificate.
        try live.pebble.start()
        _ = try live.waitUntilIssued("shop.example")
        let root = try live.pebble.rootFile()
        _ = try OpenTLSConnection(port: live.https, serverName: "shop.example", caFile: root)
    }

    @Test func forcedRenewalWithTheCAStoppedMidwayKeepsTheOldCertificateUntilTheNewOneServesNewConnections() throws {
        let live = try ACMELiveServer()
        try live.start()
        let first = try live.waitUntilIssued("shop.example")
        let oldRoot = try live.pebble.rootFile()
        let account = try String(contentsOfFile: live.certsDirectory + "/acme/account.key", encoding: .utf8)
        live.stop()

        // A restart with a renewal window wider than the lifetime renews at once; the CA is down, so the renewal
        // fails, and the certificate in place keeps being served, to new connections too.
        live.pebble.stop()
        try live.start { $0.renewBefore = .seconds(100_000 * 86_400) }
        let open = try OpenTLSConnection(port: live.https, serverName: "shop.example", caFile: oldRoot)
        let failed = try live.waitFor("shop.example") { $0.state == .failed }
        #expect(failed.expiry != nil && failed.lastError?.contains("could not reach the ACME server") == true)
        #expect(try live.servedFingerprint("shop.example") == first)

        // The CA is back (a new pebble: new root, and no accounts: the server registers its key again).
        try live.pebble.start()
        let renewed = try live.waitUntilIssued("shop.example", replacing: first)
        #expect(renewed != first)
        let newRoot = try live.pebble.rootFile()
        _ = try OpenTLSConnection(port: live.https, serverName: "shop.example", caFile: newRoot)
        // The connection opened before the renewal still works, on the old certificate.
        #expect(open.handshake.contains("Verify return code: 0 (ok)"))
        #expect(try open.request(String(format: Self.associationRequest, "shop.example")).hasPrefix("HTTP/1.1 200"))
        // The same account key across restarts; renewed once, not again and again.
        #expect(try String(contentsOfFile: live.certsDirectory + "/acme/account.key", encoding: .utf8) == account)
        let status = try #require(live.server?.acme?.statuses["shop.example"])
        #expect(try #require(status.nextRenewal) > Date().addingTimeInterval(86_400))
    }

    @Test func rejectedNoncesAreRetried() throws {
        let live = try ACMELiveServer(pebbleEnvironment: ["PEBBLE_WFE_NONCEREJECT": "50"])
        try live.start()
        for domain in Self.domains { _ = try live.waitUntilIssued(domain) }
        #expect(live.server?.acme?.orderCounts["failed", default: 0] == 0)
    }

    @Test func anOperatorsCertificateIsNeverTouched() throws {
        let live = try ACMELiveServer { live in
            _ = try DevCertificates(certificateDirectory: live.certsDirectory).ensure(names: ["shop.example"])
        }
        let folder = live.certsDirectory + "/shop.example"
        let before = try Self.files(folder)
        try live.start { $0.renewBefore = .seconds(100_000 * 86_400) }
        _ = try live.waitUntilIssued("links.example")
        let shop = try #require(live.server?.acme?.statuses["shop.example"])
        #expect(shop.source == .files && shop.state == .valid && shop.nextRenewal == nil)
        #expect(try Self.files(folder) == before)
        #expect(!FileManager.default.fileExists(atPath: CertificateFile.acmeRecord.path(in: folder)))
        #expect(live.server?.acme?.orderCounts["valid"] == 1)
    }

    static func mode(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    static func files(_ folder: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder) {
            files[name] = try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name))
        }
        return files
    }
}
