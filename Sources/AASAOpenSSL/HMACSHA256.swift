internal import COpenSSL

/// HMAC with SHA-256 (RFC 2104, RFC 4231): the MAC of an ACME external account binding (RFC 8555 §7.3.4, `HS256`).
public enum HMACSHA256 {
    /// The 32-byte authentication code of `message` under `key`.
    public static func authenticationCode(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var code = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        // One shot: OpenSSL hashes a key longer than the block size and pads a shorter one (RFC 2104 §2). An empty
        // key needs a valid pointer, not nil, which OpenSSL reads as "no key".
        let keyBytes = key.isEmpty ? [0] : key
        let messageBytes = message.isEmpty ? [0] : message
        let result = keyBytes.withUnsafeBufferPointer { keyBuffer in
            messageBytes.withUnsafeBufferPointer { messageBuffer in
                code.withUnsafeMutableBufferPointer { output in
                    HMAC(
                        EVP_sha256(), keyBuffer.baseAddress, Int32(key.count), messageBuffer.baseAddress,
                        message.count, output.baseAddress, &length)
                }
            }
        }
        precondition(result != nil && length == 32, "OpenSSL's HMAC-SHA256 failed")
        return code
    }
}
