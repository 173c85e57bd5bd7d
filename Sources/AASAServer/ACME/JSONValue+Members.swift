import AASACore

/// Reading the JSON objects an ACME server answers with (RFC 8555 §7.1): a member by name, and scalar values.
extension JSONValue {
    /// The value of member `key` of an object; `nil` for a missing member or a value that is not an object.
    subscript(member key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value.value
    }

    /// The string, or `nil` for any other type.
    var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The elements of an array, or `nil` for any other type.
    var arrayValue: [JSONValue]? {
        if case .array(let nodes) = self { return nodes.map(\.value) }
        return nil
    }

    /// `bytes` parsed as JSON, or `nil` when they are not JSON.
    static func parse(_ bytes: [UInt8]) -> JSONValue? {
        try? JSONParser().parse(SourceText(name: "", bytes: bytes)).root.value
    }
}
