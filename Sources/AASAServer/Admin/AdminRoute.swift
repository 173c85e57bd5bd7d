import AASACore

/// One route of the admin listener: its path, the methods it answers, who may call it and what answers it.
///
/// ``table`` declares every route once; ``AdminAccess`` (token, cross-site refusal) and ``AdminRoutes`` (methods,
/// dispatch) read it (``declared(_:)``), so a path not in it is 404 and a path in it needs the token unless
/// declared ``Access/open``. `access` has no default, so a route cannot be declared without saying who may call it.
/// One route, the tenant API, is a prefix: it answers every path under `/api/v1/`.
struct AdminRoute: Sendable {
    /// Who may call a route when a token is set (``AdminAccess/token``); without a token, anyone the listener
    /// answers.
    enum Access: Sendable, Equatable {
        /// Anyone the listener answers: only the probes and the dashboard page, which holds no data.
        case open
        /// Only callers that present `Authorization: Bearer <token>`.
        case token
    }

    /// What answers a route in ``AdminRoutes``.
    enum Handler: Sendable, Equatable {
        case dashboard, health, readiness, status, match, metrics, fetches, traffic, acmeRetry, api
    }

    /// The path, exactly as requested (no query string, not percent-decoded).
    let path: String
    /// The methods answered; any other gets 404.
    let methods: Set<RequestMethod>
    /// Who may call it when a token is set.
    let access: Access
    /// Whether a browser's cross-site request is answered (the probes) rather than refused with 403.
    let answersCrossSite: Bool
    /// What answers it.
    let handler: Handler
    /// Whether ``path`` is a prefix (ending in `/`) and the route answers every path under it.
    let isPrefix: Bool

    /// Declares a route; `access` is required: a new route says who may call it.
    init(
        _ path: String, methods: Set<RequestMethod> = [.get, .head], access: Access, answersCrossSite: Bool = false,
        isPrefix: Bool = false, handler: Handler
    ) {
        self.path = path
        self.methods = methods
        self.access = access
        self.answersCrossSite = answersCrossSite
        self.isPrefix = isPrefix
        self.handler = handler
    }

    /// Every admin route. docs/operations.md's admin table lists the same paths (`AdminRouteTableTests`).
    static let table: [AdminRoute] = [
        AdminRoute("/", access: .open, handler: .dashboard),
        AdminRoute("/healthz", access: .open, answersCrossSite: true, handler: .health),
        AdminRoute("/readyz", access: .open, answersCrossSite: true, handler: .readiness),
        AdminRoute("/metrics", access: .token, handler: .metrics),
        AdminRoute("/fetches", access: .token, handler: .fetches),
        AdminRoute("/traffic", access: .token, handler: .traffic),
        AdminRoute("/status", access: .token, handler: .status),
        AdminRoute("/match", access: .token, handler: .match),
        // An action: POST only, so no link, image or prefetch can trigger it, and refused cross-site like the rest.
        AdminRoute("/acme/retry", methods: [.post], access: .token, handler: .acmeRetry),
        // The tenant API: it always needs a token (404 without one, see AdminRoutes), and each token's scope decides
        // which of these methods its holder may use. Any other method reaches it too, and gets its 405 with `Allow`.
        AdminRoute(
            "/api/v1/", methods: [.get, .head, .post, .put, .delete, .other], access: .token, isPrefix: true,
            handler: .api),
    ]

    /// ``table`` by path.
    static let byPath: [String: AdminRoute] = Dictionary(uniqueKeysWithValues: table.map { ($0.path, $0) })

    /// The prefix routes of ``table``.
    static let prefixes: [AdminRoute] = table.filter(\.isPrefix)

    /// The route that answers `path` (raw, without the query): the route declared for exactly that path, or the
    /// prefix route it lies under (the prefix itself included), or `nil`.
    static func declared(_ path: String) -> AdminRoute? {
        if let route = byPath[path] { return route }
        return prefixes.first { path.hasPrefix($0.path) }
    }
}
