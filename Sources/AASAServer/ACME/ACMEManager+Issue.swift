import AASACore
import AASAOpenSSL
public import Foundation
import Logging

/// Ordering one certificate and writing it in certbot's layout: what a worker (or `certs acme`) does once a
/// domain is due.
extension ACMEManager {
    /// The leaf of `certs/<domain>/fullchain.pem`, for its renewal information.
    func currentLeaf(_ domain: String) -> X509Certificate? {
        let path = CertificateFile.chain.path(in: certificateDirectory + "/" + domain)
        guard case .success(let contents) = ConfinedFile.read(path, within: .anywhere, maximumBytes: 1 << 20) else {
            return nil
        }
        return try? X509Certificate(pemEncoded: contents.bytes)
    }

    /// Orders a certificate for `domain` and writes it: the record, the key, then the chain (each through
    /// ``AtomicFile``). Blocks until done; `certs acme` calls it directly.
    public func issue(_ domain: String) throws(ACMEFailure) -> (notBefore: Date, notAfter: Date) {
        logger.info("ACME: ordering a certificate", metadata: ["domain": "\(domain)", "ca": "\(client.directoryURL)"])
        let key: PrivateKey
        do {
            key = try PrivateKey.generate(.ecdsaP256)
        } catch {
            throw ACMEFailure(.storage, "\(domain): could not generate a key: \(error)", hint: "report this")
        }
        let chain: [UInt8]
        do {
            chain = try client.obtainCertificate(for: [domain], key: key, challenges: responder)
        } catch {
            throw error.about(domain)
        }
        return try Self.write(
            chain: chain, key: key, domain: domain, directoryURL: client.directoryURL,
            certificateDirectory: certificateDirectory)
    }

    /// Checks the downloaded `chain` against `key` and `domain`, and writes it in certbot's layout with its record.
    static func write(
        chain: [UInt8], key: PrivateKey, domain: String, directoryURL: String, certificateDirectory: String
    ) throws(ACMEFailure) -> (notBefore: Date, notAfter: Date) {
        let folder = certificateDirectory + "/" + domain
        let leaf: X509Certificate
        do {
            leaf = try X509Certificate(pemEncoded: chain)
            try key.checkMatches(leaf)
        } catch {
            throw ACMEFailure(
                .protocolViolation, "\(domain): the CA's certificate cannot be used: \(error)",
                hint: "the server orders again later")
        }
        guard leaf.covers(hostname: domain) else {
            throw ACMEFailure(
                .protocolViolation, "\(domain): the CA's certificate does not cover the name",
                hint: "the server orders again later")
        }
        do {
            try FileManager.default.createDirectory(
                atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
            // The record first: a folder with it is the server's, whatever else a crash leaves there.
            try AtomicFile.write(
                CertificateRecord(directoryURL: directoryURL, issued: Date(), names: [domain]).bytes,
                to: CertificateFile.acmeRecord.path(in: folder))
            try AtomicFile.write(
                Array(key.pemEncoded().utf8), to: CertificateFile.privateKey.path(in: folder), mode: 0o600)
            try AtomicFile.write(chain, to: CertificateFile.chain.path(in: folder))
        } catch {
            throw ACMEFailure(
                .storage, "\(domain): could not write the certificate: \(error)", url: folder,
                hint: "make the certificate folder writable by the server's user")
        }
        return (leaf.notBefore, leaf.notAfter)
    }
}
