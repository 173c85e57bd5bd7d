import AASACore
import AASATestSupport
import Foundation
import Testing

@testable import AASAMicroHTTPD

/// A start compares an ECDSA key's embedded point with its leaf's in Swift (``EmbeddedPublicKey``): for every key
/// OpenSSL writes (PKCS #8 and SEC 1, each curve), the verdict is GnuTLS's own, and keys it does not read (RSA, Ed25519,
/// a SEC 1 key without its point) are checked by GnuTLS's import as before, with the same verdicts.
@Suite struct EmbeddedPublicKeyTests {
    /// A key and a self-signed certificate for it from `openssl req`, with the key rewritten by `convert` (an
    /// `openssl` command reading `in` and writing `out`) when given: the leaf's DER and the key's PEM.
    private func pair(
        _ keyOptions: [String], convert: [String]? = nil, in folder: TemporaryDirectory
    ) throws -> (leaf: [UInt8], keyPEM: [UInt8]) {
        let name = UUID().uuidString
        let (key, cert) = (folder.path + "/\(name)-key.pem", folder.path + "/\(name)-cert.pem")
        let made = try runTool(
            ["openssl", "req", "-x509", "-nodes", "-days", "2", "-subj", "/CN=leaf.test", "-keyout", key, "-out", cert]
                + keyOptions)
        try #require(made.status == 0, "\(made.error)")
        var keyFile = key
        if let convert {
            keyFile = folder.path + "/\(name)-converted.pem"
            let converted = try runTool(["openssl"] + convert + ["-in", key, "-out", keyFile])
            try #require(converted.status == 0, "\(converted.error)")
        }
        let pem = Array(try String(contentsOfFile: cert, encoding: .utf8).utf8)
        let leaf = try #require(try PEMBlocks(pem).blocks.first(where: \.isCertificate)).bytes
        return (leaf, Array(try String(contentsOfFile: keyFile, encoding: .utf8).utf8))
    }

    private func embedded(_ keyPEM: [UInt8]) -> EmbeddedPublicKey? {
        let key = PrivateKeyBytes(pem: keyPEM)
        return key.isPEM ? nil : EmbeddedPublicKey(der: key.bytes)
    }

    /// Whether GnuTLS's import of the key, checked against the leaf as before, accepts the pair.
    private func gnutlsAccepts(leaf: [UInt8], keyPEM: [UInt8]) throws -> Bool {
        do {
            _ = try GnuTLSCredential(chain: [leaf], keyPEM: keyPEM, label: "leaf.test")
            return true
        } catch let error as HTTPListenerError where error.code == .keyMismatch {
            return false
        }
    }

    @Test(arguments: ["P-256", "P-384", "P-521"])
    func pkcs8AndSEC1KeysAreComparedAsGnuTLSCompares(curve: String) throws {
        let folder = TemporaryDirectory()
        let options = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:\(curve)"]
        let pkcs8 = try pair(options, in: folder)
        let sec1 = try pair(options, convert: ["ec"], in: folder)
        let other = try pair(options, in: folder)
        #expect(String(decoding: pkcs8.keyPEM, as: UTF8.self).contains("BEGIN PRIVATE KEY"))
        #expect(String(decoding: sec1.keyPEM, as: UTF8.self).contains("BEGIN EC PRIVATE KEY"))
        for (leaf, keyPEM, belongs) in [
            (pkcs8.leaf, pkcs8.keyPEM, true), (sec1.leaf, sec1.keyPEM, true),
            (pkcs8.leaf, other.keyPEM, false), (sec1.leaf, pkcs8.keyPEM, false),
        ] {
            let key = try #require(embedded(keyPEM), "\(curve)")
            let leafKey = try #require(LeafPublicKey(certificate: leaf))
            #expect(key.belongs(to: leafKey) == belongs, "\(curve)")
            #expect(try gnutlsAccepts(leaf: leaf, keyPEM: keyPEM) == belongs, "\(curve)")
            // What a start does with the pair: the same verdict, and a key it keeps that a handshake imports.
            do {
                let credential = try DeferredCredential(chain: [leaf], keyPEM: keyPEM, label: "leaf.test")
                #expect(belongs)
                #expect(credential.imported(label: "leaf.test") != nil, "\(credential.failure ?? "")")
            } catch let error as HTTPListenerError {
                #expect(!belongs && error.code == .keyMismatch, "\(error)")
            }
        }
        // A key of another curve is not its leaf's either.
        let otherCurve = curve == "P-256" ? "P-384" : "P-256"
        let elsewhere = try pair(["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:\(otherCurve)"], in: folder)
        let key = try #require(embedded(elsewhere.keyPEM))
        #expect(key.belongs(to: try #require(LeafPublicKey(certificate: pkcs8.leaf))) == false)
    }

    /// What refusing `body` threw: nil when it accepted.
    private func refusal(_ body: () throws -> Any) -> HTTPListenerError.Code? {
        do {
            _ = try body()
            return nil
        } catch {
            return (error as? HTTPListenerError)?.code ?? .invalidCertificate
        }
    }

    /// Keys without an embedded point, and keys of other kinds, are left to GnuTLS: a start gives each pair the
    /// verdict GnuTLS's import gives it (a SEC 1 key without its point is one GnuTLS cannot read).
    @Test func otherKeysAreLeftToGnuTLS() throws {
        let folder = TemporaryDirectory()
        let options = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"]
        let bare = try pair(options, convert: ["ec", "-no_public"], in: folder)
        let rsa = try pair(["-newkey", "rsa:2048"], in: folder)
        let otherRSA = try pair(["-newkey", "rsa:2048"], in: folder)
        let ed25519 = try pair(["-newkey", "ed25519"], in: folder)
        let ec = try pair(options, in: folder)
        #expect(embedded(bare.keyPEM) == nil)
        #expect(embedded(rsa.keyPEM) == nil)
        #expect(embedded(ed25519.keyPEM) == nil)
        let pairs = [
            (bare.leaf, bare.keyPEM, "bare"), (rsa.leaf, rsa.keyPEM, "rsa"), (ed25519.leaf, ed25519.keyPEM, "ed25519"),
            (rsa.leaf, otherRSA.keyPEM, "rsa, other key"), (bare.leaf, rsa.keyPEM, "bare, rsa key"),
            (rsa.leaf, bare.keyPEM, "rsa, bare key"), (ec.leaf, rsa.keyPEM, "ec, rsa key"),
            (rsa.leaf, ec.keyPEM, "rsa, ec key"), (ed25519.leaf, ec.keyPEM, "ed25519, ec key"),
        ]
        var verdicts: [String: HTTPListenerError.Code?] = [:]
        for (leaf, keyPEM, name) in pairs {
            let gnutls = refusal { try GnuTLSCredential(chain: [leaf], keyPEM: keyPEM, label: "leaf.test") }
            let start = refusal { try DeferredCredential(chain: [leaf], keyPEM: keyPEM, label: "leaf.test") }
            #expect(start == gnutls, "\(name)")
            verdicts[name] = start
        }
        #expect(verdicts["rsa"] == .some(nil) && verdicts["ed25519"] == .some(nil))
        #expect(verdicts["rsa, other key"] == .keyMismatch && verdicts["ec, rsa key"] == .keyMismatch)
        #expect(verdicts["rsa, ec key"] == .keyMismatch && verdicts["ed25519, ec key"] == .keyMismatch)
    }

    /// Bytes that are not the structures read (cut short, a trailing byte, another version, a zero secret) give no
    /// point, never a trap.
    @Test func malformedKeysGiveNoPoint() throws {
        let folder = TemporaryDirectory()
        let pkcs8 = try pair(["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"], in: folder)
        let der = PrivateKeyBytes(pem: pkcs8.keyPEM).bytes
        #expect(EmbeddedPublicKey(der: der) != nil)
        for length in 0..<der.count {
            #expect(EmbeddedPublicKey(der: Array(der.prefix(length))) == nil, "cut at \(length)")
        }
        #expect(EmbeddedPublicKey(der: der + [0]) == nil)
        var version = der
        // The outer version integer: 30 81 87 02 01 00.
        try #require(version[3] == 0x02 && version[5] == 0x00)
        version[5] = 0x01
        #expect(EmbeddedPublicKey(der: version) == nil)
        // The secret (04 20 and 32 bytes in the inner structure), zeroed.
        let secret = try #require(
            (0..<der.count - 1).first { der[$0] == 0x04 && der[$0 + 1] == 0x20 && $0 > 30 })
        var zero = der
        for index in (secret + 2)..<(secret + 34) { zero[index] = 0 }
        #expect(EmbeddedPublicKey(der: zero) == nil)
    }
}
