public import AASACore

/// One request to the tenant API (`/api/v1/`) as the admin listener hands it over, once it has checked the Host,
/// the cross-site headers and the bearer token (``AdminRoutes/Live/api``).
///
/// The body is whole and within the route's cap (``AdminRoutes/maximumBodyBytes(method:path:)``): the listener
/// refused a larger one with 413 before reading it. Whether ``caller``'s scope allows the method is the handler's
/// to decide.
public struct APIRequest: Sendable {
    /// The request method.
    public var method: RequestMethod
    /// The path as sent, starting with `/api/v1/`: no query string, not percent-decoded.
    public var path: String
    /// The raw query string after `?` (not decoded), or `nil` when there was none.
    public var rawQuery: String?
    /// The `If-Match` header, or `nil`.
    public var ifMatch: String?
    /// The `If-None-Match` header, or `nil`.
    public var ifNoneMatch: String?
    /// The `Idempotency-Key` header, or `nil`.
    public var idempotencyKey: String?
    /// The `Content-Type` header, or `nil`.
    public var contentType: String?
    /// The request body, empty when there was none.
    public var body: [UInt8]
    /// The token that made the request.
    public var caller: AdminCaller

    /// Creates a request (the admin listener makes them; tests of the handlers too).
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
