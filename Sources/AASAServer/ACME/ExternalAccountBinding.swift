public import AASACore
public import AASAOpenSSL
import Foundation

/// An external account binding (RFC 8555 §7.3.4): the key ID and HMAC key a CA such as ZeroSSL, Google Trust
/// Services or a private CA hands out, with which newAccount proves the ACME account belongs to an account there.
public struct ExternalAccountBinding: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The key ID the CA gave (`--acme-eab-kid`).
    public var keyID: String
    /// The HMAC key, decoded from the base64url text the CA gave (`--acme-eab-hmac-key-file`). Never logged.
    public var hmacKey: [UInt8]

    /// The largest key file read: a CA's key is 32 to 64 bytes, 43 to 86 characters of base64url.
    public static let maximumKeyFileSize = 4096

    public init(keyID: String, hmacKey: [UInt8]) {
        self.keyID = keyID
        self.hmacKey = hmacKey
    }

    /// The key ID and the key's length: never the key, wherever a binding is printed or logged.
    public var description: String { "external account binding \(keyID) (HMAC key of \(hmacKey.count) bytes)" }
    public var debugDescription: String { description }

    /// Why a key ID and key file do not make a binding: the message names the options, the file and the fix.
    public struct LoadError: Error, CustomStringConvertible {
        public var description: String
    }

    /// The binding `keyID` and the key in `keyFile` describe, `nil` when both are absent; the error names
    /// `keyIDOption` and `keyFileOption` (the primary CA's options or the fallback's).
    ///
    /// The file holds the key as base64url text (surrounding whitespace and `=` padding are ignored) and is read
    /// only up to ``maximumKeyFileSize`` bytes.
    public static func load(
        keyID: String?, keyFile: String?, keyIDOption: String, keyFileOption: String
    ) throws(LoadError) -> ExternalAccountBinding? {
        switch (keyID, keyFile) {
        case (nil, nil):
            return nil
        case (_?, nil), (nil, _?):
            throw LoadError(
                description:
                    "\(keyIDOption) and \(keyFileOption) go together: give both, the key ID and the file holding the "
                    + "HMAC key the CA handed out with it")
        case (let keyID?, let keyFile?):
            guard !keyID.isEmpty, !keyID.contains(where: { $0.isWhitespace || $0.isNewline }) else {
                throw LoadError(description: "\(keyIDOption) '\(keyID)' is not a key ID: give the ID the CA handed out")
            }
            let text = try readKeyFile(keyFile, option: keyFileOption)
            var trimmed = Substring(text.trimmingCharacters(in: .whitespacesAndNewlines))
            while trimmed.hasSuffix("=") { trimmed = trimmed.dropLast() }
            guard !trimmed.isEmpty else {
                throw LoadError(
                    description:
                        "\(keyFileOption) \(keyFile) is empty: write the base64url HMAC key the CA handed out into it")
            }
            guard let key = Base64URL.decode(String(trimmed)), !key.isEmpty else {
                throw LoadError(
                    description:
                        "\(keyFileOption) \(keyFile) does not hold base64url text (A-Z a-z 0-9 - _): write the HMAC "
                        + "key exactly as the CA handed it out")
            }
            return ExternalAccountBinding(keyID: keyID, hmacKey: key)
        }
    }

    private static func readKeyFile(_ path: String, option: String) throws(LoadError) -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw LoadError(
                description: "\(option) \(path) cannot be read: check the path and that this user may read it")
        }
        defer { try? handle.close() }
        let bytes: Data
        do {
            bytes = try handle.read(upToCount: maximumKeyFileSize + 1) ?? Data()
        } catch {
            throw LoadError(description: "\(option) \(path) cannot be read (\(error)): check that it is a file")
        }
        guard bytes.count <= maximumKeyFileSize else {
            throw LoadError(
                description:
                    "\(option) \(path) is larger than \(maximumKeyFileSize) bytes: it should hold only the base64url "
                    + "HMAC key the CA handed out")
        }
        guard let text = String(bytes: bytes, encoding: .utf8) else {
            throw LoadError(
                description: "\(option) \(path) is not text: write the base64url HMAC key the CA handed out into it")
        }
        return text
    }

    /// The `externalAccountBinding` member of a newAccount payload sent to `newAccountURL`: a flattened JWS whose
    /// protected header is `{"alg":"HS256","kid":…,"url":…}`, whose payload is the account's public key, MACed with
    /// HMAC-SHA256 under ``hmacKey`` (RFC 8555 §7.3.4).
    public func jws(accountKey: JSONWebKey, newAccountURL: String) -> JSONValue {
        let writer = JSONWriter(style: .compact)
        let header = writer.bytes(
            .members([("alg", .string("HS256")), ("kid", .string(keyID)), ("url", .string(newAccountURL))]))
        let payload = writer.bytes(
            .members(
                accountKey.members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }.map {
                    ($0.key, .string($0.value))
                }))
        let signingInput = Base64URL.encode(header) + "." + Base64URL.encode(payload)
        let mac = HMACSHA256.authenticationCode(key: hmacKey, message: Array(signingInput.utf8))
        return .members([
            ("protected", .string(Base64URL.encode(header))), ("payload", .string(Base64URL.encode(payload))),
            ("signature", .string(Base64URL.encode(mac))),
        ])
    }
}
