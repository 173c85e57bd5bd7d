/// Where a value writes itself as JSON, one token at a time: compact bytes (``CompactJSONOutput``), or a tree
/// (``JSONTreeOutput``) for whoever reads or re-formats it. A type written through it describes its JSON once for
/// both, and what a server serves is written without a tree between its model and its bytes.
///
/// Tokens come in JSON's order: a ``key(_:)`` before each member's value, and every ``beginObject()`` or
/// ``beginArray()`` closed by its end.
public protocol JSONOutput {
    /// Opens an object (`{`).
    mutating func beginObject()
    /// Closes the innermost open object (`}`).
    mutating func endObject()
    /// Opens an array (`[`).
    mutating func beginArray()
    /// Closes the innermost open array (`]`).
    mutating func endArray()
    /// The key of the next member of the innermost open object.
    mutating func key(_ key: String)
    /// A string value.
    mutating func string(_ value: String)
    /// A boolean value.
    mutating func bool(_ value: Bool)
}

extension JSONOutput {
    /// A member whose value is `value`, left out when it is `nil`.
    public mutating func member(_ key: String, _ value: String?) {
        guard let value else { return }
        self.key(key)
        string(value)
    }

    /// A member whose value is `value`, left out when it is `nil`.
    public mutating func member(_ key: String, _ value: Bool?) {
        guard let value else { return }
        self.key(key)
        bool(value)
    }

    /// A member whose value is the array of `values`, left out when it is `nil`.
    public mutating func member(_ key: String, strings values: [String]?) {
        guard let values else { return }
        self.key(key)
        strings(values)
    }

    /// An array of strings.
    public mutating func strings(_ values: [String]) {
        beginArray()
        for value in values { string(value) }
        endArray()
    }
}
