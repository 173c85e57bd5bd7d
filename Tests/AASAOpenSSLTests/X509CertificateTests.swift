import AASAOpenSSL
import AASATestSupport
import Foundation
import Testing

/// One CA and one multi-name leaf shared by the table-driven tests (generation is the slow part).
private let fixture: (ca: DevCertificateAuthority, leaf: IssuedCertificate, directory: String) = {
    let directory = try! makeTemporaryDirectory()
    let ca = try! DevCertificateAuthority.loadOrCreate(directory: directory)
    let leaf = try! ca.issue(names: ["shop.example", "*.wild.example", "127.0.0.1", "2001:db8::1"])
    return (ca, leaf, directory)
}()

@Suite struct X509CertificateTests {
    @Test(arguments: [
        ("shop.example", true),
        ("SHOP.Example", true),  // DNS is case-insensitive
        ("shop.example.", true),  // absolute form
        ("www.shop.example", false),  // no implicit subdomains
        ("a.wild.example", true),  // wildcard: one label
        ("A.WILD.EXAMPLE", true),
        ("wild.example", false),  // wildcard does not cover the apex
        ("a.b.wild.example", false),  // nor deeper labels
        (".wild.example", false),  // empty label
        ("other.example", false),
        ("127.0.0.1", true),  // IP SAN
        ("127.0.0.2", false),
        ("2001:db8:0::1", true),  // IPv6 compares by value
        ("[2001:db8::1]", true),
        ("", false),
    ])
    func coversFollowsRFC6125(hostname: String, expected: Bool) {
        #expect(fixture.leaf.certificate.covers(hostname: hostname) == expected)
    }

    @Test func wildcardOnlyCertificateDoesNotCoverIPsOrTheApex() throws {
        let leaf = try fixture.ca.issue(names: ["*.only.example"]).certificate
        #expect(leaf.covers(hostname: "x.only.example"))
        #expect(!leaf.covers(hostname: "only.example"))
        #expect(!leaf.covers(hostname: "127.0.0.1"))
    }

    @Test func reportsNamesAndKeyLikeOpenSSLDoes() throws {
        let leaf = fixture.leaf.certificate
        #expect(leaf.dnsNames == ["shop.example", "*.wild.example"])
        #expect(leaf.ipAddresses == ["127.0.0.1", "2001:db8::1"])
        #expect(leaf.subjectName == "CN=shop.example")
        #expect(leaf.issuerName.contains("CN=aasa-server development CA ("))

        let path = fixture.directory + "/leaf-\(UUID().uuidString).pem"
        try leaf.pemEncoded().write(toFile: path, atomically: true, encoding: .utf8)
        let fingerprint = try runTool(["openssl", "x509", "-in", path, "-noout", "-fingerprint", "-sha256"])
        #expect(
            fingerprint.output.trimmingCharacters(in: .whitespacesAndNewlines) == "sha256 Fingerprint="
                + leaf.sha256Fingerprint)
        let dates = try runTool(["openssl", "x509", "-in", path, "-noout", "-enddate", "-dateopt", "iso_8601"])
        let isoEnd = dates.output.replacingOccurrences(of: "notAfter=", with: "")
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate, .withSpaceBetweenDateAndTime, .withTime, .withColonSeparatorInTime]
        let parsed = formatter.date(from: isoEnd.replacingOccurrences(of: "Z", with: ""))
        if let parsed {
            #expect(abs(parsed.timeIntervalSince(leaf.notAfter)) < 1)
        } else {
            Issue.record("could not parse openssl date '\(isoEnd)'")
        }
    }

    @Test func pemAndDERRoundTrip() throws {
        let leaf = fixture.leaf.certificate
        let fromPEM = try X509Certificate(pemEncoded: leaf.pemEncoded())
        let fromDER = try X509Certificate(derEncoded: leaf.derEncoded())
        #expect(fromPEM.sha256Fingerprint == leaf.sha256Fingerprint)
        #expect(fromDER.sha256Fingerprint == leaf.sha256Fingerprint)
    }

    @Test(arguments: [
        "",
        "hello",
        "-----BEGIN CERTIFICATE-----\nnot base64!\n-----END CERTIFICATE-----\n",
        "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
    ])
    func malformedPEMFailsWithACode(text: String) {
        let error = #expect(throws: OpenSSLError.self) { try X509Certificate(pemEncoded: text) }
        #expect(error?.code == .malformedPEM)
        #expect(error?.description.hasPrefix("[malformed-pem] ") == true)
    }

    @Test func malformedDERFailsWithACode() {
        let error = #expect(throws: OpenSSLError.self) { try X509Certificate(derEncoded: [0x30, 0x03, 0x01]) }
        #expect(error?.code == .malformedDER)
        #expect(error?.openSSLErrors.isEmpty == false)
    }
}

@Suite struct CertificateChainTests {
    @Test func parsesLeafFirstThenIntermediates() throws {
        let pem = try fixture.leaf.certificatePEM() + fixture.ca.certificate.pemEncoded()
        let chain = try CertificateChain(pemEncoded: pem)
        #expect(chain.certificates.count == 2)
        #expect(chain.leaf.subjectCommonName == "shop.example")
        #expect(chain.intermediates.first?.isCA == true)
        #expect(try chain.pemEncoded() == pem)
    }

    @Test func emptyInputIsAnEmptyChainError() {
        let error = #expect(throws: OpenSSLError.self) { try CertificateChain(pemEncoded: "just text\n") }
        #expect(error?.code == .emptyChain)
    }

    @Test func aBrokenSecondBlockIsReported() throws {
        let pem =
            try fixture.leaf.certificatePEM()
            + "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n"
        let error = #expect(throws: OpenSSLError.self) { try CertificateChain(pemEncoded: pem) }
        #expect(error?.code == .malformedPEM)
        #expect(error?.reason.contains("certificate 2") == true)
        let shared = #expect(throws: OpenSSLError.self) {
            try CertificateChain(pemEncoded: Array(pem.utf8), sharing: IntermediateCertificates())
        }
        #expect(shared?.code == error?.code)
        #expect(shared?.reason == error?.reason)
    }

    @Test func chainsShareTheirIntermediatesAndReadTheSame() throws {
        let other = try fixture.ca.issue(names: ["other.example"])
        let intermediate = try fixture.ca.certificate.pemEncoded()
        let key = try fixture.leaf.privateKey.pemEncoded()
        let cache = IntermediateCertificates()
        // Other blocks in between are skipped, as PEM_read_bio_X509 skips them.
        for pem in [
            try fixture.leaf.certificatePEM() + intermediate, try other.certificatePEM() + key + intermediate,
            "preamble\n" + (try fixture.leaf.certificatePEM()) + intermediate + intermediate,
        ] {
            let ordinary = try CertificateChain(pemEncoded: pem)
            let shared = try CertificateChain(pemEncoded: Array(pem.utf8), sharing: cache)
            #expect(
                try shared.certificates.map { try $0.derEncoded() } == ordinary.certificates.map { try $0.derEncoded() }
            )
            #expect(shared.intermediates.allSatisfy { $0 === shared.intermediates.first })
        }
        let first = try CertificateChain(
            pemEncoded: Array((try fixture.leaf.certificatePEM() + intermediate).utf8), sharing: cache)
        let second = try CertificateChain(
            pemEncoded: Array((try other.certificatePEM() + intermediate).utf8), sharing: cache)
        #expect(first.intermediates.first === second.intermediates.first)
        #expect(first.leaf !== second.leaf)
    }

    @Test func sharingChainsRefuseWhatTheOrdinaryParserRefuses() throws {
        for pem in ["just text\n", "", try fixture.leaf.privateKey.pemEncoded()] {
            let ordinary = #expect(throws: OpenSSLError.self) { try CertificateChain(pemEncoded: pem) }
            let shared = #expect(throws: OpenSSLError.self) {
                try CertificateChain(pemEncoded: Array(pem.utf8), sharing: IntermediateCertificates())
            }
            #expect(shared?.code == ordinary?.code)
        }
    }
}

@Suite struct PrivateKeyTests {
    @Test func keyMismatchIsDetected() throws {
        let other = try fixture.ca.issue(names: ["other.example"])
        #expect(fixture.leaf.privateKey.matches(fixture.leaf.certificate))
        #expect(!other.privateKey.matches(fixture.leaf.certificate))
        #expect(!fixture.leaf.privateKey.matches(fixture.ca.certificate))
        let error = #expect(throws: OpenSSLError.self) { try other.privateKey.checkMatches(fixture.leaf.certificate) }
        #expect(error?.code == .keyMismatch)
    }

    @Test func rsaKeyDoesNotMatchECCertificate() throws {
        let rsa = try PrivateKey.generate(.rsa(bits: 2048))
        #expect(rsa.algorithm == .rsa)
        #expect(!rsa.matches(fixture.leaf.certificate))
    }

    @Test func pemRoundTripKeepsTheKey() throws {
        let key = try PrivateKey.generate()
        #expect(key.keyDescription == "ECDSA P-256")
        #expect(key.bits == 256)
        let pem = try key.pemEncoded()
        #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let parsed = try PrivateKey(pemEncoded: pem)
        #expect(try parsed.pemEncoded() == pem)
        // OpenSSL's tool agrees it is a P-256 key.
        let text = try runTool(["openssl", "pkey", "-noout", "-text"], input: pem)
        #expect(text.output.contains("prime256v1"))
    }

    @Test func encryptedKeysAreRefusedWithoutPrompting() throws {
        let pem = try PrivateKey.generate().pemEncoded()
        let encrypted = try runTool(["openssl", "pkey", "-aes256", "-passout", "pass:secret"], input: pem)
        #expect(encrypted.output.contains("ENCRYPTED PRIVATE KEY"))
        let error = #expect(throws: OpenSSLError.self) { try PrivateKey(pemEncoded: encrypted.output) }
        #expect(error?.code == .malformedPEM)
    }

    /// Every common form of unencrypted key, each parsed as `openssl pkey` reads it: PKCS#8 and SEC1 EC,
    /// PKCS#8 and PKCS#1 RSA (decoded with their type named), Ed25519 and an EC key after its parameters block
    /// (the general path).
    @Test(arguments: [
        ["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"],
        ["openssl", "ecparam", "-name", "prime256v1", "-genkey", "-noout"],
        ["openssl", "ecparam", "-name", "prime256v1", "-genkey"],
        ["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"],
        ["openssl", "genrsa", "-traditional", "2048"],
        ["openssl", "genpkey", "-algorithm", "ED25519"],
    ])
    func everyUnencryptedFormReadsAsOpenSSLReadsIt(command: [String]) throws {
        let pem = try runTool(command).output
        let key = try PrivateKey(pemEncoded: pem)
        let expected = try runTool(["openssl", "pkey"], input: pem).output
        #expect(try key.pemEncoded() == expected)
    }

    @Test func legacyEncryptedKeysAreRefusedWithoutPrompting() throws {
        let pem = try runTool(["openssl", "ecparam", "-name", "prime256v1", "-genkey", "-noout"]).output
        let encrypted = try runTool(
            ["openssl", "ec", "-aes256", "-passout", "pass:secret"], input: pem)
        #expect(encrypted.output.contains("Proc-Type: 4,ENCRYPTED"))
        let error = #expect(throws: OpenSSLError.self) { try PrivateKey(pemEncoded: encrypted.output) }
        #expect(error?.code == .malformedPEM)
    }

    @Test func weakRSAIsRefused() {
        let error = #expect(throws: OpenSSLError.self) { try PrivateKey.generate(.rsa(bits: 1024)) }
        #expect(error?.code == .keyGeneration)
    }
}
