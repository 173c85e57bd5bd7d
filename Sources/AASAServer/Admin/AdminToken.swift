import AASACore

/// One bearer token of `--admin-token-file`: who holds it (`name`, recorded as the actor of the API's writes) and
/// what it may do (`scope`).
///
/// Only the token's SHA-256 is kept, which is what ``AdminAccess`` compares; the token itself is never printed,
/// logged or dumped (``description`` names the token, not its bytes).
public struct AdminToken: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// What a token may do on the tenant API (`/api/v1/`); every other token route accepts either.
    public enum Scope: String, Sendable, Hashable, CaseIterable {
        /// Reads only: `GET` and `HEAD`.
        case read
        /// Reads and writes.
        case write
    }

    /// The name the token's holder is known by (`ci-deploy`, `admin` for a bare token).
    public let name: String
    /// What the token may do.
    public let scope: Scope
    /// SHA-256 of the token's bytes.
    let digest: [UInt8]

    /// A token named `name` with `scope`; only the SHA-256 of `bytes` is kept.
    public init(name: String, scope: Scope, bytes: [UInt8]) {
        self.name = name
        self.scope = scope
        self.digest = SHA256.digest(bytes)
    }

    /// The name and scope, never the token.
    public var description: String { "\(name) (\(scope.rawValue))" }

    /// As ``description``.
    public var debugDescription: String { description }

    /// The name and scope, so that `dump` and debuggers never show the digest either.
    public var customMirror: Mirror { Mirror(self, children: ["name": name, "scope": scope.rawValue]) }
}
