internal import COpenSSL

/// The algorithm of a public or private key.
public enum KeyAlgorithm: Sendable, Hashable, CustomStringConvertible {
    /// RSA.
    case rsa
    /// ECDSA on a named curve (`P-256`, `P-384`, `P-521`, or OpenSSL's name for others).
    case ecdsa(curve: String)
    /// Ed25519.
    case ed25519
    /// Anything else, by OpenSSL's type name.
    case other(String)

    /// Reads the algorithm of an `EVP_PKEY*` (borrowed).
    init(_ key: OpaquePointer) {
        switch EVP_PKEY_get_base_id(key) {
        case EVP_PKEY_RSA:
            self = .rsa
        case EVP_PKEY_EC:
            var buffer = [CChar](repeating: 0, count: 64)
            var length = 0
            guard EVP_PKEY_get_group_name(key, &buffer, buffer.count, &length) == 1 else {
                OpenSSLError.drainErrorQueue()
                self = .ecdsa(curve: "unknown")
                return
            }
            let name = String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            switch name {
            case "prime256v1", "P-256": self = .ecdsa(curve: "P-256")
            case "secp384r1", "P-384": self = .ecdsa(curve: "P-384")
            case "secp521r1", "P-521": self = .ecdsa(curve: "P-521")
            default: self = .ecdsa(curve: name)
            }
        case EVP_PKEY_ED25519:
            self = .ed25519
        default:
            if let name = EVP_PKEY_get0_type_name(key) {
                self = .other(String(cString: name))
            } else {
                self = .other("unknown")
            }
        }
    }

    /// `RSA`, `ECDSA P-256`, `Ed25519`.
    public var description: String {
        switch self {
        case .rsa: "RSA"
        case .ecdsa(let curve): "ECDSA \(curve)"
        case .ed25519: "Ed25519"
        case .other(let name): name
        }
    }

    /// `RSA 2048`, `ECDSA P-256` (the curve already names the size), `Ed25519`.
    func description(bits: Int) -> String {
        switch self {
        case .rsa: "RSA \(bits)"
        case .other(let name): "\(name) \(bits)"
        default: description
        }
    }
}
