import AASAOpenSSL
import AASATestSupport
import Foundation
import Testing

@Suite struct DevCertificateAuthorityTests {
    @Test func newCAIsAnECDSACertificateAuthorityWithPrivateKeyFile0600() throws {
        let root = try makeTemporaryDirectory()
        defer { removeDirectory(root) }
        let directory = root + "/nested/ca"
        let ca = try DevCertificateAuthority.loadOrCreate(directory: directory)

        #expect(ca.certificate.isCA)
        #expect(ca.certificate.publicKeyDescription == "ECDSA P-256")
        #expect(ca.certificate.subjectCommonName?.hasPrefix("aasa-server development CA (") == true)
        #expect(ca.certificate.subjectName == ca.certificate.issuerName)
        let years = ca.certificate.notAfter.timeIntervalSince(ca.certificate.notBefore) / (365 * 86400)
        #expect(years > 9.9 && years < 10.1)
        #expect(fileMode(directory + "/ca-key.pem") == 0o600)
        #expect(fileMode(directory) == 0o700)

        // OpenSSL's own view: CA:TRUE and keyCertSign are present and critical.
        let text = try runTool(["openssl", "x509", "-in", directory + "/ca.pem", "-noout", "-text"])
        #expect(text.status == 0)
        #expect(text.output.contains("CA:TRUE"))
        #expect(text.output.contains("Certificate Sign"))
    }

    @Test func loadingTwiceReturnsTheSameCA() throws {
        let directory = try makeTemporaryDirectory()
        defer { removeDirectory(directory) }
        let first = try DevCertificateAuthority.loadOrCreate(directory: directory)
        let second = try DevCertificateAuthority.loadOrCreate(directory: directory)
        #expect(first.certificate.sha256Fingerprint == second.certificate.sha256Fingerprint)
        #expect(second.privateKey.matches(first.certificate))
    }

    @Test func aLoneCertificateFileIsRefusedInsteadOfOverwritten() throws {
        let directory = try makeTemporaryDirectory()
        defer { removeDirectory(directory) }
        _ = try DevCertificateAuthority.loadOrCreate(directory: directory)
        try FileManager.default.removeItem(atPath: directory + "/ca-key.pem")
        let error = #expect(throws: OpenSSLError.self) {
            try DevCertificateAuthority.loadOrCreate(directory: directory)
        }
        #expect(error?.code == .inconsistentFiles)
        #expect(FileManager.default.fileExists(atPath: directory + "/ca.pem"))
    }

    @Test func issuedLeafVerifiesWithTheRealOpenSSLTool() throws {
        let directory = try makeTemporaryDirectory()
        defer { removeDirectory(directory) }
        let ca = try DevCertificateAuthority.loadOrCreate(directory: directory)
        let issued = try ca.issue(names: ["a.test", "*.wild.test", "127.0.0.1", "::1"])
        let leafPath = directory + "/leaf.pem"
        try issued.certificatePEM().write(toFile: leafPath, atomically: true, encoding: .utf8)

        let verify = try runTool([
            "openssl", "verify", "-CAfile", ca.certificatePath, "-purpose", "sslserver", leafPath,
        ])
        #expect(verify.status == 0, "\(verify.output) \(verify.error)")
        #expect(verify.output.contains("leaf.pem: OK"))
        for host in ["a.test", "x.wild.test"] {
            let check = try runTool([
                "openssl", "verify", "-CAfile", ca.certificatePath, "-verify_hostname", host, leafPath,
            ])
            #expect(check.status == 0, "\(host): \(check.error)")
        }
        let wrongHost = try runTool([
            "openssl", "verify", "-CAfile", ca.certificatePath, "-verify_hostname", "b.test", leafPath,
        ])
        #expect(wrongHost.status != 0)
        let ipCheck = try runTool([
            "openssl", "verify", "-CAfile", ca.certificatePath, "-verify_ip", "127.0.0.1", leafPath,
        ])
        #expect(ipCheck.status == 0, "\(ipCheck.error)")

        let text = try runTool(["openssl", "x509", "-in", leafPath, "-noout", "-text"])
        #expect(text.output.contains("TLS Web Server Authentication"))
        #expect(text.output.contains("CA:FALSE"))
        #expect(text.output.contains("X509v3 Authority Key Identifier"))
        #expect(text.output.contains("X509v3 Subject Key Identifier"))
    }

    @Test func issuedLeafHasRequestedNamesKeyAndValidity() throws {
        let directory = try makeTemporaryDirectory()
        defer { removeDirectory(directory) }
        let ca = try DevCertificateAuthority.loadOrCreate(directory: directory)
        let issued = try ca.issue(names: ["A.Test", "127.0.0.1"])
        let leaf = issued.certificate
        #expect(leaf.dnsNames == ["a.test"])
        #expect(leaf.ipAddresses == ["127.0.0.1"])
        #expect(leaf.subjectCommonName == "a.test")
        #expect(leaf.issuerName == ca.certificate.subjectName)
        #expect(!leaf.isCA)
        #expect(leaf.publicKeyDescription == "ECDSA P-256")
        #expect(leaf.publicKeyBits == 256)
        #expect(issued.privateKey.matches(leaf))
        let days = leaf.notAfter.timeIntervalSince(leaf.notBefore) / 86400
        #expect(days == 398)
        #expect(leaf.notBefore < Date() && leaf.notAfter > Date())
    }

    @Test func serialsAreRandom() throws {
        let directory = try makeTemporaryDirectory()
        defer { removeDirectory(directory) }
        let ca = try DevCertificateAuthority.loadOrCreate(directory: directory)
        var serials = Set<String>()
        for index in 0..<2 {
            let path = directory + "/leaf\(index).pem"
            try ca.issue(names: ["a.test"]).certificatePEM().write(toFile: path, atomically: true, encoding: .utf8)
            serials.insert(try runTool(["openssl", "x509", "-in", path, "-noout", "-serial"]).output)
        }
        #expect(serials.count == 2)
    }

    @Test func rsaLeavesCanBeIssuedForTLS12RSAClients() throws {
        let directory = try makeTemporaryDirectory()
        defer { removeDirectory(directory) }
        let ca = try DevCertificateAuthority.loadOrCreate(directory: directory)
        let issued = try ca.issue(names: ["rsa.test"], key: .rsa(bits: 2048))
        #expect(issued.certificate.publicKeyDescription == "RSA 2048")
        #expect(issued.privateKey.keyDescription == "RSA 2048")
    }

    @Test(arguments: [0, 826, -1])
    func validityOutsideApplesLimitIsRefused(days: Int) throws {
        let directory = try makeTemporaryDirectory()
        defer { removeDirectory(directory) }
        let ca = try DevCertificateAuthority.loadOrCreate(directory: directory)
        let error = #expect(throws: OpenSSLError.self) { try ca.issue(names: ["a.test"], validityDays: days) }
        #expect(error?.code == .invalidValidity)
    }

    @Test(arguments: ["", "a b.test", "a,DNS:evil.test", "-a.test", "a..test", "*.*.test"])
    func namesThatAreNeitherDNSNorIPAreRefused(name: String) throws {
        let directory = try makeTemporaryDirectory()
        defer { removeDirectory(directory) }
        let ca = try DevCertificateAuthority.loadOrCreate(directory: directory)
        let error = #expect(throws: OpenSSLError.self) { try ca.issue(names: [name]) }
        #expect(error?.code == .invalidName)
    }

    @Test func certbotLayoutHoldsLeafAndPrivateKey0600() throws {
        let directory = try makeTemporaryDirectory()
        defer { removeDirectory(directory) }
        let ca = try DevCertificateAuthority.loadOrCreate(directory: directory + "/ca")
        let issued = try ca.issue(names: ["a.test"])
        let paths = try issued.writeCertbotLayout(into: directory + "/live", name: "a.test")
        #expect(paths.fullchain == directory + "/live/a.test/fullchain.pem")
        #expect(fileMode(paths.privateKey) == 0o600)

        let chain = try CertificateChain(pemEncoded: String(contentsOfFile: paths.fullchain, encoding: .utf8))
        #expect(chain.certificates.count == 1)
        #expect(chain.leaf.sha256Fingerprint == issued.certificate.sha256Fingerprint)
        let key = try PrivateKey(pemEncoded: String(contentsOfFile: paths.privateKey, encoding: .utf8))
        #expect(key.matches(chain.leaf))
        let verify = try runTool(["openssl", "verify", "-CAfile", ca.certificatePath, paths.fullchain])
        #expect(verify.status == 0)
    }
}
