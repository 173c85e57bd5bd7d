/// Hand-written JSON output, so key order is ours and output is stable across Foundation versions.
enum JSONText {
    /// `text` as a JSON string literal, quotes included (RFC 8259 §7).
    static func quote(_ text: String) -> String {
        var result = "\""
        result.reserveCapacity(text.utf8.count + 2)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case "\u{08}": result += "\\b"
            case "\u{0C}": result += "\\f"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F || scalar == "\u{2028}" || scalar == "\u{2029}" {
                    let hex = String(scalar.value, radix: 16, uppercase: false)
                    result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        result += "\""
        return result
    }

    /// A JSON value for an optional integer.
    static func number(_ value: Int?) -> String {
        value.map(String.init) ?? "null"
    }

    /// A JSON value for an optional string.
    static func string(_ value: String?) -> String {
        value.map(quote) ?? "null"
    }

    /// A JSON array of strings.
    static func array(_ values: [String]) -> String {
        "[" + values.map(quote).joined(separator: ",") + "]"
    }
}
