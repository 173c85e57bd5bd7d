import AASACore
import AASAMicroHTTPD
import Foundation

/// The certificates GnuTLS will not serve, found by importing each one as the server does.
///
/// Loading a certificate folder reads only the leaf's names and dates (``CertificateSummary``); the chain and key
/// are parsed by GnuTLS when it imports them, which also refuses a key that does not belong to the leaf. Both
/// the server and `check` ask here, so `check` reports exactly what the server would refuse.
enum CertificateRefusals {
    /// Each certificate GnuTLS refuses, by folder name, with the finding that says why.
    static func find(in certificates: [DomainCertificate]) -> [String: Diagnostic] {
        let findings = certificates.concurrentMap { certificate -> Diagnostic? in
            do {
                _ = try CertificateTable(entries: [Server.tableEntry(certificate)])
                return nil
            } catch {
                return finding(error, certificate: certificate)
            }
        }
        var refused: [String: Diagnostic] = [:]
        for (certificate, finding) in zip(certificates, findings) {
            if let finding { refused[certificate.folderName] = finding }
        }
        return refused
    }

    /// The finding for a certificate GnuTLS refused with `error`: the file at fault, and the fix.
    static func finding(_ error: any Error, certificate: DomainCertificate) -> Diagnostic {
        switch (error as? HTTPListenerError)?.code {
        case .keyMismatch?:
            Diagnostic(
                .error, rule: "certificate-key-mismatch",
                "privkey.pem does not belong to the certificate in fullchain.pem", file: certificate.privateKeyPath,
                hint: "copy the key that was generated with this certificate")
        case .invalidPrivateKey?:
            // Nothing of the key itself goes into a message.
            Diagnostic(
                .error, rule: "certificate-invalid", "cannot read the private key", file: certificate.privateKeyPath,
                hint: "privkey.pem must hold one unencrypted PEM private key")
        default:
            Diagnostic(
                .error, rule: "certificate-invalid",
                "cannot read the certificate chain: \((error as? HTTPListenerError)?.reason ?? "\(error)")",
                file: certificate.fullchainPath,
                hint: "fullchain.pem must hold PEM certificates, leaf first, matching privkey.pem")
        }
    }
}
