internal import AASACore
internal import COpenSSL

/// The public JSON Web Key of an ECDSA P-256 key (RFC 7517, RFC 7518 §6.2): what an ACME account is known by.
public struct JSONWebKey: Sendable, Hashable {
    /// The affine x coordinate, big-endian, left-padded to 32 bytes (RFC 7518 §6.2.1.2).
    public let x: [UInt8]
    /// The affine y coordinate, big-endian, left-padded to 32 bytes (RFC 7518 §6.2.1.3).
    public let y: [UInt8]

    /// The length of a P-256 coordinate in bytes.
    static let coordinateLength = 32

    /// The public half of `key`; throws ``OpenSSLError/Code/unsupportedKey`` unless it is ECDSA P-256.
    public init(publicKeyOf key: PrivateKey) throws {
        guard key.algorithm == .ecdsa(curve: "P-256") else {
            throw OpenSSLError(
                .unsupportedKey,
                "a \(key.keyDescription) key has no ES256 JSON Web Key; generate an ECDSA P-256 account key")
        }
        x = try Self.coordinate(OSSL_PKEY_PARAM_EC_PUB_X, of: key)
        y = try Self.coordinate(OSSL_PKEY_PARAM_EC_PUB_Y, of: key)
    }

    private static func coordinate(_ name: String, of key: PrivateKey) throws -> [UInt8] {
        var number: OpaquePointer? = nil
        guard EVP_PKEY_get_bn_param(key.pointer, name, &number) == 1, let number else {
            throw OpenSSLError(.encoding, "could not read the public key's '\(name)' coordinate")
        }
        defer { BN_free(number) }
        return try BigNumber.bytes(number, length: coordinateLength)
    }

    /// The required members (RFC 7638 §3.2): `crv`, `kty`, `x`, `y`, base64url without padding.
    public var members: [String: String] {
        ["crv": "P-256", "kty": "EC", "x": Base64URL.encode(x), "y": Base64URL.encode(y)]
    }

    /// The key as a JSON object, members in lexicographic order, for a JWS protected header (RFC 7515 §4.1.3).
    var jsonValue: JSONValue { Self.canonicalObject(members) }

    /// The RFC 7638 SHA-256 thumbprint, base64url: the account part of every key authorization.
    public var thumbprint: String { Self.thumbprint(requiredMembers: members) }

    /// The RFC 7638 SHA-256 thumbprint of a JWK given by its required members (§3.2), base64url.
    ///
    /// Hashes the UTF-8 of the JSON object holding exactly `requiredMembers`, ordered by the code points of their
    /// names, without whitespace (§3.3). Required members are ASCII in every key type, so nothing is escaped.
    public static func thumbprint(requiredMembers: [String: String]) -> String {
        Base64URL.encode(SHA256.digest(JSONWriter(style: .compact).bytes(canonicalObject(requiredMembers))))
    }

    /// `members` as a JSON object ordered by the code points of their names (UTF-8 byte order is code point order).
    private static func canonicalObject(_ members: [String: String]) -> JSONValue {
        .members(
            members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }.map { ($0.key, .string($0.value)) })
    }

    /// The key authorization for a challenge `token`: `token "." thumbprint` (RFC 8555 §8.1), the body an
    /// http-01 responder serves (§8.3).
    public func keyAuthorization(token: String) -> String {
        token + "." + thumbprint
    }
}
