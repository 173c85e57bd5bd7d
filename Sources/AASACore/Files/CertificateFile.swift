/// A file of a certificate folder (`<certs>/<name>/`: certbot's layout, and what the server keeps beside it), the one
/// place each name is spelled in code.
public enum CertificateFile: String, Sendable, CaseIterable {
    /// The leaf, then its intermediates, as PEM.
    case chain = "fullchain.pem"
    /// The leaf's private key, as PEM.
    case privateKey = "privkey.pem"
    /// A DER OCSP response to staple, beside the chain.
    case staple = "ocsp.der"
    /// What ACME keeps about a certificate it obtained (its order, ARI window and failures).
    case acmeRecord = "acme.json"

    /// The file's name in its folder.
    public var name: String { rawValue }

    /// The files a load reads from every certificate folder: what ``FolderReadAhead`` brings in ahead of it.
    public static let readAhead = [chain.name, privateKey.name]

    /// The file's path in the certificate folder `folder`.
    public func path(in folder: String) -> String { folder.joiningPath(rawValue) }
}
