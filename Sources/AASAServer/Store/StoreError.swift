/// A store operation that cannot go on, in words for the operator (the server, never a password, and the fix).
public struct StoreError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public var description: String

    /// An error saying `description`.
    public init(_ description: String) { self.description = description }
}
