internal import COpenSSL
internal import CShims.OpenSSL

/// A private key (owns one OpenSSL `EVP_PKEY`).
///
/// Immutable after creation, hence `@unchecked Sendable`.
public final class PrivateKey: @unchecked Sendable {
    /// What kind of key to generate.
    public enum GenerationParameters: Sendable, Hashable {
        /// ECDSA on P-256: the default, twice as fast to handshake with as RSA-2048 under GnuTLS.
        case ecdsaP256
        /// RSA with the given modulus size in bits (2048 or more).
        case rsa(bits: Int)
    }

    /// The owned `EVP_PKEY*`, freed in `deinit`.
    let pointer: OpaquePointer

    /// Takes ownership of `pointer`.
    init(taking pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit { EVP_PKEY_free(pointer) }

    /// Parses an unencrypted PEM private key (PKCS#8 `PRIVATE KEY`, `EC PRIVATE KEY` or `RSA PRIVATE KEY`).
    ///
    /// Encrypted keys are refused instead of prompting on the terminal for a passphrase.
    public convenience init(pemEncoded bytes: [UInt8]) throws {
        if let key = Self.decodeNamedType(pemEncoded: bytes) {
            self.init(taking: key)
            return
        }
        let parsed = try MemoryBIO.reading(bytes) { bio -> OpaquePointer in
            guard let key = PEM_read_bio_PrivateKey(bio, nil, refusePassphrase, nil) else {
                throw OpenSSLError(
                    .malformedPEM,
                    "no unencrypted PEM private key found (expected '-----BEGIN PRIVATE KEY-----'; "
                        + "encrypted keys are not supported)")
            }
            return key
        }
        self.init(taking: parsed)
    }

    /// The common unencrypted keys, decoded with their structure and type named up front; `nil` for anything
    /// else, which then goes through `PEM_read_bio_PrivateKey` (so what is accepted, and every error, is unchanged).
    ///
    /// OpenSSL 3.0 builds a decoder chain for every structure and key type it knows on each
    /// `PEM_read_bio_PrivateKey` (openssl/openssl#15199; 3.2 caches it): about 4.4 million instructions per P-256
    /// key, against 1.1 million once the label (and for PKCS#8 the algorithm OID) names them. A server loading
    /// thousands of certificate folders spent most of its start here.
    private static func decodeNamedType(pemEncoded bytes: [UInt8]) -> OpaquePointer? {
        // A miss queues errors that the general path reports its own way: drop exactly those.
        ERR_set_mark()
        defer { ERR_pop_to_mark() }
        let key = try? MemoryBIO.reading(bytes) { bio -> OpaquePointer? in
            var name: UnsafeMutablePointer<CChar>? = nil
            var header: UnsafeMutablePointer<CChar>? = nil
            var data: UnsafeMutablePointer<UInt8>? = nil
            var length = 0
            guard PEM_read_bio(bio, &name, &header, &data, &length) == 1, let name, let data else { return nil }
            defer {
                cshims_OPENSSL_free(name)
                cshims_OPENSSL_free(header)
                cshims_OPENSSL_free(data)
            }
            // A header (Proc-Type, DEK-Info) means legacy encryption: the general path refuses it.
            guard header?.pointee ?? 0 == 0 else { return nil }
            let structure: String
            let type: String
            switch String(cString: name) {
            case "PRIVATE KEY":
                guard let algorithm = pkcs8Algorithm(UnsafePointer(data), length: length) else { return nil }
                (structure, type) = ("PrivateKeyInfo", algorithm)
            case "EC PRIVATE KEY": (structure, type) = ("type-specific", "EC")
            case "RSA PRIVATE KEY": (structure, type) = ("type-specific", "RSA")
            default: return nil
            }
            var key: OpaquePointer? = nil
            guard
                let decoder = OSSL_DECODER_CTX_new_for_pkey(
                    &key, "DER", structure, type, cshims_evp_pkey_keypair_selection(), nil, nil)
            else { return nil }
            defer { OSSL_DECODER_CTX_free(decoder) }
            var cursor: UnsafePointer<UInt8>? = UnsafePointer(data)
            var remaining = length
            guard OSSL_DECODER_from_data(decoder, &cursor, &remaining) == 1 else { return nil }
            return key
        }
        return key ?? nil
    }

    /// The OpenSSL key type of a PKCS#8 `PrivateKeyInfo` (`EC`, `RSA`), or `nil` when it is another one.
    private static func pkcs8Algorithm(_ der: UnsafePointer<UInt8>, length: Int) -> String? {
        var cursor: UnsafePointer<UInt8>? = der
        guard let info = d2i_PKCS8_PRIV_KEY_INFO(nil, &cursor, length) else { return nil }
        defer { PKCS8_PRIV_KEY_INFO_free(info) }
        var oid: OpaquePointer? = nil
        guard PKCS8_pkey_get0(&oid, nil, nil, nil, info) == 1, let oid else { return nil }
        switch OBJ_obj2nid(oid) {
        case NID_X9_62_id_ecPublicKey: return "EC"
        case NID_rsaEncryption: return "RSA"
        default: return nil
        }
    }

    /// Parses an unencrypted PEM private key.
    public convenience init(pemEncoded text: String) throws {
        try self.init(pemEncoded: Array(text.utf8))
    }

    /// Generates a fresh key.
    public static func generate(_ parameters: GenerationParameters = .ecdsaP256) throws -> PrivateKey {
        let algorithm: String
        switch parameters {
        case .ecdsaP256: algorithm = "EC"
        case .rsa(let bits):
            guard bits >= 2048 else {
                throw OpenSSLError(.keyGeneration, "RSA keys need at least 2048 bits, not \(bits)")
            }
            algorithm = "RSA"
        }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, algorithm, nil) else {
            throw OpenSSLError(.keyGeneration, "OpenSSL has no \(algorithm) key generator")
        }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_keygen_init(context) == 1 else {
            throw OpenSSLError(.keyGeneration, "could not start \(algorithm) key generation")
        }
        switch parameters {
        case .ecdsaP256:
            guard EVP_PKEY_CTX_set_group_name(context, "P-256") == 1 else {
                throw OpenSSLError(.keyGeneration, "could not select curve P-256")
            }
        case .rsa(let bits):
            guard EVP_PKEY_CTX_set_rsa_keygen_bits(context, Int32(bits)) == 1 else {
                throw OpenSSLError(.keyGeneration, "could not set RSA size \(bits)")
            }
        }
        var key: OpaquePointer? = nil
        guard EVP_PKEY_generate(context, &key) == 1, let key else {
            throw OpenSSLError(.keyGeneration, "\(algorithm) key generation failed")
        }
        return PrivateKey(taking: key)
    }

    /// The key's algorithm.
    public var algorithm: KeyAlgorithm { KeyAlgorithm(pointer) }

    /// The key size in bits (256 for P-256, 2048 for RSA-2048).
    public var bits: Int { Int(EVP_PKEY_get_bits(pointer)) }

    /// `ECDSA P-256`, `RSA 2048`.
    public var keyDescription: String { algorithm.description(bits: bits) }

    /// Whether this key is the private half of `certificate`'s public key.
    public func matches(_ certificate: X509Certificate) -> Bool {
        guard let publicKey = X509_get0_pubkey(certificate.pointer) else {
            OpenSSLError.drainErrorQueue()
            return false
        }
        let result = EVP_PKEY_eq(publicKey, pointer) == 1
        OpenSSLError.drainErrorQueue()  // a type mismatch (RSA vs EC) queues an error that is just "no"
        return result
    }

    /// Throws ``OpenSSLError/Code/keyMismatch`` unless this key belongs to `certificate`.
    public func checkMatches(_ certificate: X509Certificate) throws {
        guard matches(certificate) else {
            throw OpenSSLError(
                .keyMismatch,
                "private key (\(keyDescription)) does not belong to certificate \(certificate.subjectName) "
                    + "(\(certificate.publicKeyDescription)); pair each certificate with the key it was issued for")
        }
    }

    /// The key as unencrypted PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`).
    public func pemEncoded() throws -> String {
        let bytes = try MemoryBIO.collecting(OpenSSLError(.encoding, "could not PEM-encode a private key")) {
            PEM_write_bio_PrivateKey($0, pointer, nil, nil, 0, nil, nil)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Passphrase callback that refuses: without it, OpenSSL would prompt on the terminal for encrypted keys.
private let refusePassphrase:
    @convention(c) (
        UnsafeMutablePointer<CChar>?, Int32, Int32, UnsafeMutableRawPointer?
    ) -> Int32 = { _, _, _, _ in -1 }
