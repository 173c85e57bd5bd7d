import AASACore
import AASATestSupport
import Foundation
import Testing

@testable import AASAMicroHTTPD
@testable import AASAServer

/// The HTTPS listener imports a certificate when a client first asks for one of its names and keeps at most
/// `--certificate-cache` of them; a certificate that then fails to import is its domain's named error on `/status`.
@Suite(.serialized) struct CertificateCacheLiveTests {
    /// The value of the sample `name` (with `labels`, as `/metrics` renders them) in `/metrics`.
    static func metric(_ live: LiveServer, _ name: String, _ labels: String = "") throws -> Int? {
        let text = String(
            decoding: try HTTPProbe.get(port: live.admin, host: "127.0.0.1", path: "/metrics").body, as: UTF8.self)
        let prefix = name + (labels.isEmpty ? "" : "{\(labels)}") + " "
        return text.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap { Int($0.dropFirst(prefix.count)) }
    }

    /// A handshake for `domain` verified by OpenSSL against the dev CA and the name: whether it succeeded.
    static func verifiedHandshake(_ live: LiveServer, _ domain: String) throws -> Bool {
        let output = try Command.run(
            "openssl",
            [
                "s_client", "-connect", "127.0.0.1:\(live.https)", "-servername", domain, "-CAfile", live.caFile,
                "-verify_hostname", domain, "-verify_return_error",
            ], input: Array("Q\n".utf8), timeout: 15)
        return output.stdout.contains("Verify return code: 0 (ok)")
    }

    @Test func aCertificateIsImportedWhenAClientFirstAsksForItAndTheCacheStaysWithinItsBound() throws {
        let live = try LiveServer(configure: { $0.certificateCache = 1 })
        func figures() throws -> [Int?] {
            try [
                Self.metric(live, "aasa_tls_certificates_cached"),
                Self.metric(live, "aasa_tls_certificate_lookups_total", "result=\"hit\""),
                Self.metric(live, "aasa_tls_certificate_lookups_total", "result=\"imported\""),
                Self.metric(live, "aasa_tls_certificate_lookups_total", "result=\"failed\""),
                Self.metric(live, "aasa_tls_certificate_evictions_total"),
            ]
        }
        // Loaded and checked, none imported for a handshake yet.
        #expect(try figures() == [0, 0, 0, 0, 0])
        #expect(try Self.verifiedHandshake(live, "shop.example"))
        #expect(try figures() == [1, 0, 1, 0, 0])
        #expect(try Self.verifiedHandshake(live, "links.example"))
        #expect(try figures() == [1, 0, 2, 0, 1])
        // shop.example was let go for links.example: imported again, and served as before.
        #expect(try Self.verifiedHandshake(live, "shop.example"))
        #expect(try figures() == [1, 0, 3, 0, 2])
        let response = try live.get("shop.example", "/.well-known/apple-app-site-association")
        #expect(response.status == 200, "\(response.error)")
        #expect(try figures()[1] == 1)
    }

    @Test func aCertificateThatFailsToImportIsItsDomainsNamedErrorOnStatus() throws {
        let scratch = TemporaryDirectory("aasa-cache-failure")
        let certs = scratch.path + "/certs"
        _ = try DevCertificates(certificateDirectory: certs).ensure(names: ["shop.example", "links.example"])
        var served = ServedCertificates()
        let findings = try served.read(certs, domains: ["shop.example", "links.example"], at: Date())
        #expect(findings.errors.isEmpty, "\(findings)")
        #expect(served.catalog.domainStatus("shop.example", at: Date())?.state == .valid)

        // The certificate as checked at the load, with a key GnuTLS will not read when a handshake asks for it.
        var shop = try #require(served.catalog.served["shop.example"])
        shop.credential = DeferredCredential(
            leaf: try shop.credential.bytes().leaf, intermediates: shop.credential.intermediates,
            key: PrivateKeyBytes(
                keepingPEM: Array("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n".utf8)),
            staple: nil)
        served.catalog.served["shop.example"] = shop
        let table = try #require(
            try CertificateTable.serving(served.catalog, temporary: nil, cache: CredentialCache(capacity: 10)))
        #expect(table.credential(id: "links.example") != nil)
        #expect(table.credential(id: "shop.example") == nil)

        let status = try #require(served.catalog.domainStatus("shop.example", at: Date()))
        #expect(status.state == .failed)
        let error = try #require(status.lastError)
        #expect(
            error.hasPrefix(
                "the certificate of folder 'shop.example' could not be imported for a handshake, so handshakes for "
                    + "shop.example fail: could not import the private key of certificate entry 'shop.example'"),
            "\(error)")
        #expect(served.catalog.domainStatus("links.example", at: Date())?.state == .valid)
        let folder = try #require(served.catalog.state("shop.example"))
        #expect(folder.serving && folder.errors.map(\.rule) == [.certificateInvalid], "\(folder.errors)")
        #expect(served.catalog.state("links.example")?.errors.isEmpty == true)
    }
}
