/// Host header normalisation: the one place that turns what a client sent into a domain key.
public enum HostName {
    /// The domain named by a `Host` header value: port stripped, ASCII lower-cased, one trailing dot
    /// ignored. `nil` for an empty or malformed value (spaces, control bytes, an unclosed `[`).
    public static func normalized(_ raw: UnsafeRawBufferPointer) -> String? {
        withNormalized(raw) { $0.map { String(decoding: $0, as: UTF8.self) } }
    }

    /// Calls `body` with the bytes `normalized(_:)` would return (`nil` where it returns
    /// `nil`), normalised in a buffer on the stack: the router looks a host up without making a string.
    public static func withNormalized<Result>(
        _ raw: UnsafeRawBufferPointer?, _ body: (UnsafeRawBufferPointer?) -> Result
    ) -> Result {
        guard let raw, raw.count > 0 else { return body(nil) }
        var end = raw.count
        if raw[0] == UInt8(ascii: "[") {
            // IPv6 literal: [::1]:8443 → "[::1]"
            guard let close = raw.firstIndex(of: UInt8(ascii: "]")) else { return body(nil) }
            end = close + 1
        } else if let colon = raw.firstIndex(of: UInt8(ascii: ":")) {
            end = colon
        }
        if end > 0 && raw[end - 1] == UInt8(ascii: ".") { end -= 1 }
        guard end > 0 else { return body(nil) }
        return withUnsafeTemporaryAllocation(byteCount: end, alignment: 1) { buffer in
            for index in 0..<end {
                var byte = raw[index]
                if byte <= 0x20 || byte == 0x7F || byte == UInt8(ascii: "/") { return body(nil) }
                if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") { byte += 0x20 }
                buffer[index] = byte
            }
            return body(UnsafeRawBufferPointer(buffer))
        }
    }

    /// A TLS SNI value as a domain key: normalised like a Host header, and `nil` for an IP literal, which
    /// RFC 6066 §3 does not allow there (some clients, wrk among them, send one anyway) — such a connection
    /// is treated as one without SNI.
    public static func serverName(_ sni: String) -> String? {
        guard let name = normalized(sni) else { return nil }
        let isIPv4 = name.utf8.allSatisfy { $0 == UInt8(ascii: ".") || ($0 >= 48 && $0 <= 57) }
        return isIPv4 || name.contains(":") || name.hasPrefix("[") ? nil : name
    }

    /// `normalized` for a Swift string.
    public static func normalized(_ text: String) -> String? {
        var bytes = Array(text.utf8)
        return bytes.withUnsafeMutableBytes { normalized(UnsafeRawBufferPointer($0)) }
    }
}
