/// Reading parsed JSON without a ``JSONReader`` (which reports what it does not expect): a member by name, scalar
/// values and elements, for documents read leniently (a device's reading, an ACME server's or a CDN's answers).
extension JSONValue {
    /// The value of member `key` of an object; `nil` for a missing member or a value that is not an object.
    public subscript(member key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key.isKey(key) }?.value.value
    }

    /// The string, or `nil` for any other type.
    public var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The elements of an array, or `nil` for any other type.
    public var arrayValue: [JSONValue]? {
        if case .array(let nodes) = self { return nodes.map(\.value) }
        return nil
    }

    /// `bytes` parsed as JSON, or `nil` when they are not JSON.
    public static func parse(_ bytes: [UInt8]) -> JSONValue? {
        try? JSONParser().parse(SourceText(name: "", bytes: bytes)).root.value
    }
}
