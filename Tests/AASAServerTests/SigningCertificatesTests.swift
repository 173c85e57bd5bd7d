import AASACore
import AASATestSupport
import Foundation
import Logging
import Testing

@testable import AASAServer

/// The signer signs with the certificates the load's SNI table serves, and only with those exact files.
@Suite struct SigningCertificatesTests {
    /// Development certificates for shop.example in a fresh folder, read as a server's load reads them.
    static func served() throws -> (TemporaryDirectory, CertificateCatalog, String) {
        let directory = TemporaryDirectory("aasa-signing-certificates")
        let certs = directory.path + "/certs"
        _ = try DevCertificates(certificateDirectory: certs).ensure(names: ["shop.example"])
        var certificates = CertificateCatalog()
        let findings = certificates.read(certs, domains: ["shop.example"], at: Date())
        #expect(findings.errors.isEmpty, "\(findings)")
        return (directory, certificates, certs)
    }

    @Test func aDomainSignsWithTheCertificateItsFolderServes() throws {
        let (directory, certificates, certs) = try Self.served()
        defer { withExtendedLifetime(directory) {} }
        let files = try SigningCertificates.served(certificates, directory: certs).find("shop.example").get()
        #expect(files.folderName == "shop.example")
        #expect(
            files.chainPEM == Array(try Data(contentsOf: URL(fileURLWithPath: certs + "/shop.example/fullchain.pem"))))
        // A name only another folder's certificate covers signs with that one; a name none covers gets the finding.
        #expect(
            try SigningCertificates.served(certificates, directory: certs).find("localhost").get().folderName
                == "localhost")
        let uncovered = SigningCertificates.served(certificates, directory: certs).find("other.example")
        #expect(throws: Diagnostic.self) { try uncovered.get() }
    }

    @Test func filesChangedSinceTheLoadAreNotSignedWith() throws {
        let (directory, certificates, certs) = try Self.served()
        defer { withExtendedLifetime(directory) {} }
        // Another key replaces the served one after the load read the folder: the signer must not use it.
        _ = try DevCertificates(certificateDirectory: certs).ensure(names: ["shop.example"], replace: true)
        let result = SigningCertificates.served(certificates, directory: certs).find("shop.example")
        do {
            _ = try result.get()
            Issue.record("signed with files the SNI table does not serve")
        } catch {
            #expect(error.rule == .signingIdentity)
            #expect(error.message.contains("changed while it was being loaded"), "\(error)")
        }
    }
}
