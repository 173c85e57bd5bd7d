import AASACore
import AASATestSupport
internal import CGnuTLS
import Foundation
import Testing

@testable import AASAMicroHTTPD

/// A leaf imported from the numbers ``LeafPublicKey`` reads holds what GnuTLS's own import of the same
/// certificate holds: the algorithm, size, key usage and key (exported by GnuTLS as SubjectPublicKeyInfo), and
/// the DER. Certificates from `openssl req`, one per kind of key and key usage.
@Suite struct LeafPublicKeyTests {
    /// A self-signed certificate from `openssl req`, as DER.
    private func certificate(_ keyOptions: [String], extensions: [String] = [], in folder: TemporaryDirectory) throws
        -> [UInt8]
    {
        let (key, cert) = (folder.path + "/key-\(UUID().uuidString).pem", folder.path + "/cert.pem")
        var arguments = ["openssl", "req", "-x509", "-nodes", "-days", "2", "-subj", "/CN=leaf.test", "-keyout", key]
        arguments += ["-out", cert] + keyOptions
        for value in extensions { arguments += ["-addext", value] }
        let result = try runTool(arguments)
        try #require(result.status == 0, "\(result.error)")
        let pem = Array(try String(contentsOfFile: cert, encoding: .utf8).utf8)
        return try #require(try PEMBlocks(pem).blocks.first(where: \.isCertificate)).bytes
    }

    private func expectSameImport(_ der: [UInt8], assembled: Bool = true) throws {
        let own = try GnuTLSCertificate(leaf: der)
        let gnutls = try GnuTLSCertificate(der: der)
        #expect(own.assembled == assembled)
        #expect(Array(UnsafeBufferPointer(start: own.pcert.cert.data, count: Int(own.pcert.cert.size))) == der)
        #expect(own.pcert.type == gnutls.pcert.type)
        var (ownBits, gnutlsBits): (UInt32, UInt32) = (0, 0)
        #expect(
            gnutls_pubkey_get_pk_algorithm(own.pcert.pubkey, &ownBits)
                == gnutls_pubkey_get_pk_algorithm(gnutls.pcert.pubkey, &gnutlsBits))
        #expect(ownBits == gnutlsBits && ownBits > 0)
        var (ownUsage, gnutlsUsage): (UInt32, UInt32) = (0, 0)
        #expect(gnutls_pubkey_get_key_usage(own.pcert.pubkey, &ownUsage) >= 0)
        #expect(gnutls_pubkey_get_key_usage(gnutls.pcert.pubkey, &gnutlsUsage) >= 0)
        #expect(ownUsage == gnutlsUsage)
        #expect(try exported(own.pcert.pubkey) == exported(gnutls.pcert.pubkey))
    }

    /// GnuTLS's DER SubjectPublicKeyInfo for `key`.
    private func exported(_ key: gnutls_pubkey_t?) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 4096)
        var size = bytes.count
        try #require(gnutls_pubkey_export(key, GNUTLS_X509_FMT_DER, &bytes, &size) >= 0)
        return Array(bytes.prefix(size))
    }

    @Test(arguments: ["P-256", "P-384", "P-521"])
    func ecdsaLeavesHoldWhatGnuTLSReads(curve: String) throws {
        let folder = TemporaryDirectory()
        try expectSameImport(certificate(["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:\(curve)"], in: folder))
        try expectSameImport(
            certificate(
                ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:\(curve)"],
                extensions: ["keyUsage=critical,digitalSignature"], in: folder))
    }

    @Test func rsaLeavesAndEveryKeyUsageBitHoldWhatGnuTLSReads() throws {
        let folder = TemporaryDirectory()
        try expectSameImport(certificate(["-newkey", "rsa:2048"], in: folder))
        // decipherOnly is the ninth bit: the second byte of the string.
        try expectSameImport(
            certificate(
                ["-newkey", "rsa:2048"],
                extensions: ["keyUsage=digitalSignature,keyEncipherment,keyAgreement,decipherOnly"], in: folder))
        try expectSameImport(
            certificate(["-newkey", "rsa:2048"], extensions: ["keyUsage=keyCertSign,cRLSign"], in: folder))
    }

    /// Keys it does not read are GnuTLS's to import, with the same result.
    @Test func otherKeysAreLeftToGnuTLS() throws {
        let folder = TemporaryDirectory()
        try expectSameImport(certificate(["-newkey", "ed25519"], in: folder), assembled: false)
        // Explicit curve parameters instead of a named curve: GnuTLS refuses them, either way.
        let explicit = try certificate(
            ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-pkeyopt", "ec_param_enc:explicit"], in: folder)
        #expect(LeafPublicKey(certificate: explicit) == nil)
        #expect(throws: GnuTLSImportError.self) { try GnuTLSCertificate(leaf: explicit) }
        #expect(LeafPublicKey(certificate: [0x30, 0x03, 0x02, 0x01, 0x01]) == nil)
        #expect(LeafPublicKey(certificate: []) == nil)
    }

    /// A certificate GnuTLS refuses is refused the same way when its key cannot be read here.
    @Test func garbageIsStillRefused() {
        #expect(throws: GnuTLSImportError.self) { try GnuTLSCertificate(leaf: [0x30, 0x03, 0x02, 0x01, 0x01]) }
        #expect(throws: GnuTLSImportError.self) { try GnuTLSCertificate(leaf: []) }
    }
}
