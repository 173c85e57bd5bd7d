/// A parsed JSON value that remembers where it came from, so every later finding can name a line and
/// column. Objects keep their members in file order, duplicates included, because Apple's
/// file is order-sensitive in places and duplicate keys are a mistake worth reporting.
public struct JSONNode: Sendable, Hashable {
    /// The value.
    public var value: JSONValue
    /// Byte offset of the value's first character in the source.
    public var offset: Int

    /// Creates a node.
    public init(_ value: JSONValue, offset: Int = 0) {
        self.value = value
        self.offset = offset
    }
}

/// One `"key": value` pair of an object.
public struct JSONMember: Sendable, Hashable {
    /// The decoded key.
    public var key: String
    /// Byte offset of the key's opening quote.
    public var keyOffset: Int
    /// The value.
    public var value: JSONNode

    /// Creates a member.
    public init(key: String, keyOffset: Int = 0, value: JSONNode) {
        self.key = key
        self.keyOffset = keyOffset
        self.value = value
    }
}

/// A JSON value (RFC 8259).
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONNode])
    case object([JSONMember])

    /// The JSON type name used in messages (`"string"`, `"array"`, …).
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}
