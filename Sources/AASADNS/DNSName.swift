/// Domain names as text: absolute with a final dot, compared without regard to ASCII case.
public enum DNSName {
    /// `name` with its final dot.
    public static func absolute(_ name: String) -> String { name.hasSuffix(".") ? name : name + "." }

    /// `name` without its final dot, lowercased: the form names are shown and configured in.
    public static func relative(_ name: String) -> String {
        String((name.hasSuffix(".") ? String(name.dropLast()) : name).lowercased())
    }

    /// Whether two names are the same name.
    public static func equal(_ first: String, _ second: String) -> Bool { relative(first) == relative(second) }

    /// Whether `name` is `zone` or below it.
    public static func isWithin(_ name: String, zone: String) -> Bool {
        let name = relative(name)
        let zone = relative(zone)
        return zone.isEmpty || name == zone || name.hasSuffix("." + zone)
    }

    /// Whether `name` can be written in a record: 1 to 253 characters of labels of 1 to 63 letters, digits, `-`
    /// and `_` (`_acme-challenge`), and `*` as a whole first label.
    public static func isValid(_ name: String) -> Bool {
        let name = relative(name)
        guard !name.isEmpty, name.utf8.count <= 253 else { return false }
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        return labels.enumerated().allSatisfy { index, label in
            if label == "*" { return index == 0 }
            return !label.isEmpty && label.utf8.count <= 63
                && label.utf8.allSatisfy { byte in
                    (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39) || byte == 0x2D || byte == 0x5F
                }
        }
    }

    /// `value` as one quoted TXT string: `"` and `\` escaped, and bytes outside printable ASCII as `\DDD`.
    static func quoted(_ value: String) -> String {
        var text = "\""
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): text += "\\" + String(UnicodeScalar(byte))
            case 0x20..<0x7F: text.unicodeScalars.append(UnicodeScalar(byte))
            default:
                let digits = String(byte)
                text += "\\" + String(repeating: "0", count: 3 - digits.count) + digits
            }
        }
        return text + "\""
    }

    /// One TXT string as ldns writes it (quoted, with `\"`, `\\` and `\DDD`), unquoted.
    static func unquoted(_ text: String) -> String {
        var bytes = Array(text.utf8)
        if bytes.count >= 2, bytes.first == UInt8(ascii: "\""), bytes.last == UInt8(ascii: "\"") {
            bytes = Array(bytes.dropFirst().dropLast())
        }
        var result: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\\"), index + 1 < bytes.count {
                let next = bytes[(index + 1)...].prefix(3)
                if next.count == 3, next.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                    let value = UInt8(String(decoding: next, as: UTF8.self))
                {
                    result.append(value)
                    index += 4
                } else {
                    result.append(bytes[index + 1])
                    index += 2
                }
            } else {
                result.append(byte)
                index += 1
            }
        }
        return String(decoding: result, as: UTF8.self)
    }
}
