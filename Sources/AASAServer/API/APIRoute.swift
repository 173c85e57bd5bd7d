import AASACore

/// One route of the tenant API (`/api/v1/`): its path, the methods it answers, the scope each method needs and the
/// most bytes of body each takes.
///
/// ``table`` declares every route once, as ``AdminRoute/table`` does the admin listener's. ``TenantAPI`` matches a
/// request against it (``match(_:)``: 400 for a bad name, revision or page path, 404 for no route), answers 405 for a
/// method the route does not declare and 403 for a method that needs the write scope with a read token; the admin
/// listener reads the body caps from it before the body is read (``maximumBodyBytes(method:path:)``) and the methods
/// for its 405 before the body (``methods(_:)``). docs/api.md and the OpenAPI document list the same routes
/// (`APIRouteTableTests`).
struct APIRoute: Sendable {
    /// One segment of a route's path.
    enum Segment: Sendable, Equatable {
        /// Exactly this text.
        case literal(String)
        /// `{name}`: a domain name (``APIDomainName``).
        case name
        /// `{revision}`: a revision, as an ETag holds it.
        case revision
        /// `{path}`: a page's path, every segment left (``APIPagePath``).
        case page
    }

    /// The most bytes of body a method takes.
    enum Body: Sendable, Equatable {
        /// None: a body is refused with 413.
        case none
        /// A site.json (``SiteConfigLoader/maximumConfigBytes``).
        case siteJSON
        /// A page (``PageLoader/maximumFileBytes``), or the default landing template's cap for that path.
        case page
    }

    /// A method a route answers.
    struct Method: Sendable, Equatable {
        var method: RequestMethod
        /// The scope of token it needs.
        var scope: AdminToken.Scope
        var body: Body

        /// `GET` and `HEAD`: a read token, no body.
        static let reads = [
            Method(method: .get, scope: .read, body: .none), Method(method: .head, scope: .read, body: .none),
        ]

        /// A write of the write scope, taking `body`.
        static func write(_ method: RequestMethod, body: Body = .none) -> Method {
            Method(method: method, scope: .write, body: body)
        }
    }

    /// What a matched route answers: the route and what its path's `{name}`, `{revision}` and `{path}` hold.
    enum Handler: Sendable, Equatable {
        /// `/api/v1/openapi.json`: the OpenAPI document.
        case openAPI
        /// `/api/v1/caller`: who the token is and what it may do.
        case caller
        case domains
        case domain(String)
        case status(String)
        case history(String)
        case revision(String, String)
        case restore(String, String)
        /// `/api/v1/domains/{name}/pages`: the listing of a domain's pages.
        case pages(String)
        /// `/api/v1/domains/{name}/pages/{path}`: one page, its path decoded and checked (``APIPagePath``).
        case page(String, String)
    }

    /// The path below `/api/v1/`, as docs/api.md writes it (`domains/{name}/history`).
    let path: String
    let segments: [Segment]
    let methods: [Method]
    /// The handler of a match, from the values of its `{name}`, `{revision}` and `{path}` in order.
    let handler: @Sendable ([String]) -> Handler

    init(_ path: String, _ methods: [Method] = Method.reads, handler: @escaping @Sendable ([String]) -> Handler) {
        self.path = path
        segments = path.split(separator: "/").map { segment in
            switch segment {
            case "{name}": .name
            case "{revision}": .revision
            case "{path}": .page
            default: .literal(String(segment))
            }
        }
        self.methods = methods
        self.handler = handler
    }

    /// Where every route's path starts.
    static let prefix = "/api/v1/"

    /// Every route of the tenant API.
    static let table: [APIRoute] = [
        APIRoute("openapi.json") { _ in .openAPI },
        APIRoute("caller") { _ in .caller },
        APIRoute("domains") { _ in .domains },
        APIRoute(
            "domains/{name}",
            Method.reads + [.write(.put, body: .siteJSON), .write(.delete)]
        ) { .domain($0[0]) },
        APIRoute("domains/{name}/status") { .status($0[0]) },
        APIRoute("domains/{name}/history") { .history($0[0]) },
        APIRoute("domains/{name}/history/{revision}") { .revision($0[0], $0[1]) },
        APIRoute("domains/{name}/history/{revision}/restore", [.write(.post)]) { .restore($0[0], $0[1]) },
        APIRoute("domains/{name}/pages") { .pages($0[0]) },
        APIRoute("domains/{name}/pages/{path}", Method.reads + [.write(.put, body: .page), .write(.delete)]) {
            .page($0[0], $0[1])
        },
    ]

    /// The method `method` of this route, if it answers it.
    func method(_ method: RequestMethod) -> Method? {
        methods.first { $0.method == method }
    }

    /// The methods as an `Allow` header lists them.
    var allow: String { Self.allow(methods.map(\.method)) }

    /// `methods` as an `Allow` header lists them.
    static func allow(_ methods: [RequestMethod]) -> String { methods.map(\.name).joined(separator: ", ") }

    /// Every `Allow` a route answers with.
    static let allAllows = Set(table.map(\.allow))

    /// A route matched, with its handler.
    struct Match: Sendable {
        var route: APIRoute
        var handler: Handler
    }

    /// The route `path` names, with what its placeholders hold, or the 400 or 404 answer. A domain name is checked
    /// before anything else (400 for a bad one, whatever follows it), then a revision and a page's path.
    static func match(_ path: String) -> Checked<Match> {
        guard let parts = parts(path) else { return .refused(TenantAPI.error(404, "not found: \(path)")) }
        if parts.count >= 2, parts[0] == "domains", let problem = APIDomainName.problem(parts[1]) {
            return .refused(TenantAPI.error(400, problem))
        }
        guard let route = table.first(where: { $0.fits(parts) }) else {
            return .refused(TenantAPI.error(404, "not found: \(path)"))
        }
        var values: [String] = []
        for (index, segment) in route.segments.enumerated() {
            switch segment {
            case .literal: continue
            case .name: values.append(parts[index])
            case .revision:
                guard APIDomainName.isRevision(parts[index]) else {
                    return .refused(
                        TenantAPI.error(
                            400,
                            "'\(parts[index])' is not a revision (1 to 64 lower-case letters and digits, as an ETag holds)"
                        ))
                }
                values.append(parts[index])
            case .page:
                switch APIPagePath.decode(parts[index...].joined(separator: "/")) {
                case .accepted(let page): values.append(page)
                case .refused(let refusal): return .refused(refusal)
                }
            }
        }
        return .accepted(Match(route: route, handler: route.handler(values)))
    }

    /// The methods of the route `path` names, or `nil` when it names none (or is refused).
    static func methods(_ path: String) -> [RequestMethod]? {
        guard case .accepted(let match) = match(path) else { return nil }
        return match.route.methods.map(\.method)
    }

    /// The most bytes of body `method` may send to `path`: the cap its route declares, by the path's shape alone (a
    /// bad name still gets its 400 after a body within the cap, not a 413); 0 where no route takes a body.
    static func maximumBodyBytes(method: RequestMethod, path: String) -> Int {
        guard let parts = parts(path), let route = table.first(where: { $0.fits(parts, filled: true) }) else {
            return 0
        }
        switch route.method(method)?.body ?? .none {
        case .none: return 0
        case .siteJSON: return SiteConfigLoader.maximumConfigBytes
        case .page:
            // The default landing template's cap is known from the path; a configured one's is checked by the API.
            // The file's path in the domain's folder: what follows `domains/{name}/`.
            let file = parts.dropFirst(2).joined(separator: "/")
            return file == PageLoader.defaultTemplate ? templateBytes : pageBytes
        }
    }

    /// The largest landing page template.
    static let templateBytes = PageLoader().maximumTemplateBytes
    /// The largest file a `pages/` folder may hold.
    static let pageBytes = PageLoader().maximumFileBytes

    /// The segments of `path` below ``prefix``, not decoded; `nil` when it is not below it.
    private static func parts(_ path: String) -> [String]? {
        guard path.hasPrefix(prefix) else { return nil }
        return path.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false).map(String.init)
    }

    /// Whether `parts` have this route's shape: each literal, and a segment for each placeholder (with `filled`, not
    /// empty), or for a page's path one or more segments.
    private func fits(_ parts: [String], filled: Bool = false) -> Bool {
        let takesRest = segments.last == .page
        guard takesRest ? parts.count >= segments.count : parts.count == segments.count else { return false }
        for (segment, part) in zip(segments, parts) {
            switch segment {
            case .literal(let text): if part != text { return false }
            case .name, .revision, .page: if filled && part.isEmpty { return false }
            }
        }
        return true
    }
}
