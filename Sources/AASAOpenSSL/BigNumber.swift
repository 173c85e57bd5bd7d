internal import COpenSSL

/// Fixed-width big-endian bytes of OpenSSL `BIGNUM`s, as JOSE spells EC coordinates and signature halves.
enum BigNumber {
    /// `number` (a borrowed `BIGNUM*`) as exactly `length` big-endian bytes, left-padded with zeros; throws when it
    /// needs more.
    static func bytes(_ number: OpaquePointer, length: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: length)
        guard BN_bn2binpad(number, &bytes, Int32(length)) == Int32(length) else {
            throw OpenSSLError(.encoding, "a number of \(BN_num_bits(number)) bits does not fit in \(length) bytes")
        }
        return bytes
    }
}
