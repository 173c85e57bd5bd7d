internal import AASACore

/// A private key as a credential keeps it until GnuTLS imports it: the DER of a PEM file's one unencrypted key
/// (PKCS #8, SEC 1 or PKCS #1: what GnuTLS's PEM import decodes to anyway, at about 60 % of the PEM's bytes), or
/// the PEM as given when it holds anything else, for GnuTLS to read as it would the file.
struct PrivateKeyBytes: Sendable {
    /// The key's bytes, as ``isPEM`` says.
    let bytes: [UInt8]
    /// Whether ``bytes`` is PEM text (else DER).
    let isPEM: Bool

    /// The labels of the unencrypted keys GnuTLS reads as DER (three: looked through, not hashed).
    private static let derLabels = ["PRIVATE KEY", "EC PRIVATE KEY", "RSA PRIVATE KEY"]

    /// The key of a `privkey.pem`: its DER when it holds one unencrypted key (and at most OpenSSL's `EC PARAMETERS`
    /// beside it), else its PEM.
    init(pem: [UInt8]) {
        if let blocks = try? PEMBlocks(pem).blocks,
            case let keys = blocks.filter({ Self.derLabels.contains($0.label) }), keys.count == 1,
            blocks.allSatisfy({ $0.label == "EC PARAMETERS" || Self.derLabels.contains($0.label) })
        {
            bytes = keys[0].bytes
            isPEM = false
        } else {
            bytes = pem
            isPEM = true
        }
    }

    /// A key's DER, as ``init(pem:)`` keeps it.
    init(der: [UInt8]) {
        bytes = der
        isPEM = false
    }

    /// The PEM as given, kept whole.
    init(keepingPEM pem: [UInt8]) {
        bytes = pem
        isPEM = true
    }
}
