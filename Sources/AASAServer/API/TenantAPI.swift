public import AASACore
import Foundation
public import Logging

/// The tenant API of the admin listener (`/api/v1/`): each domain's site.json read, checked and written through a
/// ``DomainRepository`` (the config folder or the store), with its revision as ETag, its history and its
/// `/status` entry. docs/api.md documents every operation.
///
/// The listener authenticates the caller, caps and reads the body and hands over an ``APIRequest``; everything
/// else is decided here, in this order: the domain name in the path (400), the route and method (404, 405), the
/// caller's scope (403 for a write with a `read` token), then the request itself. A write is checked exactly as
/// `aasa-server check` checks a file (``SiteConfigLoader``: the same rules, the same messages) and nothing is
/// written when it has an error (422).
public final class TenantAPI: Sendable {
    /// What `/status` says of one domain, for the listing.
    public struct DomainState: Sendable, Equatable {
        /// ``ServerStatus/DomainState/State``'s raw value (`published`, `stale`, `failed`, `removing`).
        public var state: String
        /// The state of its certificate, when it has one.
        public var certificate: String?

        /// A state.
        public init(state: String, certificate: String? = nil) {
            self.state = state
            self.certificate = certificate
        }
    }

    /// The state a listed domain has while the server has not loaded it yet.
    public static let pendingState = "pending"
    /// The states `GET /api/v1/domains?state=` accepts.
    public static let states = ServerStatus.DomainState.State.allCases.map(\.rawValue) + [pendingState]
    /// Domains per page of the listing unless `limit` says otherwise.
    public static let defaultPageSize = 100
    /// The most domains (or history entries) one page holds.
    public static let maximumPageSize = 1_000
    /// The most classes of changed URLs an answer lists (the summary counts them all).
    public static let maximumListedChanges = 100
    /// The most characters (Unicode scalars, as the OpenAPI document's `maxLength` counts) of the listing's `q`.
    static let maximumQueryLength = 253

    /// Where the domains are.
    public let repository: any DomainRepository
    private let states: @Sendable () -> [String: DomainState]
    private let status: @Sendable (String) -> JSONValue?
    /// The server's signing of a loaded domain (its identity's findings), as its load signs it.
    let sign: @Sendable ([LoadedDomain]) -> [LoadedDomain]
    let logger: Logger
    let idempotency: IdempotencyCache
    let loader = SiteConfigLoader()
    /// The caps a page write is checked against (those a load of `pages/` applies).
    let pageLoader: PageLoader
    /// The pages read, one shared copy each.
    let pageReads = SharedPageReads()

    /// The API over `repository`; `states` gives each loaded domain's state for the listing, `status` one domain's
    /// `/status` entry (`nil` when the server has none), `sign` signs a new site.json as the server's load would
    /// (the findings of its signing identity); each write is logged to `logger` with its caller. Page writes are
    /// held to the caps of `pageLoader`.
    public init(
        repository: any DomainRepository, states: @escaping @Sendable () -> [String: DomainState] = { [:] },
        status: @escaping @Sendable (String) -> JSONValue? = { _ in nil },
        sign: @escaping @Sendable ([LoadedDomain]) -> [LoadedDomain] = { $0 },
        logger: Logger = Logger(label: "aasa-server.api"), pageLoader: PageLoader = PageLoader()
    ) {
        self.repository = repository
        self.pageLoader = pageLoader
        self.states = states
        self.status = status
        self.sign = sign
        self.logger = logger
        idempotency = IdempotencyCache()
    }

    /// Where the OpenAPI 3.1 document of the API is served (`API/openapi.json`, compiled into the binary).
    public static let openAPIPath = APIRoute.prefix + "openapi.json"

    /// What a request's route answers (``APIRoute/Handler``).
    typealias Route = APIRoute.Handler

    /// Answers one request: its route in ``APIRoute/table`` (400, 404), the method (405), the scope the method needs
    /// (403), then the request itself.
    public func answer(_ request: APIRequest) -> Response {
        let matched: APIRoute.Match
        switch APIRoute.match(request.path) {
        case .refused(let refusal): return refusal
        case .accepted(let found): matched = found
        }
        guard let method = matched.route.method(request.method) else {
            return Self.methodNotAllowed(request, allowed: matched.route.allow)
        }
        let writes = method.scope == .write
        if writes && request.caller.scope != .write {
            return Self.error(
                403,
                "forbidden: the token '\(request.caller.name)' has the read scope; \(request.method.name) needs a "
                    + "token of the write scope (NAME write TOKEN in --admin-token-file)")
        }
        let route = matched.handler
        if route == .openAPI {
            return Response(
                status: 200,
                headers: [HTTPHeader("Content-Type", "application/json"), HTTPHeader("Cache-Control", "no-cache")],
                body: PackageResources.openapi_json)
        }
        do {
            if writes { return try idempotently(request) { try write(route, request) } }
            return try read(route, request)
        } catch let error as DomainRepositoryError {
            logger.error("API: \(error.description)", metadata: ["path": "\(request.path)"])
            return Self.error(
                503, "the domains could not be read or written: \(error.description)", headers: Self.retryLater)
        } catch {
            logger.error("API: \(error)", metadata: ["path": "\(request.path)"])
            return Self.error(503, "the domains could not be read or written: \(error)", headers: Self.retryLater)
        }
    }

    /// 405 for `request`, naming the methods `allowed` (its `Allow` header too).
    private static func methodNotAllowed(_ request: APIRequest, allowed: String) -> Response {
        let method = request.method == .other ? "This method" : request.method.name
        return error(
            405, "\(method) is not answered on \(request.path); use \(allowed)", headers: [HTTPHeader("Allow", allowed)]
        )
    }

    /// What a 503 of a store or folder that failed says of when to try again.
    static let retryLater = [HTTPHeader("Retry-After", "5")]

    // MARK: Reads

    private func read(_ route: Route, _ request: APIRequest) throws -> Response {
        switch route {
        case .caller:
            return Self.json(
                200,
                .members([
                    ("name", .string(request.caller.name)), ("scope", .string(request.caller.scope.rawValue)),
                ]))
        case .domains: return try list(request.rawQuery)
        case .domain(let name):
            guard let document = try repository.read(name) else { return Self.noDomain(name) }
            let tag = "\"\(document.revision)\""
            if request.ifNoneMatch.map(Self.entityTags)?.contains(where: { $0 == document.revision || $0 == "*" })
                == true
            {
                return Response(
                    status: 304, headers: [HTTPHeader("ETag", tag), HTTPHeader("Cache-Control", "no-store")])
            }
            return Self.document(document.siteJSON, revision: document.revision)
        case .status(let name):
            guard let entry = status(name) else {
                return Self.error(404, "the server has no status for \(name): no such domain, or not loaded yet")
            }
            return Self.json(200, entry)
        case .history(let name):
            let limit: Int
            switch Self.limit(request.rawQuery) {
            case .accepted(let value): limit = value
            case .refused(let refusal): return refusal
            }
            var cursor: HistoryCursor?
            if let text = QueryString.value("cursor", in: request.rawQuery), !text.isEmpty {
                guard let found = HistoryCursor(text: text) else {
                    return Self.error(
                        400,
                        "cursor=\(UTF8Bound.cut(text, bytes: 100)) is not a cursor this API gave; start again "
                            + "without one")
                }
                cursor = found
            }
            let revisions = try repository.history(name, after: cursor, limit: limit + 1)
            if revisions.isEmpty, cursor == nil, try repository.read(name) == nil { return Self.noDomain(name) }
            return Self.historyPage(name, revisions, limit: limit)
        case .revision(let name, let revision):
            guard let bytes = try repository.siteJSON(name, revision: revision) else {
                return Self.error(404, "\(name) has no revision \(revision) in its history")
            }
            return Self.document(bytes, revision: revision)
        case .pages(let name): return try listPages(name)
        case .page(let name, let path): return try readPage(name, path, request)
        case .restore, .openAPI: return Self.error(404, "not found")
        }
    }

    /// The most bytes of entries one page of history holds (each entry is at most ``HistoryPolicy/entryBytes``):
    /// a page ends before the entry that would pass it, and `next` goes on from there.
    public static let maximumHistoryPageBytes = 1 << 20

    /// A page of `revisions` (up to `limit` of them and ``maximumHistoryPageBytes``), with the cursor of the next
    /// page when there is more.
    private static func historyPage(_ name: String, _ revisions: [DomainRevision], limit: Int) -> Response {
        let formatter = ServerStatus.makeFormatter()
        var entries: [JSONNode] = []
        var bytes = 0
        for revision in revisions.prefix(limit) {
            let entry = JSONValue.members([
                ("revision", .string(revision.revision)),
                ("time", .string(formatter.string(from: revision.time))),
                ("actor", .string(revision.actor)), ("summary", .string(revision.summary)),
                ("removed", .bool(revision.removed)),
            ])
            bytes += JSONWriter(style: .pretty).bytes(entry).count
            if !entries.isEmpty && bytes > maximumHistoryPageBytes { break }
            entries.append(JSONNode(entry))
        }
        let more = revisions.count > entries.count
        let next =
            more ? revisions[entries.count - 1] : nil
        return json(
            200,
            .members([
                ("domain", .string(name)), ("revisions", .array(entries)),
                ("next", next.map { .string(HistoryCursor(after: $0).text) } ?? .null),
            ]))
    }

    /// `GET /api/v1/domains?q=&state=&limit=&cursor=`.
    private func list(_ rawQuery: String?) throws -> Response {
        let limit: Int
        switch Self.limit(rawQuery) {
        case .accepted(let value): limit = value
        case .refused(let refusal): return refusal
        }
        let sent = QueryString.value("q", in: rawQuery) ?? ""
        guard sent.unicodeScalars.count <= Self.maximumQueryLength else {
            return Self.error(
                400, "q is \(sent.unicodeScalars.count) characters; the limit is \(Self.maximumQueryLength)")
        }
        let q = sent.lowercased()
        let wanted = QueryString.value("state", in: rawQuery)
        if let wanted, !Self.states.contains(wanted) {
            return Self.error(400, "state=\(wanted): use one of \(Self.states.joined(separator: ", "))")
        }
        var after: String?
        if let cursor = QueryString.value("cursor", in: rawQuery), !cursor.isEmpty {
            guard Self.isListCursor(cursor) else {
                return Self.error(
                    400,
                    "cursor=\(UTF8Bound.cut(cursor, bytes: 100)) is not a cursor this API gave; start again without one"
                )
            }
            after = cursor
        }
        let known = states()
        let state: (String) -> DomainState = { known[$0] ?? DomainState(state: Self.pendingState) }
        var found = try repository.list(after: after, limit: limit + 1) { name in
            (q.isEmpty || name.contains(q)) && (wanted == nil || state(name).state == wanted)
        }
        let more = found.count > limit
        found = Array(found.prefix(limit))
        let next: JSONValue = more ? found.last.map { JSONValue.string($0.name) } ?? .null : .null
        return Self.json(
            200,
            .members([
                (
                    "domains",
                    .array(
                        found.map { domain in
                            let known = state(domain.name)
                            return JSONNode(
                                .members([
                                    ("name", .string(domain.name)), ("revision", .string(domain.revision)),
                                    ("state", .string(known.state)),
                                    ("certificate", known.certificate.map(JSONValue.string) ?? .null),
                                ]))
                        })
                ),
                ("next", next),
            ]))
    }

    /// `limit=` of a page: 1 to ``maximumPageSize``, ``defaultPageSize`` when absent.
    private static func limit(_ rawQuery: String?) -> Checked<Int> {
        guard let text = QueryString.value("limit", in: rawQuery) else { return .accepted(defaultPageSize) }
        guard let value = Int(text), (1...maximumPageSize).contains(value) else {
            return .refused(error(400, "limit=\(text): use a number from 1 to \(maximumPageSize)"))
        }
        return .accepted(value)
    }

    /// Whether `cursor` can be a listing's cursor: the last name of the page before (`next`), 1 to 253 of a–z, 0–9,
    /// '.' and '-'. The listing goes on after it in name order, so any such text is a place in the list.
    static func isListCursor(_ cursor: String) -> Bool {
        (1...253).contains(cursor.utf8.count)
            && cursor.utf8.allSatisfy {
                ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == UInt8(ascii: ".")
                    || $0 == UInt8(ascii: "-")
            }
    }

    // MARK: Answers

    /// A site.json as stored.
    static func document(_ bytes: [UInt8], revision: String) -> Response {
        Response(
            status: 200,
            headers: [
                HTTPHeader("Content-Type", "application/json"), HTTPHeader("ETag", "\"\(revision)\""),
                HTTPHeader("Cache-Control", "no-store"),
            ], body: bytes)
    }

    /// A JSON answer, never cached.
    static func json(_ status: Int, _ value: JSONValue, headers: [HTTPHeader] = []) -> Response {
        Response(
            status: status,
            headers: [HTTPHeader("Content-Type", "application/json"), HTTPHeader("Cache-Control", "no-store")]
                + headers,
            body: JSONWriter(style: .pretty).bytes(value))
    }

    /// `{"error": message}`.
    static func error(_ status: Int, _ message: String, headers: [HTTPHeader] = [], more: [(String, JSONValue)] = [])
        -> Response
    {
        json(status, .members([("error", .string(message))] + more), headers: headers)
    }

    static func noDomain(_ name: String) -> Response {
        error(404, "no domain \(name); create it with PUT /api/v1/domains/\(name)")
    }

    /// The entity tags of an `If-Match` or `If-None-Match` value, unquoted (`*` as itself; weak tags as strong).
    static func entityTags(_ value: String) -> [String] {
        value.split(separator: ",").map { tag in
            var tag = tag.trimmingCharacters(in: .whitespaces)
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            if tag.count >= 2, tag.hasPrefix("\""), tag.hasSuffix("\"") { tag = String(tag.dropFirst().dropLast()) }
            return tag
        }
    }
}

/// What a check of part of a request found: the value, or the answer refusing the request.
enum Checked<Value> {
    case accepted(Value)
    case refused(Response)
}
