/// An IPv4 or IPv6 address, parsed in Swift from its text form (the core imports no C).
///
/// Only the standard forms are accepted: IPv4 as four decimal parts (`192.0.2.7`), IPv6 as RFC 4291 §2.2
/// text (`2001:db8::7`, `::ffff:192.0.2.7`), without a zone (`%eth0`). An IPv4-mapped IPv6 address
/// (`::ffff:192.0.2.7`, what a dual-stack socket reports for an IPv4 client) is the IPv4 address.
public struct IPAddress: Hashable, Sendable, CustomStringConvertible {
    /// 4 bytes for IPv4, 16 for IPv6, in network order.
    public let bytes: [UInt8]

    /// Whether this is an IPv4 address.
    public var isIPv4: Bool { bytes.count == 4 }

    /// Parses `text`; brackets around an IPv6 address (`[::1]`) are allowed. `nil` for anything else.
    public init?(_ text: some StringProtocol) {
        var text = Substring(text)
        if text.hasPrefix("["), text.hasSuffix("]") { text = text.dropFirst().dropLast() }
        if let v4 = Self.parseIPv4(text.utf8) {
            bytes = v4
        } else if let v6 = Self.parseIPv6(text.utf8) {
            bytes = Self.isIPv4Mapped(v6) ? Array(v6[12...]) : v6
        } else {
            return nil
        }
    }

    /// The address from its bytes (4 or 16; an IPv4-mapped IPv6 address becomes IPv4).
    public init?(bytes: [UInt8]) {
        switch bytes.count {
        case 4: self.bytes = bytes
        case 16: self.bytes = Self.isIPv4Mapped(bytes) ? Array(bytes[12...]) : bytes
        default: return nil
        }
    }

    /// `192.0.2.7` or the RFC 5952 form of an IPv6 address (`2001:db8::7`).
    public var description: String {
        if isIPv4 { return bytes.map(String.init).joined(separator: ".") }
        let groups = (0..<8).map { Int(bytes[$0 * 2]) << 8 | Int(bytes[$0 * 2 + 1]) }
        // The longest run of two or more zero groups becomes "::" (the first such run on a tie).
        var best = (start: -1, length: 0)
        var index = 0
        while index < 8 {
            guard groups[index] == 0 else {
                index += 1
                continue
            }
            var end = index
            while end < 8 && groups[end] == 0 { end += 1 }
            if end - index > best.length && end - index >= 2 { best = (index, end - index) }
            index = end
        }
        let hex = groups.map { String($0, radix: 16) }
        guard best.start >= 0 else { return hex.joined(separator: ":") }
        return hex[..<best.start].joined(separator: ":") + "::"
            + hex[(best.start + best.length)...].joined(separator: ":")
    }

    private static func isIPv4Mapped(_ bytes: [UInt8]) -> Bool {
        bytes.count == 16 && bytes[..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF
    }

    private static func parseIPv4(_ text: Substring.UTF8View) -> [UInt8]? {
        var result: [UInt8] = []
        var value = 0
        var digits = 0
        for byte in text {
            if byte == UInt8(ascii: ".") {
                guard digits > 0, result.count < 3 else { return nil }
                result.append(UInt8(value))
                (value, digits) = (0, 0)
            } else if byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") {
                // Leading zeros are refused: some parsers read them as octal.
                if digits == 1 && value == 0 { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
                digits += 1
                guard value <= 255 else { return nil }
            } else {
                return nil
            }
        }
        guard digits > 0, result.count == 3 else { return nil }
        result.append(UInt8(value))
        return result
    }

    private static func parseIPv6(_ text: Substring.UTF8View) -> [UInt8]? {
        let string = Substring(text)
        guard string.utf8.count >= 2, string.utf8.count <= 45 else { return nil }
        // At most one "::", standing for one or more zero groups; on each side, groups separated by ":".
        let halves = string.split(separator: "::", maxSplits: 2, omittingEmptySubsequences: false)
        guard halves.count <= 2 else { return nil }
        func groups(_ half: Substring, last: Bool) -> [UInt8]? {
            guard !half.isEmpty else { return [] }
            let parts = half.split(separator: ":", omittingEmptySubsequences: false)
            var bytes: [UInt8] = []
            for (index, part) in parts.enumerated() {
                if last, index == parts.count - 1, part.contains(".") {
                    guard let v4 = parseIPv4(part.utf8) else { return nil }
                    bytes += v4
                } else {
                    guard (1...4).contains(part.utf8.count), part.utf8.allSatisfy(\.isHexDigit),
                        let value = UInt16(part, radix: 16)
                    else { return nil }
                    bytes += [UInt8(value >> 8), UInt8(value & 0xFF)]
                }
            }
            return bytes
        }
        if halves.count == 1 {
            guard let all = groups(halves[0], last: true), all.count == 16 else { return nil }
            return all
        }
        guard let head = groups(halves[0], last: false), let tail = groups(halves[1], last: true),
            head.count + tail.count <= 14
        else { return nil }
        return head + [UInt8](repeating: 0, count: 16 - head.count - tail.count) + tail
    }
}

extension UInt8 {
    fileprivate var isHexDigit: Bool {
        (self >= UInt8(ascii: "0") && self <= UInt8(ascii: "9"))
            || (self >= UInt8(ascii: "a") && self <= UInt8(ascii: "f"))
            || (self >= UInt8(ascii: "A") && self <= UInt8(ascii: "F"))
    }
}
