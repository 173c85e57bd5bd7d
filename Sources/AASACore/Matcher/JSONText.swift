/// Hand-written JSON output, so key order is ours and output is stable across Foundation versions.
public enum JSONText {
    /// `text` as a JSON string literal, quotes included (RFC 8259 §7), escaped as ``JSONWriter`` does.
    public static func quote(_ text: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count + 2)
        JSONWriter.writeString(text, into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A JSON value for an optional integer.
    public static func number(_ value: Int?) -> String {
        value.map(String.init) ?? "null"
    }

    /// A JSON value for an optional string.
    public static func string(_ value: String?) -> String {
        value.map(quote) ?? "null"
    }

    /// A JSON array of strings.
    public static func array(_ values: [String]) -> String {
        "[" + values.map(quote).joined(separator: ",") + "]"
    }
}
