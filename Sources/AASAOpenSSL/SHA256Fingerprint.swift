internal import COpenSSL

/// A certificate's SHA-256 fingerprint: the digest of its DER, held as 32 bytes inline.
///
/// A server keeps one for every certificate it serves (``CertificateSummary/fingerprint``, for `/status`); as text
/// it would be a 95-byte string allocated apart, about 11 MB at 100,000 domains, so the text is made when asked.
public struct SHA256Fingerprint: Sendable, Hashable, CustomStringConvertible {
    private let first: UInt64
    private let second: UInt64
    private let third: UInt64
    private let fourth: UInt64

    /// The fingerprint of `der`, a certificate's DER encoding.
    public init(der: [UInt8]) {
        let digest = SHA256Digest.bytes(of: der)
        func word(_ index: Int) -> UInt64 {
            digest[(index * 8)..<(index * 8 + 8)].reduce(0) { $0 << 8 | UInt64($1) }
        }
        (first, second, third, fourth) = (word(0), word(1), word(2), word(3))
    }

    /// The 32 digest bytes.
    public var bytes: [UInt8] {
        [first, second, third, fourth].flatMap { word in
            (0..<8).map { UInt8(truncatingIfNeeded: word >> (56 - $0 * 8)) }
        }
    }

    /// Uppercase hex pairs joined by `:`, as `openssl x509 -fingerprint -sha256` prints it and assetlinks.json
    /// lists signing certificates.
    public var description: String {
        let digest = bytes
        return String(unsafeUninitializedCapacity: digest.count * 3 - 1) { buffer in
            let digits = Array("0123456789ABCDEF".utf8)
            for (index, byte) in digest.enumerated() {
                if index > 0 { buffer[3 * index - 1] = UInt8(ascii: ":") }
                buffer[3 * index] = digits[Int(byte >> 4)]
                buffer[3 * index + 1] = digits[Int(byte & 0xF)]
            }
            return digest.count * 3 - 1
        }
    }
}
