/// A statement parameter: text (sent as text, the server infers or the SQL casts its type) or bytes (sent in binary as
/// `bytea`). `nil` in a parameter list is SQL `NULL`.
public enum PostgresValue: Sendable, Hashable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral {
    /// UTF-8 text; it may not contain a NUL byte (libpq passes text as C strings).
    case text(String)
    /// Raw bytes for a `bytea` parameter, any value from 0x00 to 0xFF.
    case bytes([UInt8])

    /// The largest parameter PostgreSQL accepts in one field: 1 GiB less one byte.
    public static let maximumByteCount = (1 << 30) - 1

    /// A text parameter.
    public init(stringLiteral value: String) { self = .text(value) }

    /// An integer, sent as its decimal text.
    public init(integerLiteral value: Int64) { self = .text(String(value)) }

    /// An integer, sent as its decimal text.
    public static func integer(_ value: some BinaryInteger) -> PostgresValue { .text(String(value)) }

    /// `elements` as a PostgreSQL array literal of text (`{"a","b"}`), each element quoted and escaped: for a
    /// `$n::text[]` parameter's value, never SQL.
    public static func arrayLiteral(_ elements: [String]) -> String {
        var literal = "{"
        for (index, element) in elements.enumerated() {
            literal += index == 0 ? "\"" : ",\""
            for scalar in element.unicodeScalars {
                if scalar == "\\" || scalar == "\"" { literal.unicodeScalars.append("\\") }
                literal.unicodeScalars.append(scalar)
            }
            literal += "\""
        }
        return literal + "}"
    }
}
