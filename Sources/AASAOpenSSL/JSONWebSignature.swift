internal import AASACore
internal import COpenSSL

/// An ES256 JSON Web Signature in the flattened JSON serialization (RFC 7515 §7.2.2), as every ACME request body
/// is (RFC 8555 §6.2).
public struct JSONWebSignature: Sendable {
    /// How the protected header names the account key (RFC 8555 §6.2).
    public enum KeyIdentifier: Sendable, Hashable {
        /// The whole public key: for newAccount and for revokeCert signed with the certificate's key.
        case jwk(JSONWebKey)
        /// The account URL returned by newAccount: for every other request.
        case kid(String)
    }

    /// The protected header's JSON bytes: `alg`, `jwk` or `kid`, `nonce`, `url`.
    public let protectedHeader: [UInt8]
    /// The signed content; empty for POST-as-GET (RFC 8555 §6.3).
    public let payload: [UInt8]
    /// The ES256 signature: r and s, 32 big-endian bytes each (RFC 7518 §3.4).
    public let signature: [UInt8]

    /// Signs `payload` with the P-256 `key` for a request to `url` carrying the server's `nonce`.
    ///
    /// Throws ``OpenSSLError/Code/unsupportedKey`` unless `key` is ECDSA P-256.
    public init(payload: [UInt8], key: PrivateKey, keyIdentifier: KeyIdentifier, nonce: String, url: String) throws {
        guard key.algorithm == .ecdsa(curve: "P-256") else {
            throw OpenSSLError(.unsupportedKey, "ES256 needs an ECDSA P-256 key, not \(key.keyDescription)")
        }
        let identifier: (String, JSONValue)
        switch keyIdentifier {
        case .jwk(let publicKey): identifier = ("jwk", publicKey.jsonValue)
        case .kid(let account): identifier = ("kid", .string(account))
        }
        let header = JSONValue.members([
            ("alg", .string("ES256")), identifier, ("nonce", .string(nonce)), ("url", .string(url)),
        ])
        protectedHeader = JSONWriter(style: .compact).bytes(header)
        self.payload = payload
        // The JWS Signing Input: ASCII(BASE64URL(header) || '.' || BASE64URL(payload)) (RFC 7515 §5.1).
        let signingInput = Array((Base64URL.encode(protectedHeader) + "." + Base64URL.encode(payload)).utf8)
        signature = try Self.es256(signingInput, key: key)
    }

    /// `{"protected":…,"payload":…,"signature":…}`, each base64url: the request body, sent as
    /// `application/jose+json`.
    public var jsonBytes: [UInt8] {
        JSONWriter(style: .compact).bytes(
            .members([
                ("protected", .string(Base64URL.encode(protectedHeader))),
                ("payload", .string(Base64URL.encode(payload))),
                ("signature", .string(Base64URL.encode(signature))),
            ]))
    }

    /// ECDSA P-256 with SHA-256 over `input`, as r || s (RFC 7518 §3.4) instead of OpenSSL's DER `ECDSA-Sig-Value`.
    private static func es256(_ input: [UInt8], key: PrivateKey) throws -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw OpenSSLError(.signing, "out of memory") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key.pointer) == 1 else {
            throw OpenSSLError(.signing, "could not start an ES256 signature")
        }
        var length = 0
        guard EVP_DigestSign(context, nil, &length, input, input.count) == 1 else {
            throw OpenSSLError(.signing, "could not size an ES256 signature")
        }
        var der = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(context, &der, &length, input, input.count) == 1 else {
            throw OpenSSLError(.signing, "could not make an ES256 signature")
        }
        return try der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            guard let parsed = d2i_ECDSA_SIG(nil, &cursor, length) else {
                throw OpenSSLError(.malformedDER, "OpenSSL's ECDSA signature is not an ECDSA-Sig-Value")
            }
            defer { ECDSA_SIG_free(parsed) }
            let width = JSONWebKey.coordinateLength
            return try BigNumber.bytes(ECDSA_SIG_get0_r(parsed), length: width)
                + BigNumber.bytes(ECDSA_SIG_get0_s(parsed), length: width)
        }
    }
}
