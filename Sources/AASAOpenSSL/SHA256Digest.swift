internal import COpenSSL

/// SHA-256 of bytes (FIPS 180-4).
public enum SHA256Digest {
    /// OpenSSL's SHA-256, fetched from its provider once. The one-shot `SHA256()` fetches it again at every call,
    /// which costs more than hashing a generated file of a few hundred bytes; a start hashes two for every domain.
    private struct Algorithm: @unchecked Sendable {
        let md: OpaquePointer?
    }
    private static let algorithm = Algorithm(md: EVP_MD_fetch(nil, "SHA256", nil))

    /// The 32-byte digest of `bytes`.
    public static func bytes(of bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        bytes.withUnsafeBufferPointer { input in
            digest.withUnsafeMutableBufferPointer { output in
                if let md = algorithm.md {
                    var size: UInt32 = 0
                    _ = EVP_Digest(input.baseAddress, input.count, output.baseAddress, &size, md, nil)
                } else {
                    _ = COpenSSL.SHA256(input.baseAddress, input.count, output.baseAddress)
                }
            }
        }
        return digest
    }
}
