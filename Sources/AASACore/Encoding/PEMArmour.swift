#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Recognises PEM private-key armour in arbitrary bytes, so a key that reaches a domain's pages or template
/// (copied in, or linked from another folder) is never served, whatever its path.
public enum PEMArmour {
    private static let begin = Array("-----BEGIN ".utf8)
    private static let privateKeyLabelEnd = Array("PRIVATE KEY-----".utf8)
    /// The longest label looked at (`ENCRYPTED PRIVATE KEY`, `OPENSSH PRIVATE KEY`, `RSA PRIVATE KEY`… are far shorter).
    private static let longestLabel = 64

    /// Whether `bytes` hold a `-----BEGIN … PRIVATE KEY-----` line (RFC 7468 §10, §11; OpenSSL's traditional and
    /// OpenSSH's labels end the same way).
    public static func containsPrivateKey(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { return false }
            var offset = 0
            // memchr finds each '-' at memory speed; pages are up to 16 MiB and almost never hold armour.
            while offset + begin.count <= buffer.count,
                let found = memchr(base + offset, 0x2D, buffer.count - offset - begin.count + 1)
            {
                let at = base.distance(to: UnsafeRawPointer(found))
                offset = at + 1
                guard buffer[at..<at + begin.count].elementsEqual(begin) else { continue }
                let start = at + begin.count
                let window = buffer[start..<min(buffer.count, start + longestLabel + privateKeyLabelEnd.count)]
                // The label ends at the first "-----"; a private key's ends with "PRIVATE KEY-----".
                if let dashes = window.firstRange(of: [0x2D, 0x2D, 0x2D, 0x2D, 0x2D]),
                    buffer[start..<dashes.upperBound].suffix(privateKeyLabelEnd.count).elementsEqual(privateKeyLabelEnd)
                {
                    return true
                }
            }
            return false
        }
    }
}
