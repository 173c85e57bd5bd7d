internal import COpenSSL

/// SHA-256 of bytes (FIPS 180-4).
public enum SHA256Digest {
    /// The 32-byte digest of `bytes`.
    public static func bytes(of bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        bytes.withUnsafeBufferPointer { input in
            digest.withUnsafeMutableBufferPointer { output in
                _ = COpenSSL.SHA256(input.baseAddress, input.count, output.baseAddress)
            }
        }
        return digest
    }
}
