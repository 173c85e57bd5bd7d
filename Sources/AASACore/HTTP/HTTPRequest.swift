/// Request methods the router distinguishes; everything else is `other`.
///
/// `post`, `put` and `delete` exist for the admin listener (`POST /acme/retry`, the tenant API under `/api/v1/`);
/// the public routes answer only ``isRead`` methods and refuse every other one (405), those included.
public enum RequestMethod: Sendable, Hashable {
    case get, head, post, put, delete, other

    /// Whether the method only reads (`GET` or `HEAD`): the only methods the public routes answer.
    public var isRead: Bool { self == .get || self == .head }

    /// The method's token (`OTHER` for one the server does not answer).
    public var name: String {
        switch self {
        case .get: "GET"
        case .head: "HEAD"
        case .post: "POST"
        case .put: "PUT"
        case .delete: "DELETE"
        case .other: "OTHER"
        }
    }
}

/// What a router may ask of a request while it is being handled.
///
/// A transport implements this over its own connection state (libmicrohttpd in `AASAMicroHTTPD`,
/// plain values in tests). Byte access is borrowed for the duration of the closure so the hot
/// path does not have to copy the request line or headers into Swift strings.
public protocol HTTPRequest {
    /// The request method.
    var method: RequestMethod { get }
    /// Calls `body` with the raw request path as sent: no query string, not percent-decoded.
    func withPath<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R
    /// Calls `body` with the raw value of the header named `name` (case-insensitive), or `nil`.
    func withHeader<R>(_ name: StaticString, _ body: (UnsafeRawBufferPointer?) -> R) -> R
    /// The raw query string after `?` (not decoded), or `nil` when the request had none.
    var rawQuery: String? { get }
    /// The server name the client sent in TLS SNI, normalised like a Host header (``HostName``), or `nil`
    /// on plain HTTP, without SNI, or when the client sent an IP literal there (RFC 6066 §3 forbids them).
    var tlsServerName: String? { get }
    /// The client's address as text (`192.0.2.1` or `2001:db8::1`), or `""` when unknown.
    var remoteAddress: String { get }
    /// The method token as sent (`GET`, `PROPFIND`), for logs; defaults to the classified method.
    var methodName: String { get }
    /// The request body, empty when there is none. A transport reads one only when the route table allowed it
    /// (``RouteTable/maximumBodyBytes(for:)``), and never more than that.
    var body: [UInt8] { get }
}

extension HTTPRequest {
    /// The method as text for logs: the real token where the transport knows it.
    public var methodName: String { method.name }

    /// No body: what every request has unless its transport read one.
    public var body: [UInt8] { [] }
}

/// What a router decided for one request.
public enum RouteDecision: Sendable {
    /// Send a response prepared at load time (the fast path: no per-request work).
    case prepared(PreparedResponse)
    /// Send a response built for this request.
    case dynamic(Response)
    /// Send the response `work` builds, built off the transport's threads: for an answer that may wait (a database)
    /// or take much CPU, so that it never holds a thread that answers other requests, probes among them.
    case deferred(DeferredWork)

    /// The response, building a deferred one on the calling thread (for callers without threads of their own).
    public var response: Response {
        switch self {
        case .prepared(let prepared): prepared.response
        case .dynamic(let response): response
        case .deferred(let work): work.build()
        }
    }
}

/// A response to build later, on another thread: what it needs of its request was copied into it, since the request
/// is only borrowed while it is routed.
public struct DeferredWork: Sendable {
    /// Builds the response.
    public let build: @Sendable () -> Response

    /// Work that builds its response with `build`.
    public init(_ build: @escaping @Sendable () -> Response) {
        self.build = build
    }
}

/// Maps requests to responses. Implementations are immutable snapshots: a reload builds a new one.
public protocol RouteTable: Sendable {
    /// The responses this table prepared that no table before it held: the transport checks them when the table is
    /// swapped in, so a broken one is found then, and builds each one's native form when it is first sent (those
    /// every domain sends alike at once). A table made from another one lists only its new responses; a response it
    /// returns that is not listed is built for the wire on first use.
    var preparedResponses: [PreparedResponse] { get }
    /// Decides the response for `request`. Called concurrently from transport threads.
    func route(_ request: some HTTPRequest) -> RouteDecision
    /// The most bytes of request body a request with this method to this raw path may send; 0 (the default): none,
    /// and a request that announces a body is refused with 413 before any of it is read.
    func maximumBodyBytes(method: RequestMethod, path: String) -> Int
    /// The most bytes of body `request` may send, asked once its head is complete and before any of its body is
    /// read (so a table can also weigh its headers, such as who is calling); defaults to
    /// ``maximumBodyBytes(method:path:)``. ``HTTPRequest/body`` is empty while this is asked.
    func maximumBodyBytes(for request: some HTTPRequest) -> Int
    /// The answer to a request refused on its head alone (a missing or wrong token, a cross-site caller, a Host the
    /// table does not answer), asked before its body is considered, so that such a caller learns why it is refused
    /// rather than that its body is too large; `nil` (the default): nothing refuses it before routing.
    func refusal(for request: some HTTPRequest) -> PreparedResponse?
}

extension RouteTable {
    /// No request body anywhere: every table but the admin listener's.
    public func maximumBodyBytes(method: RequestMethod, path: String) -> Int { 0 }

    /// No refusal before routing.
    public func refusal(for request: some HTTPRequest) -> PreparedResponse? { nil }

    /// The cap of the request's method and path.
    public func maximumBodyBytes(for request: some HTTPRequest) -> Int {
        maximumBodyBytes(method: request.method, path: request.withPath { String(decoding: $0, as: UTF8.self) })
    }
}

/// Watches every answered request, for metrics, access logs and the fetch log.
///
/// Called on transport threads right after the response is queued, so it must be quick and
/// thread-safe; it must not keep the request beyond the call.
public protocol RequestObserver: Sendable {
    /// `request` was answered with `status` and a body of `bodyBytes` bytes (0 for `HEAD`); `prepared` is the
    /// load-time response that was sent, or `nil` for a response built for this request.
    func requestAnswered(_ request: some HTTPRequest, status: Int, bodyBytes: Int, prepared: PreparedResponse?)
}
