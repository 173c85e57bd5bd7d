internal import COpenSSL

/// The 256-bit key that seals private keys at rest in the store (AES-256-GCM, ``SealedFormat``).
///
/// The key bytes live in memory of their own, wiped with `OPENSSL_cleanse` when the key is released, and appear in
/// no description: only the key file's path and the key id (a prefix of SHA-256 of the key, which tells keys apart
/// without revealing anything usable about them) do. Immutable after creation, hence `@unchecked Sendable`.
public final class StoreKey: @unchecked Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// Bytes of a store key.
    public static let byteCount = 32

    /// The key bytes, owned: wiped and freed in `deinit`.
    private let bytes: UnsafeMutableBufferPointer<UInt8>
    /// The file the key was read from, named by every error about it.
    public let file: String
    /// The first ``SealedFormat/keyIDLength`` bytes of SHA-256 of the key, written into every sealed value.
    public let keyID: [UInt8]

    /// Takes a copy of the 32 bytes of `key`, read from `file`; the caller wipes its own copy.
    ///
    /// - Throws: ``OpenSSLError/Code/storeKey`` when `key` is not 32 bytes.
    public init(key: [UInt8], file: String) throws {
        guard key.count == Self.byteCount else {
            throw OpenSSLError(
                .storeKey, "the store key from \(file) has \(key.count) bytes; AES-256 needs \(Self.byteCount)")
        }
        let storage = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: Self.byteCount)
        _ = storage.initialize(from: key)
        var digest = [UInt8](repeating: 0, count: 32)
        digest.withUnsafeMutableBufferPointer { output in
            _ = COpenSSL.SHA256(UnsafePointer(storage.baseAddress), storage.count, output.baseAddress)
        }
        bytes = storage
        self.file = file
        keyID = Array(digest.prefix(SealedFormat.keyIDLength))
    }

    deinit {
        OPENSSL_cleanse(bytes.baseAddress, bytes.count)
        bytes.deallocate()
    }

    /// The key id as 16 lowercase hex digits.
    public var keyIDText: String { Self.hex(keyID) }

    /// `store key 1a2b… (from /etc/aasa/store.key)`: never the key.
    public var description: String { "store key \(keyIDText) (from \(file))" }

    /// The same as ``description``, so `dump` and string interpolation in a debugger show no key either.
    public var debugDescription: String { description }

    /// Seals `plaintext` (a private key's PEM) under this key, bound to `context` (the store uses
    /// `<domain>/<file name>`): header, a fresh random nonce, the AES-256-GCM ciphertext and the tag.
    ///
    /// - Throws: ``OpenSSLError/Code/sealing`` when the plaintext is over ``SealedFormat/maximumPlaintextBytes``
    ///   or OpenSSL fails (no random bytes).
    public func seal(_ plaintext: [UInt8], context: [UInt8]) throws -> [UInt8] {
        guard plaintext.count <= SealedFormat.maximumPlaintextBytes else {
            throw OpenSSLError(
                .sealing,
                "cannot seal \(plaintext.count) bytes for '\(Self.printable(context))': the limit is "
                    + "\(SealedFormat.maximumPlaintextBytes) bytes")
        }
        let header = SealedFormat.header(keyID: keyID)
        var nonce = [UInt8](repeating: 0, count: SealedFormat.nonceLength)
        guard RAND_bytes(&nonce, Int32(nonce.count)) == 1 else {
            throw OpenSSLError(.sealing, "OpenSSL has no random bytes for a nonce")
        }
        let (ciphertext, tag) = try Self.gcmSeal(
            key: UnsafePointer(bytes.baseAddress!), nonce: nonce, additional: header + context, plaintext: plaintext)
        return header + nonce + ciphertext + tag
    }

    /// The plaintext of `sealed`, sealed under this key with the same `context`; nothing of it on failure.
    ///
    /// - Throws: ``OpenSSLError/Code/notSealed`` when `sealed` is not a sealed value (no magic, an unknown version,
    ///   shorter than header, nonce and tag, or over the size limit);
    ///   ``OpenSSLError/Code/sealedUnderAnotherKey`` when its key id is not this key's (the message names this key's
    ///   file); ``OpenSSLError/Code/sealedValueAltered`` when the tag does not match: the value was altered, or it
    ///   was sealed for another context.
    public func open(_ sealed: [UInt8], context: [UInt8]) throws -> [UInt8] {
        let name = Self.printable(context)
        guard SealedFormat.looksSealed(sealed) else {
            throw OpenSSLError(
                .notSealed,
                "'\(name)' is not a sealed value (it does not start with 'AASK'); "
                    + "private keys in the store are always sealed: write them with aasa-server, never by hand")
        }
        let version = sealed.count > SealedFormat.magic.count ? sealed[SealedFormat.magic.count] : nil
        if let version, version != SealedFormat.version {
            throw OpenSSLError(
                .notSealed,
                "'\(name)' is sealed in format version \(version); this aasa-server reads version "
                    + "\(SealedFormat.version): run the version that wrote it, or a newer one")
        }
        guard sealed.count >= SealedFormat.overhead else {
            throw OpenSSLError(
                .notSealed,
                "'\(name)' is a truncated sealed value: \(sealed.count) bytes, at least \(SealedFormat.overhead) are "
                    + "needed; restore it from a backup")
        }
        guard sealed.count - SealedFormat.overhead <= SealedFormat.maximumPlaintextBytes else {
            throw OpenSSLError(
                .notSealed,
                "'\(name)' is \(sealed.count) bytes; a sealed value holds at most "
                    + "\(SealedFormat.maximumPlaintextBytes) bytes of plaintext, so it is not opened")
        }
        let headerEnd = SealedFormat.headerLength
        let sealedKeyID = Array(sealed[(SealedFormat.magic.count + 1)..<headerEnd])
        guard sealedKeyID == keyID else {
            throw OpenSSLError(
                .sealedUnderAnotherKey,
                "'\(name)' was sealed under store key \(Self.hex(sealedKeyID)), not under \(keyIDText) from \(file); "
                    + "start with the key file it was sealed with (--store-key-file)")
        }
        let nonceEnd = headerEnd + SealedFormat.nonceLength
        let tagStart = sealed.count - SealedFormat.tagLength
        let opened = try Self.gcmOpen(
            key: UnsafePointer(bytes.baseAddress!), nonce: Array(sealed[headerEnd..<nonceEnd]),
            additional: Array(sealed[..<headerEnd]) + context, ciphertext: sealed[nonceEnd..<tagStart],
            tag: Array(sealed[tagStart...]))
        guard let opened else {
            throw OpenSSLError(
                .sealedValueAltered,
                "'\(name)' fails authentication: it was altered, or it was sealed for another domain or file; "
                    + "restore it from a backup, or store the key again")
        }
        return opened
    }

    /// AES-256-GCM of `plaintext` under the 32 bytes at `key` with a 12-byte `nonce`, authenticating `additional`:
    /// the ciphertext (as long as the plaintext) and the 16-byte tag.
    static func gcmSeal(key: UnsafePointer<UInt8>, nonce: [UInt8], additional: [UInt8], plaintext: [UInt8]) throws
        -> (ciphertext: [UInt8], tag: [UInt8])
    {
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count)
        var tag = [UInt8](repeating: 0, count: SealedFormat.tagLength)
        try withCipherContext { cipher in
            try check(
                EVP_EncryptInit_ex(cipher, EVP_aes_256_gcm(), nil, nil, nil) == 1
                    && EVP_CIPHER_CTX_ctrl(cipher, EVP_CTRL_AEAD_SET_IVLEN, Int32(nonce.count), nil) == 1
                    && EVP_EncryptInit_ex(cipher, nil, nil, key, nonce) == 1,
                "could not start")
            var length: Int32 = 0
            try check(
                EVP_EncryptUpdate(cipher, nil, &length, additional, Int32(additional.count)) == 1,
                "could not authenticate the additional data")
            var written = 0
            try plaintext.withUnsafeBufferPointer { input in
                try ciphertext.withUnsafeMutableBufferPointer { output in
                    guard !input.isEmpty else { return }
                    try check(
                        EVP_EncryptUpdate(cipher, output.baseAddress, &length, input.baseAddress, Int32(input.count))
                            == 1, "could not encrypt")
                    written = Int(length)
                }
            }
            // GCM, a stream mode, writes nothing at the end but computes the tag: called for an empty input too.
            var scratch = [UInt8](repeating: 0, count: 16)
            try check(
                EVP_EncryptFinal_ex(cipher, &scratch, &length) == 1 && length == 0, "could not finish encrypting")
            try check(written == plaintext.count, "wrote \(written) bytes for \(plaintext.count)")
            try check(
                EVP_CIPHER_CTX_ctrl(cipher, EVP_CTRL_AEAD_GET_TAG, Int32(tag.count), &tag) == 1,
                "could not read the tag")
        }
        return (ciphertext, tag)
    }

    /// The plaintext of `ciphertext` (AES-256-GCM under the 32 bytes at `key`, with `nonce` and `additional`), or
    /// `nil` when `tag` does not match; what was decrypted before the tag was checked is wiped, never returned.
    static func gcmOpen(
        key: UnsafePointer<UInt8>, nonce: [UInt8], additional: [UInt8], ciphertext: ArraySlice<UInt8>, tag: [UInt8]
    ) throws -> [UInt8]? {
        var plaintext = [UInt8](repeating: 0, count: ciphertext.count)
        var authentic = false
        do {
            try withCipherContext { cipher in
                try check(
                    EVP_DecryptInit_ex(cipher, EVP_aes_256_gcm(), nil, nil, nil) == 1
                        && EVP_CIPHER_CTX_ctrl(cipher, EVP_CTRL_AEAD_SET_IVLEN, Int32(nonce.count), nil) == 1
                        && EVP_DecryptInit_ex(cipher, nil, nil, key, nonce) == 1,
                    "could not start")
                var length: Int32 = 0
                try check(
                    EVP_DecryptUpdate(cipher, nil, &length, additional, Int32(additional.count)) == 1,
                    "could not authenticate the additional data")
                var written = 0
                try ciphertext.withUnsafeBufferPointer { input in
                    try plaintext.withUnsafeMutableBufferPointer { output in
                        guard !output.isEmpty else { return }
                        try check(
                            EVP_DecryptUpdate(
                                cipher, output.baseAddress, &length, input.baseAddress, Int32(input.count)) == 1,
                            "could not decrypt")
                        written = Int(length)
                    }
                }
                try check(written == plaintext.count, "wrote \(written) bytes for \(plaintext.count)")
                var expected = tag
                try check(
                    EVP_CIPHER_CTX_ctrl(cipher, EVP_CTRL_AEAD_SET_TAG, Int32(expected.count), &expected) == 1,
                    "could not set the tag")
                // The tag is checked here: until it passes, the bytes decrypted so far are not trusted. GCM writes
                // nothing at the end.
                var scratch = [UInt8](repeating: 0, count: 16)
                authentic = EVP_DecryptFinal_ex(cipher, &scratch, &length) == 1 && length == 0
                OpenSSLError.drainErrorQueue()
            }
        } catch {
            plaintext.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) }
            throw error
        }
        guard authentic else {
            plaintext.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) }
            return nil
        }
        return plaintext
    }

    /// Runs `body` with a fresh cipher context, freed (and its key schedule wiped by OpenSSL) afterwards.
    private static func withCipherContext(_ body: (OpaquePointer) throws -> Void) throws {
        guard let cipher = EVP_CIPHER_CTX_new() else { throw OpenSSLError(.sealing, "no cipher context") }
        defer { EVP_CIPHER_CTX_free(cipher) }
        try body(cipher)
    }

    /// Throws ``OpenSSLError/Code/sealing`` with `reason` unless `condition` holds.
    private static func check(_ condition: Bool, _ reason: @autoclosure () -> String) throws {
        guard condition else { throw OpenSSLError(.sealing, "AES-256-GCM: \(reason())") }
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0xF)]] }, as: UTF8.self)
    }

    /// The context as text for a message: printable ASCII kept, anything else as `?`, at most 200 characters.
    private static func printable(_ context: [UInt8]) -> String {
        let shown = context.prefix(200).map { $0 >= 0x20 && $0 < 0x7F ? $0 : UInt8(ascii: "?") }
        return String(decoding: shown, as: UTF8.self) + (context.count > 200 ? "…" : "")
    }
}

extension OpenSSLError.Code {
    /// A store key is not 32 bytes (``StoreKey``).
    public static let storeKey = OpenSSLError.Code(rawValue: "store-key")
    /// Sealing failed: the plaintext is over the limit, or OpenSSL failed (``StoreKey/seal(_:context:)``).
    public static let sealing = OpenSSLError.Code(rawValue: "sealing")
    /// Bytes opened as a sealed value are not one: no magic, an unknown version, truncated, over the limit.
    public static let notSealed = OpenSSLError.Code(rawValue: "not-sealed")
    /// A sealed value's key id is not the store key's: it was sealed under another key.
    public static let sealedUnderAnotherKey = OpenSSLError.Code(rawValue: "sealed-under-another-key")
    /// A sealed value fails GCM authentication: altered, or sealed for another context.
    public static let sealedValueAltered = OpenSSLError.Code(rawValue: "sealed-value-altered")
}
