public import AASACore

/// The listener side's interface to the tenant API (helper C's branch), defined here until it is merged.

/// A token holder of the admin listener: its name (each revision's `actor`) and what it may do.
public struct AdminCaller: Sendable {
    /// The token's name (`NAME` of `--admin-token-file`; `admin` for a single bare token).
    public var name: String
    /// What the token may do.
    public var scope: AdminToken.Scope

    /// A caller.
    public init(name: String, scope: AdminToken.Scope) {
        self.name = name
        self.scope = scope
    }
}

/// One token of `--admin-token-file`.
public enum AdminToken {
    /// What a token may do: `read` reads, `write` reads and writes.
    public enum Scope: String, Sendable {
        case read, write
    }
}

/// One request to `/api/v1/`, its body read whole (within its cap) and its caller authenticated.
public struct APIRequest: Sendable {
    public var method: RequestMethod
    /// The path as requested: no query, not percent-decoded.
    public var path: String
    public var rawQuery: String?
    public var ifMatch: String?
    public var ifNoneMatch: String?
    public var idempotencyKey: String?
    public var contentType: String?
    public var body: [UInt8]
    public var caller: AdminCaller

    /// A request.
    public init(
        method: RequestMethod, path: String, rawQuery: String? = nil, ifMatch: String? = nil,
        ifNoneMatch: String? = nil, idempotencyKey: String? = nil, contentType: String? = nil, body: [UInt8] = [],
        caller: AdminCaller
    ) {
        self.method = method
        self.path = path
        self.rawQuery = rawQuery
        self.ifMatch = ifMatch
        self.ifNoneMatch = ifNoneMatch
        self.idempotencyKey = idempotencyKey
        self.contentType = contentType
        self.body = body
        self.caller = caller
    }
}
