import AASATestSupport
import Foundation
import Testing

@testable import AASAOpenSSL

/// ``CertificateSummary`` reads a chain without OpenSSL; every field must be what OpenSSL reads from the same
/// certificate, for certificates `openssl req` makes in the shapes operators deploy.
@Suite struct CertificateSummaryTests {
    /// A self-signed certificate made by the `openssl` command, as PEM.
    private static func opensslCertificate(_ options: [String]) throws -> String {
        let directory = try makeTemporaryDirectory()
        defer { removeDirectory(directory) }
        let result = try runTool(
            ["openssl", "req", "-x509", "-nodes", "-keyout", directory + "/key.pem", "-out", directory + "/cert.pem"]
                + options)
        #expect(result.status == 0, "\(result.error)")
        return try String(contentsOfFile: directory + "/cert.pem", encoding: .utf8)
    }

    @Test(arguments: [
        // ECDSA P-256 with DNS names and both kinds of IP address (the dev CA's shape).
        [
            "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-days", "30", "-subj", "/CN=shop.example",
            "-addext", "subjectAltName=DNS:shop.example,DNS:*.wild.example,IP:127.0.0.1,IP:2001:db8::1",
        ],
        // RSA with a subject of several attributes and an email SAN, which is skipped.
        [
            "-newkey", "rsa:2048", "-days", "90", "-subj", "/C=DE/O=Example GmbH/CN=rsa.example",
            "-addext", "subjectAltName=email:a@rsa.example,DNS:rsa.example,URI:https://rsa.example/",
        ],
        // No subjectAltName at all: served for its CN, as OpenSSL's reading gives it.
        ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-384", "-days", "10", "-subj", "/CN=cn-only.example"],
        // Valid past 2049: notAfter is a GeneralizedTime.
        [
            "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-days", "20000", "-subj", "/CN=far.example",
            "-addext", "subjectAltName=DNS:far.example",
        ],
        // A UTF-8 common name.
        ["-newkey", "ed25519", "-days", "5", "-utf8", "-subj", "/CN=café.example"],
    ])
    func readsWhatOpenSSLReads(options: [String]) throws {
        let pem = try Self.opensslCertificate(options)
        let summary = try CertificateSummary(pemEncoded: Array(pem.utf8))
        let openssl = try X509Certificate(pemEncoded: pem)
        #expect(summary.subjectAlternativeNames.dnsNames == openssl.dnsNames)
        #expect(summary.subjectAlternativeNames.ipAddresses == openssl.ipAddresses)
        #expect(summary.subjectCommonName == openssl.subjectCommonName)
        #expect(summary.notBefore == openssl.notBefore)
        #expect(summary.notAfter == openssl.notAfter)
        #expect(summary.sha256Fingerprint == openssl.sha256Fingerprint)
        #expect(summary.certificateCount == 1)
        let expectedNames = openssl.dnsNames.isEmpty ? [openssl.subjectCommonName!] : openssl.dnsNames
        #expect(summary.names == expectedNames)
    }

    @Test func readsTheLeafOfAChainAmongOtherText() throws {
        let directory = try makeTemporaryDirectory()
        defer { removeDirectory(directory) }
        let ca = try DevCertificateAuthority.loadOrCreate(directory: directory)
        let leaf = try ca.issue(names: ["a.example", "10.1.2.3"])
        let caPEM = try String(contentsOfFile: ca.certificatePath, encoding: .utf8)
        // What `openssl x509 -text` leaves before a block, a key block between, CRLF line ends, and the
        // legacy label: none of it changes the chain OpenSSL and GnuTLS read.
        let text =
            "subject=CN = a.example\nissuer=aasa-server development CA\n"
            + (try leaf.certificate.pemEncoded()).replacingOccurrences(of: "\n", with: "\r\n")
            + "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"
            + caPEM.replacingOccurrences(of: "CERTIFICATE", with: "X509 CERTIFICATE")
        let summary = try CertificateSummary(pemEncoded: Array(text.utf8))
        #expect(
            summary.subjectAlternativeNames
                == SubjectAlternativeNames(dnsNames: ["a.example"], ipAddresses: ["10.1.2.3"]))
        #expect(summary.notAfter == leaf.certificate.notAfter)
        #expect(summary.sha256Fingerprint == leaf.certificate.sha256Fingerprint)
        #expect(summary.certificateCount == 2)
        #expect(summary.subjectAlternativeNames.covers(hostname: "A.EXAMPLE."))
        #expect(!summary.subjectAlternativeNames.covers(hostname: "b.example"))
    }

    @Test(arguments: [
        ("", OpenSSLError.Code.emptyChain),
        ("just some text\n", .emptyChain),
        ("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", .emptyChain),
        ("-----BEGIN CERTIFICATE-----\nMIIB\n", .malformedPEM),  // no END line
        ("-----BEGIN CERTIFICATE-----\nMII*B\n-----END CERTIFICATE-----\n", .malformedPEM),  // not base64
        ("-----BEGIN CERTIFICATE-----\nMIIB\n-----END X509 CERTIFICATE-----\n", .malformedPEM),
        ("-----BEGIN CERTIFICATE-----\nProc-Type: 4,ENCRYPTED\n\nMIIB\n-----END CERTIFICATE-----\n", .malformedPEM),
        ("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n", .malformedDER),  // cut short
        ("-----BEGIN CERTIFICATE-----\nMAA=\n-----END CERTIFICATE-----\n", .malformedDER),  // empty SEQUENCE
    ])
    func refusesWhatIsNotACertificateChain(text: String, code: OpenSSLError.Code) {
        #expect(throws: OpenSSLError(code, "")) { try CertificateSummary(pemEncoded: Array(text.utf8)) }
    }

    /// Operators' files are hostile input: every truncation and thousands of byte flips of a real leaf either
    /// read or throw, and never trap.
    @Test func damagedCertificatesThrowAndNeverTrap() throws {
        let directory = try makeTemporaryDirectory()
        defer { removeDirectory(directory) }
        let ca = try DevCertificateAuthority.loadOrCreate(directory: directory)
        let der = try ca.issue(names: ["x.example", "::1"]).certificate.derEncoded()
        func pem(_ bytes: [UInt8]) -> [UInt8] {
            Array(
                ("-----BEGIN CERTIFICATE-----\n" + Data(bytes).base64EncodedString(options: .lineLength64Characters)
                    + "\n-----END CERTIFICATE-----\n").utf8)
        }
        var read = 0
        for length in 0..<der.count {
            if (try? CertificateSummary(pemEncoded: pem(Array(der.prefix(length))))) != nil { read += 1 }
        }
        #expect(read == 0, "a truncated certificate read as whole")
        var generator = SeededRandomNumberGenerator(seed: 0x5EED_0002)
        for _ in 0..<3_000 {
            var damaged = der
            damaged[Int.random(in: 0..<der.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            _ = try? CertificateSummary(pemEncoded: pem(damaged))
        }
        #expect(try CertificateSummary(pemEncoded: pem(der)).subjectAlternativeNames.ipAddresses == ["::1"])
    }
}
