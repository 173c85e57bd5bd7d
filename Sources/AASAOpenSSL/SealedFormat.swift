/// The layout of a value sealed by ``StoreKey/seal(_:context:)``: the format the store keeps private keys in.
///
/// ```
/// offset  size  field
///      0     4  magic "AASK"
///      4     1  version (1)
///      5     8  key id: the first 8 bytes of SHA-256 of the 32-byte store key
///     13    12  nonce, fresh from RAND_bytes for every seal
///     25     n  ciphertext: AES-256-GCM of the plaintext (as long as the plaintext)
///   25+n    16  GCM tag
/// ```
///
/// The additional authenticated data is the 13-byte header followed by the caller's context (the store uses
/// `<domain>/<file name>`), so a value moved to another row, or a header edited, fails authentication. The key id
/// is read before any decryption, so a value sealed under another key is told apart from one that was altered.
public enum SealedFormat {
    /// The four bytes every sealed value starts with, `AASK`.
    public static let magic: [UInt8] = Array("AASK".utf8)
    /// The version this build writes and the only one it reads.
    public static let version: UInt8 = 1
    /// Bytes of the key id (a prefix of SHA-256 of the key).
    public static let keyIDLength = 8
    /// Bytes of the magic, the version and the key id.
    public static let headerLength = 4 + 1 + 8
    /// Bytes of the GCM nonce (96 bits, the size GCM is defined for without hashing).
    public static let nonceLength = 12
    /// Bytes of the GCM tag (128 bits, the full tag).
    public static let tagLength = 16
    /// What sealing adds to a plaintext: header, nonce and tag.
    public static let overhead = headerLength + nonceLength + tagLength
    /// The largest plaintext sealed or opened: 1 MiB, sixteen times the 64 KiB cap of a `privkey.pem`. Checked
    /// before any work, so a corrupted length never makes the server decrypt gigabytes.
    public static let maximumPlaintextBytes = 1 << 20

    /// Whether `bytes` start like a sealed value (the magic), whatever the version: a plaintext PEM key starts
    /// with `-----` and never matches.
    public static func looksSealed(_ bytes: [UInt8]) -> Bool {
        bytes.count >= magic.count && Array(bytes.prefix(magic.count)) == magic
    }

    /// The header for a value sealed under the key with `keyID`.
    static func header(keyID: [UInt8]) -> [UInt8] {
        magic + [version] + keyID
    }
}
