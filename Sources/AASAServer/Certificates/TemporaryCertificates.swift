import AASAMicroHTTPD
import AASAOpenSSL
import Synchronization

/// Self-signed certificates for the domains that have no certificate yet while ACME obtains one (`serve --acme`):
/// their handshakes complete (no client trusts the certificate, and its subject says it is temporary), and the
/// domain's http-01 answers work on plain HTTP from the first second.
///
/// Made once per domain and kept until the domain is covered by a real certificate.
final class TemporaryCertificates: Sendable {
    private let made = Mutex<[String: GnuTLSCredential]>([:])

    /// The credential for `domain`, made now if it has none; `nil` when it cannot be made (the name is not a DNS
    /// name).
    func credential(for domain: String) -> GnuTLSCredential? {
        if let credential = made.withLock({ $0[domain] }) { return credential }
        // Long enough never to expire while the CA is unreachable: it is never trusted whatever its dates.
        guard let issued = try? IssuedCertificate.selfSigned(name: domain, validityDays: 397),
            let chain = try? issued.certificatePEM(), let key = try? issued.privateKeyPEM(),
            let credential = try? GnuTLSCredential(
                chainPEM: Array(chain.utf8), keyPEM: Array(key.utf8), label: "the temporary certificate of \(domain)")
        else { return nil }
        made.withLock { $0[domain] = credential }
        return credential
    }

    /// Lets go of the credentials of domains not in `domains`.
    func keep(only domains: Set<String>) {
        made.withLock { made in made = made.filter { domains.contains($0.key) } }
    }
}
