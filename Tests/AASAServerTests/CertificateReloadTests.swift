import AASACore
import AASATestSupport
import Foundation
import Logging
import Testing

@testable import AASAServer

/// A reload parses only the certificate folders whose files changed, and never keeps findings past the moment
/// they change with time (the leaf's expiry, the staple's nextUpdate).
@Suite struct CertificateReloadTests {
    /// The first load of `certs`, and what each folder's next load may skip.
    static func firstLoad(_ directory: CertificateDirectory, now: Date = Date())
        -> (folders: [CertificateDirectory.Folder], known: [String: CertificateDirectory.KnownFolder])
    {
        let folders = directory.loadFolders(now: now)
        var known: [String: CertificateDirectory.KnownFolder] = [:]
        for folder in folders { known[folder.name] = folder.certificate?.known }
        return (folders, known)
    }

    @Test func aFolderWithTheSameBytesIsNotParsedAgainAndAnyChangedByteIs() throws {
        let scratch = TemporaryDirectory("aasa-cert-reload")
        let certs = scratch.path + "/certs"
        _ = try DevCertificates(certificateDirectory: certs).ensure(names: ["shop.example", "links.example"])
        let directory = CertificateDirectory(path: certs)
        let (first, known) = Self.firstLoad(directory)
        #expect(first.map(\.name) == ["links.example", "localhost", "shop.example"])  // certs dev adds localhost
        #expect(first.allSatisfy { $0.certificate != nil && !$0.unchanged })

        var again = directory.loadFolders(known: known)
        #expect(again.allSatisfy { $0.unchanged && $0.certificate == nil && $0.diagnostics.isEmpty })

        // Rewritten with the same bytes (certbot renewing into the same file would not): still unchanged.
        let shopKey = certs + "/shop.example/privkey.pem"
        let keyBytes = try Data(contentsOf: URL(fileURLWithPath: shopKey))
        try keyBytes.write(to: URL(fileURLWithPath: shopKey))
        #expect(directory.loadFolders(known: known).first { $0.name == "shop.example" }?.unchanged == true)

        // One changed byte in the key: read again, and refused where the key is parsed (GnuTLS's import, which
        // the server and `check` both go through: `importing`).
        var broken = keyBytes
        broken[broken.count / 2] ^= 0x01
        try broken.write(to: URL(fileURLWithPath: shopKey))
        let reread = directory.loadFolders(known: known).first { $0.name == "shop.example" }
        #expect(reread?.certificate?.keyPEM == Array(broken))
        again = directory.loadFolders(known: known, importing: true)
        let shop = try #require(again.first { $0.name == "shop.example" })
        #expect(!shop.unchanged)
        #expect(shop.certificate == nil)
        #expect(shop.diagnostics.map(\.rule) == [.certificateInvalid], "\(shop.diagnostics)")
        #expect(shop.diagnostics.first?.file == shopKey)
        #expect(again.first { $0.name == "links.example" }?.unchanged == true)

        // A staple file appearing is a change too.
        try keyBytes.write(to: URL(fileURLWithPath: shopKey))
        try Data([0x30, 0x03, 0x0a, 0x01, 0x01]).write(to: URL(fileURLWithPath: certs + "/shop.example/ocsp.der"))
        let stapled = try #require(directory.loadFolders(known: known).first { $0.name == "shop.example" })
        #expect(!stapled.unchanged)
        #expect(stapled.diagnostics.map(\.rule) == [.ocspStaple], "\(stapled.diagnostics)")
        // ...and a refused staple is checked again at every load: its findings may depend on the date.
        let knownWithStaple = try #require(stapled.certificate?.known)
        #expect(
            directory.loadFolders(known: ["shop.example": knownWithStaple]).first { $0.name == "shop.example" }?
                .unchanged == false)
    }

    @Test func findingsAreMadeAgainOnceTheLeafHasExpired() throws {
        let scratch = TemporaryDirectory("aasa-cert-reload")
        let certs = scratch.path + "/certs"
        _ = try DevCertificates(certificateDirectory: certs).ensure(names: ["shop.example"])
        let directory = CertificateDirectory(path: certs)
        let (first, known) = Self.firstLoad(directory)
        func shop(_ folders: [CertificateDirectory.Folder]) -> CertificateDirectory.Folder? {
            folders.first { $0.name == "shop.example" }
        }
        let notAfter = try #require(shop(first)?.certificate?.notAfter)
        #expect(shop(directory.loadFolders(now: notAfter.addingTimeInterval(-60), known: known))?.unchanged == true)
        let later = shop(directory.loadFolders(now: notAfter.addingTimeInterval(60), known: known))
        #expect(later?.unchanged == false)
        #expect(later?.diagnostics.map(\.rule) == [.certificateExpired])
    }

    @Test func anExposedKeyIsReportedEvenWhenTheFilesDidNotChange() throws {
        let scratch = TemporaryDirectory("aasa-cert-reload")
        let certs = scratch.path + "/certs"
        _ = try DevCertificates(certificateDirectory: certs).ensure(names: ["shop.example"])
        let (_, known) = Self.firstLoad(CertificateDirectory(path: certs))
        try FileManager.default.setAttributes(
            [.posixPermissions: 0o644], ofItemAtPath: certs + "/shop.example/privkey.pem")
        let warned = try #require(
            CertificateDirectory(path: certs).loadFolders(known: known).first { $0.name == "shop.example" })
        #expect(warned.unchanged)
        #expect(warned.diagnostics.map(\.rule) == [.privateKeyPermissions], "\(warned)")
        let refused = try #require(
            CertificateDirectory(path: certs, refusesExposedKeys: true).loadFolders(known: known).first {
                $0.name == "shop.example"
            })
        #expect(!refused.unchanged)
        #expect(refused.certificate == nil)
    }

    @Test func aFolderParsedAgainForItsDatesAndFoundTheSameIsNotParsedAtEveryLoadAfter() throws {
        let scratch = TemporaryDirectory("aasa-cert-reload")
        var configuration = ServerConfiguration()
        configuration.certificateDirectory = scratch.path + "/certs"
        _ = try DevCertificates(certificateDirectory: configuration.certificateDirectory).ensure(names: ["shop.example"]
        )
        var catalog = ServedCertificates()
        _ = try catalog.read(configuration.certificateDirectory, domains: ["shop.example"], at: Date())
        let first = try #require(catalog.served["shop.example"])
        let table = catalog.table
        // Past the leaf's notAfter its findings are due again: parsed, found to be the same files, kept.
        let expired = first.notAfter.addingTimeInterval(60)
        let findings = try catalog.read(configuration.certificateDirectory, domains: ["shop.example"], at: expired)
        #expect(findings.contains { $0.rule == .certificateExpired })
        #expect(catalog.table === table)  // the same certificate: no new SNI table
        // ...and its findings now hold for good (an expired leaf stays expired), so later loads skip it.
        let known = try #require(catalog.served["shop.example"]?.known)
        #expect(known.validUntil.map { $0 > expired.addingTimeInterval(365 * 86_400) } == true)
        let later = CertificateDirectory(path: configuration.certificateDirectory).loadFolders(
            now: expired.addingTimeInterval(60), known: ["shop.example": known])
        #expect(later.first { $0.name == "shop.example" }?.unchanged == true)
    }
}
