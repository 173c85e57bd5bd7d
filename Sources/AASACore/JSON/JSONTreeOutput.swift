/// A ``JSONOutput`` building a ``JSONValue`` tree, for what reads, compares or re-formats a written value.
public struct JSONTreeOutput: JSONOutput {
    /// A container still open, and the key its next member takes.
    private enum Open {
        case object([JSONMember], key: String)
        case array([JSONNode])
    }

    private var open: [Open] = []
    /// The value written, once every container is closed (`null` before anything is written).
    public private(set) var value: JSONValue = .null

    /// An empty output.
    public init() {}

    public mutating func beginObject() { open.append(.object([], key: "")) }

    public mutating func endObject() {
        guard case .object(let members, _) = open.popLast() else {
            preconditionFailure("endObject() without an open object")
        }
        add(.object(members))
    }

    public mutating func beginArray() { open.append(.array([])) }

    public mutating func endArray() {
        guard case .array(let elements) = open.popLast() else {
            preconditionFailure("endArray() without an open array")
        }
        add(.array(elements))
    }

    public mutating func key(_ key: String) {
        guard case .object(let members, _) = open.popLast() else { preconditionFailure("key(_:) outside an object") }
        open.append(.object(members, key: key))
    }

    public mutating func string(_ value: String) { add(.string(value)) }

    public mutating func bool(_ value: Bool) { add(.bool(value)) }

    private mutating func add(_ added: JSONValue) {
        switch open.popLast() {
        case nil:
            value = added
        case .object(var members, let key):
            members.append(JSONMember(key: key, value: JSONNode(added)))
            open.append(.object(members, key: key))
        case .array(var elements):
            elements.append(JSONNode(added))
            open.append(.array(elements))
        }
    }
}
