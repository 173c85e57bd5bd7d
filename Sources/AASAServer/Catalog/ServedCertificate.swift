import AASACore
import AASAMicroHTTPD
import AASAOpenSSL
import Foundation

/// A certificate in service and when it was loaded: what the server needs of it to serve it.
///
/// Not the whole ``DomainCertificate``: a server with thousands of domains would keep every leaf's DER and
/// summary for nothing.
struct ServedCertificate: Sendable {
    var folderName: String
    var names: [String]
    var notBefore: Date
    var notAfter: Date
    /// SHA-256 fingerprint of the leaf, for ``ServerStatus``.
    var fingerprint: SHA256Fingerprint
    /// The leaf's subjectAltName entries, to find the certificate of each domain.
    var subjectAlternativeNames: SubjectAlternativeNames
    /// The checked OCSP response to staple, and when it stops being valid.
    var ocspStaple: (response: [UInt8], nextUpdate: Date)?
    /// The chain, key and staple, checked when the folder was read and imported into GnuTLS when a handshake first
    /// asks for one of its names: what the HTTPS listener's SNI table serves.
    var credential: DeferredCredential
    /// The folder's files by their stamps, and what was found in them: the next load skips parsing them if
    /// they did not change.
    var known: CertificateDirectory.KnownFolder
    var loadedAt: Date

    init(_ certificate: DomainCertificate, credential: DeferredCredential, loadedAt: Date) {
        self.credential = credential
        folderName = certificate.folderName
        // The leaf's name that is the folder's own (nearly every folder's only one) is kept as the folder
        // name's string: its own copy would be one more allocation for each certificate served.
        var summary = certificate.summary
        if let own = summary.subjectAlternativeNames.dnsNames.firstIndex(of: certificate.folderName) {
            summary.subjectAlternativeNames.dnsNames[own] = certificate.folderName
        }
        subjectAlternativeNames = summary.subjectAlternativeNames
        names = summary.names
        notBefore = certificate.summary.notBefore
        notAfter = certificate.notAfter
        fingerprint = certificate.summary.fingerprint
        ocspStaple = certificate.ocspStaple
        known = certificate.known
        self.loadedAt = loadedAt
    }

    /// Why the last import of the certificate for a handshake failed (handshakes for its names fail until one
    /// succeeds or the folder is loaded again), as an error naming the folder; `nil` when none has.
    var handshakeFailure: Diagnostic? {
        credential.failure.map { reason in
            Diagnostic(
                .error, rule: .certificateInvalid,
                "the certificate of folder '\(folderName)' could not be imported for a handshake, so handshakes for "
                    + "\(names.joined(separator: ", ")) fail: \(reason)",
                hint:
                    "each new handshake imports it again; should this persist, replace the folder's fullchain.pem and "
                    + "privkey.pem")
        }
    }

    /// Whether `certificate` was read from the same files and staples the same response.
    func isSame(as certificate: DomainCertificate) -> Bool {
        known.chain == certificate.known.chain && known.key == certificate.known.key
            && ocspStaple?.response == certificate.ocspStaple?.response
    }
}
