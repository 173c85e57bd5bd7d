/// An object's members with known keys, as ``JSONReader/object(_:path:known:what:misplaced:)`` returns them, read
/// by key.
///
/// A list searched in order, not a dictionary: the objects of a site.json hold a handful of keys each, and hashing
/// every key to build a dictionary, then again to read it, cost more than the scans (every object of every domain,
/// at each load). A key given twice reads as its first member, as the parser's `duplicate-key` finding says.
public struct JSONObject: Sendable {
    /// The members, in document order.
    public var members: [JSONMember]

    /// An object of `members`.
    public init(_ members: [JSONMember] = []) {
        self.members = members
    }

    /// The first member named `key`.
    public subscript(key: String) -> JSONMember? {
        members.first { $0.key.isKey(key) }
    }

    /// Whether the object has no members.
    public var isEmpty: Bool { members.isEmpty }

    /// The number of members, a repeated key counted each time.
    public var count: Int { members.count }
}
