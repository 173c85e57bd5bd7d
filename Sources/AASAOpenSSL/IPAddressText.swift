#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// IP literals as they appear in certificates (4 or 16 raw bytes) and in host names (text).
enum IPAddressText {
    /// The raw address bytes of an IPv4 or IPv6 literal (`[::1]` brackets allowed), or `nil` for anything else.
    static func bytes(_ text: String) -> [UInt8]? {
        var literal = Substring(text)
        if literal.hasPrefix("["), literal.hasSuffix("]") { literal = literal.dropFirst().dropLast() }
        var v4 = in_addr()
        if inet_pton(AF_INET, String(literal), &v4) == 1 {
            return withUnsafeBytes(of: &v4) { Array($0) }
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, String(literal), &v6) == 1 {
            return withUnsafeBytes(of: &v6) { Array($0) }
        }
        return nil
    }

    /// The canonical text of an IP literal (`::1`, `127.0.0.1`), or `nil` when `text` is not one.
    static func normalized(_ text: String) -> String? {
        bytes(text).flatMap(format)
    }

    /// Formats 4 or 16 raw bytes with `inet_ntop`.
    static func format(_ bytes: [UInt8]) -> String? {
        let family: Int32
        switch bytes.count {
        case 4: family = AF_INET
        case 16: family = AF_INET6
        default: return nil
        }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let ok = bytes.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &buffer, socklen_t(buffer.count)) != nil }
        guard ok else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
