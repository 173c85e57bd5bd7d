/// Who called the admin listener: the token of `--admin-token-file` that the request presented.
public struct AdminCaller: Sendable, Hashable, CustomStringConvertible {
    /// The token's name, recorded as the actor of a write and logged with it.
    public var name: String
    /// What the token may do.
    public var scope: AdminToken.Scope

    /// A caller holding the token named `name` with `scope`.
    public init(name: String, scope: AdminToken.Scope) {
        self.name = name
        self.scope = scope
    }

    /// The name and scope.
    public var description: String { "\(name) (\(scope.rawValue))" }
}
