public import AASACore
public import AASAMicroHTTPD
import Foundation
import Synchronization

/// The operators' listener: loopback by default, never reachable through the public hosts, and answering
/// only requests addressed to it by one of its names and, when a token is set, callers that present it
/// (``AdminAccess``).
///
/// Rebuilt with every reload, so `/match` answers for the configuration actually served and `/status`
/// and `/readyz` describe the reload that built it.
public final class AdminRoutes: RouteTable {
    /// What the admin routes read from the running server at request time.
    public struct Live: Sendable {
        /// The public listeners' request counters and fetch log.
        public var recorder: TrafficRecorder
        /// Reload counts by result (`ok`, `errors`, `failed`).
        public var reloads: @Sendable () -> [String: Int]
        /// The latest starts and reloads, newest first.
        public var reloadHistory: @Sendable () -> [ServerStatus.ReloadRecord]
        /// Connection figures per public listener (`https`, `http`).
        public var listeners: @Sendable () -> [String: ListenerFigures]
        /// ACME's certificate status of each domain, its order counts and its queue; `nil` without `--acme`.
        public var acme: (@Sendable () -> ACMEFigures)?
        /// Makes one domain's order due now (`POST /acme/retry`); `nil` without `--acme`.
        public var retryACME: (@Sendable (String) -> ACMERetryOutcome)?
        /// The background CDN check's latest observations by domain; `nil` without `--cdn-check-interval`.
        public var cdn: (@Sendable () -> [String: (apple: CDNObservation?, google: CDNObservation?)])?
        /// What the replica knows of its store; `nil` without `--store`.
        public var store: (@Sendable () -> StoreStatus)?
        /// What the HTTPS listener's certificate cache did and holds; `nil` without HTTPS.
        public var certificateCache: (@Sendable () -> CertificateCacheFigures)?
        /// What the public listeners' response cache did and holds; `nil` without a public listener.
        public var responseCache: (@Sendable () -> ResponseCache.Figures)?
        /// What the credential vault holds; `nil` when certificates are kept in memory.
        public var credentialVault: (@Sendable () -> CredentialVault.Figures)?
        /// Answers the tenant API (every path under `/api/v1/`), called only for a request whose Host, cross-site
        /// headers and token passed (``APIRequest``); `nil`: the API is 404.
        public var api: (@Sendable (APIRequest) -> Response)?

        /// Creates the live view.
        public init(
            recorder: TrafficRecorder, reloads: @escaping @Sendable () -> [String: Int] = { [:] },
            reloadHistory: @escaping @Sendable () -> [ServerStatus.ReloadRecord] = { [] },
            listeners: @escaping @Sendable () -> [String: ListenerFigures] = { [:] },
            acme: (@Sendable () -> ACMEFigures)? = nil,
            cdn: (@Sendable () -> [String: (apple: CDNObservation?, google: CDNObservation?)])? = nil
        ) {
            self.recorder = recorder
            self.reloads = reloads
            self.reloadHistory = reloadHistory
            self.listeners = listeners
            self.acme = acme
            self.cdn = cdn
        }
    }

    /// What one listener reports about its connections.
    public struct ListenerFigures: Sendable {
        /// Connections open now.
        public var openConnections: Int
        /// Connections closed so far because their request head did not arrive in time (slowloris defence).
        public var headerTimeouts: Int

        /// Creates the figures.
        public init(openConnections: Int, headerTimeouts: Int) {
            self.openConnections = openConnections
            self.headerTimeouts = headerTimeouts
        }
    }

    /// Every prepared response, indexed by id.
    public let preparedResponses: [PreparedResponse]
    private let health: PreparedResponse
    private let dashboard: PreparedResponse
    private let notFound: PreparedResponse
    /// `/readyz`'s answer, made when first asked: it lists every domain not served, a walk over all of them that a
    /// reload need not pay for.
    private let readiness = Mutex<PreparedResponse?>(nil)
    private let misdirected: PreparedResponse
    private let unauthorized: PreparedResponse
    private let crossSite: PreparedResponse
    /// The API's 405 for a method a path's route does not answer (`TRACE`, `POST` of a domain), by its `Allow`.
    private let methodNotAllowed: [String: PreparedResponse]
    private let access: AdminAccess
    private let matchers: DomainMatchers
    private let serverStatus: ServerStatus?
    private let live: Live?

    /// Builds the admin routes for the published domains and, when given, the server's status and live view;
    /// `access` decides which requests are answered at all.
    public init(
        published: PersistentDictionary<String, PublishedDomain> = PersistentDictionary(), status: ServerStatus? = nil,
        live: Live? = nil,
        access: AdminAccess = AdminAccess()
    ) {
        var builder = PreparedResponseBuilder()
        let plain = [HTTPHeader("Content-Type", "text/plain; charset=utf-8"), HTTPHeader("Cache-Control", "no-store")]
        health = builder.prepare(Response(status: 200, headers: plain, body: Array("ok\n".utf8)))
        dashboard = builder.prepare(DashboardPage.response)
        notFound = builder.prepare(Response(status: 404, headers: plain, body: Array("not found\n".utf8)))
        misdirected = builder.prepare(
            Response(
                status: 421, headers: plain,
                body: Array(
                    "misdirected request: Host is not a name of this admin listener (use localhost, an IP address or a name given with --admin-host)\n"
                        .utf8)))
        unauthorized = builder.prepare(
            Response(
                status: 401, headers: plain + [HTTPHeader("WWW-Authenticate", "Bearer")],
                body: Array("unauthorized: this path needs Authorization: Bearer <token of --admin-token-file>\n".utf8))
        )
        crossSite = builder.prepare(
            Response(
                status: 403, headers: plain,
                body: Array(
                    "forbidden: a cross-site request (Sec-Fetch-Site or Origin names a page of another site); the admin listener answers only its own pages and clients that are not browsers: open its address directly\n"
                        .utf8)))
        var refusals: [String: PreparedResponse] = [:]
        for allowed in APIRoute.allAllows {
            refusals[allowed] = builder.prepare(
                TenantAPI.error(
                    405, "This method is not answered on this path; use \(allowed)",
                    headers: [HTTPHeader("Allow", allowed)]))
        }
        methodNotAllowed = refusals
        preparedResponses = builder.responses
        matchers = DomainMatchers(published: published)
        serverStatus = status
        self.live = live
        self.access = access
    }

    /// `/` is the dashboard (``DashboardPage``); `/healthz` answers while the process is alive; `/readyz` once
    /// every domain is served; `/match?url=…` says which app opens a URL and why; `/status` says what each domain
    /// and certificate serves (``StatusQuery`` pages it); `/metrics` counts requests (Prometheus);
    /// `/fetches?domain=D&client=C` lists recent association fetches; `/traffic` counts requests per minute of
    /// the last hour by client class; `POST /acme/retry?domain=D` makes one domain's certificate order due now
    /// (``acmeRetryAnswer(rawQuery:retry:now:)``). ``AdminRoute/table`` declares each with its methods and access;
    /// a path not in it, or a method it does not list, is 404. docs/operations.md documents each.
    public func route(_ request: some HTTPRequest) -> RouteDecision {
        let path = request.withPath { String(decoding: $0, as: UTF8.self) }
        let (verdict, caller) = decide(request, path: path)
        switch verdict {
        case .allowed: break
        case .misdirected: return .prepared(misdirected)
        case .unauthorized: return .prepared(unauthorized)
        case .crossSite: return .prepared(crossSite)
        }
        guard let declared = AdminRoute.declared(path), declared.methods.contains(request.method) else {
            return .prepared(notFound)
        }
        switch declared.handler {
        case .dashboard: return .prepared(dashboard)
        case .health: return .prepared(health)
        case .readiness:
            // Before the first load it says what it waits for, which changes while it waits; after, it is fixed.
            guard serverStatus != nil else { return .dynamic(startingAnswer) }
            return .prepared(readinessResponse)
        case .status:
            // Rendered per request: with thousands of domains the document is megabytes, kept for a rare query.
            guard let serverStatus else {
                // Before the first load: a replica waiting for its store says how that goes.
                guard let store = live?.store?() else { return .prepared(notFound) }
                let formatter = ServerStatus.makeFormatter()
                let date: (Date?) -> JSONValue = { $0.map { .string(formatter.string(from: $0)) } ?? .null }
                return .dynamic(
                    Self.json(
                        status: 503, .members([("starting", .bool(true)), ("store", store.jsonValue(date: date))])))
            }
            let query: StatusQuery
            do {
                query = try StatusQuery(rawQuery: request.rawQuery)
            } catch {
                return .dynamic(Self.json(status: 400, .members([("error", .string(error.description))])))
            }
            // Rendered off the listener's threads: with many domains it takes CPU a probe must not wait behind.
            return .deferred(
                DeferredWork { [live, matchers] in
                    var view = ServerStatus.LiveView()
                    view.acme = live?.acme?()
                    view.certificates = view.acme?.statuses ?? [:]
                    view.cdn = live?.cdn?() ?? [:]
                    view.reloads = live?.reloadHistory() ?? []
                    view.store = live?.store?()
                    view.apps = { matchers.servedApps(of: $0) }
                    view.endpoints = { matchers.servedEndpoints(of: $0) }
                    return Self.json(bytes: serverStatus.json(query: query, live: view))
                })
        case .match:
            let query = request.rawQuery
            return .deferred(DeferredWork { [matchers] in matchers.answer(rawQuery: query) })
        case .metrics:
            guard let live else { return .prepared(notFound) }
            let text = Metrics.render(recorder: live.recorder, gauges: gauges(live))
            return .dynamic(
                Response(
                    status: 200,
                    headers: [
                        HTTPHeader("Content-Type", "text/plain; version=0.0.4; charset=utf-8"),
                        HTTPHeader("Cache-Control", "no-store"),
                    ],
                    body: Array(text.utf8)))
        case .fetches:
            guard let live else { return .prepared(notFound) }
            let domain = QueryString.value("domain", in: request.rawQuery).flatMap(HostName.normalized)
            let limit =
                QueryString.value("limit", in: request.rawQuery).flatMap(Int.init) ?? TrafficRecorder.fetchLogCapacity
            var client: TrafficRecorder.ClientClass?
            if let name = QueryString.value("client", in: request.rawQuery), !name.isEmpty {
                guard let named = TrafficRecorder.ClientClass(rawValue: name) else {
                    let classes = TrafficRecorder.ClientClass.allCases.map(\.rawValue).joined(separator: ", ")
                    return .dynamic(
                        Self.json(
                            status: 400,
                            .members([("error", .string("client=\(name): use one of \(classes)"))])))
                }
                client = named
            }
            let fetches = live.recorder.recentFetches(domain: domain, client: client, limit: max(0, limit))
            return .dynamic(Self.json(.array(fetches.map { JSONNode($0.jsonValue) })))
        case .traffic:
            guard let live else { return .prepared(notFound) }
            return .dynamic(Self.json(Self.traffic(live.recorder.lastHour())))
        case .acmeRetry:
            guard let live else { return .prepared(notFound) }
            return .dynamic(Self.acmeRetryAnswer(rawQuery: request.rawQuery, retry: live.retryACME))
        case .api:
            // The API always needs a token: without any configured (caller nil), or without a handler, it is 404.
            guard let caller, let api = live?.api else { return .prepared(notFound) }
            // Off the listener's threads, on its bounded pool: a call that waits for the store or checks a large
            // site.json never holds a thread that answers /healthz and /readyz.
            let apiRequest = Self.apiRequest(request, path: path, caller: caller)
            return .deferred(DeferredWork { Self.withoutBrowserHeaders(api(apiRequest)) })
        }
    }

    /// The access verdict for `request` and, on a token route, the caller whose token it presented.
    private func decide(_ request: some HTTPRequest, path: String) -> (
        verdict: AdminAccess.Verdict, caller: AdminCaller?
    ) {
        request.withHeader("Host") { host in
            request.withHeader("Authorization") { authorization in
                request.withHeader("Sec-Fetch-Site") { fetchSite in
                    request.withHeader("Origin") { origin in
                        access.decide(
                            path: path, host: host, authorization: authorization, fetchSite: fetchSite, origin: origin)
                    }
                }
            }
        }
    }

    /// What the API handler gets of `request`.
    private static func apiRequest(_ request: some HTTPRequest, path: String, caller: AdminCaller) -> APIRequest {
        func header(_ name: StaticString) -> String? {
            request.withHeader(name) { $0.map { String(decoding: $0, as: UTF8.self) } }
        }
        return APIRequest(
            method: request.method, path: path, rawQuery: request.rawQuery, ifMatch: header("If-Match"),
            ifNoneMatch: header("If-None-Match"), idempotencyKey: header("Idempotency-Key"),
            contentType: header("Content-Type"), body: request.body, caller: caller)
    }

    /// `response` without cookies or CORS headers: the API is for programs and for the dashboard's own pages, and
    /// no answer may let a browser keep state for it or let another site's page read it.
    static func withoutBrowserHeaders(_ response: Response) -> Response {
        func isForBrowsers(_ header: HTTPHeader) -> Bool {
            let name = header.name.lowercased()
            return name == "set-cookie" || name == "set-cookie2" || name.hasPrefix("access-control-")
        }
        var response = response
        response.headers.removeAll(where: isForBrowsers)
        response.httpsOnlyHeaders.removeAll(where: isForBrowsers)
        return response
    }

    /// The most bytes of body a request may send: under `/api/v1/`, a site.json to
    /// `PUT /api/v1/domains/{name}` (``SiteConfigLoader/maximumConfigBytes``, 1 MiB) and a page to
    /// `PUT /api/v1/domains/{name}/pages/{path}` (``PageLoader/maximumFileBytes``, 16 MiB); nothing anywhere else.
    public func maximumBodyBytes(method: RequestMethod, path: String) -> Int {
        APIRoute.maximumBodyBytes(method: method, path: path)
    }

    /// The answer to a request whose Host, cross-site headers or token do not pass, decided on its head alone: such a
    /// caller is told that (421, 403 or 401) before its body's size is considered. So is a caller of the API with a
    /// method the path's route does not answer (405, with its `Allow`).
    public func refusal(for request: some HTTPRequest) -> PreparedResponse? {
        let path = request.withPath { String(decoding: $0, as: UTF8.self) }
        let (verdict, caller) = decide(request, path: path)
        switch verdict {
        case .allowed:
            // The API answers only a caller with a token (404 otherwise, as ever).
            guard caller != nil, live?.api != nil, let methods = APIRoute.methods(path),
                !methods.contains(request.method)
            else { return nil }
            return methodNotAllowed[APIRoute.allow(methods)]
        case .misdirected: return misdirected
        case .unauthorized: return unauthorized
        case .crossSite: return crossSite
        }
    }

    /// ``maximumBodyBytes(method:path:)`` for a request whose token, Host and cross-site headers pass and whose API
    /// has a handler; 0 for any other, so that no caller without a token can make the listener hold a body.
    public func maximumBodyBytes(for request: some HTTPRequest) -> Int {
        let path = request.withPath { String(decoding: $0, as: UTF8.self) }
        let limit = APIRoute.maximumBodyBytes(method: request.method, path: path)
        guard limit > 0, live?.api != nil else { return 0 }
        let (verdict, caller) = decide(request, path: path)
        return verdict == .allowed && caller != nil ? limit : 0
    }

    /// A JSON answer that is never cached.
    private static func json(status: Int = 200, _ value: JSONValue) -> Response {
        json(status: status, bytes: JSONWriter(style: .pretty).bytes(value))
    }

    /// A JSON document already written, never cached.
    private static func json(status: Int = 200, bytes: [UInt8]) -> Response {
        Response(
            status: status,
            headers: [HTTPHeader("Content-Type", "application/json"), HTTPHeader("Cache-Control", "no-store")],
            body: bytes)
    }

    /// `/traffic`: `classes`, `now` and `minutes`, the last hour's requests per minute by client class, oldest
    /// first; the last minute is the current one, still counting.
    private static func traffic(_ minutes: [(start: Date, counts: [TrafficRecorder.ClientClass: Int])]) -> JSONValue {
        let formatter = ServerStatus.makeFormatter()
        let classes = TrafficRecorder.ClientClass.allCases
        return .members([
            ("classes", .strings(classes.map(\.rawValue))),
            ("now", .string(formatter.string(from: Date()))),
            (
                "minutes",
                .array(
                    minutes.map { minute in
                        JSONNode(
                            .members([
                                ("start", .string(formatter.string(from: minute.start))),
                                (
                                    "counts",
                                    .members(
                                        classes.map { ($0.rawValue, .number(Double(minute.counts[$0] ?? 0))) })
                                ),
                            ]))
                    })
            ),
        ])
    }

    /// Ready once every domain folder has a version being served; until then say which are not and why, or, when
    /// a token guards `/status`, only how many: `/readyz` stays open for probes, and the names, paths and errors
    /// of broken domains (where a tenant's symlink leads, whether a file exists) are for token holders.
    private var readinessResponse: PreparedResponse {
        if let made = readiness.withLock({ $0 }) { return made }
        let plain = [HTTPHeader("Content-Type", "text/plain; charset=utf-8"), HTTPHeader("Cache-Control", "no-store")]
        let notReady = serverStatus?.unpublishedDomains ?? []
        let text: String
        if notReady.isEmpty {
            text = "ready\n"
        } else if !access.tokens.isEmpty {
            text =
                "not ready: \(notReady.count) of \(serverStatus?.domainCount ?? notReady.count) domains not served; "
                + "/status (with the token) says which and why\n"
        } else {
            text = notReady.map { "\($0.domain): " + ($0.errors.first?.description ?? "not loaded yet") + "\n" }
                .joined()
        }
        let made = PreparedResponse(
            Response(status: notReady.isEmpty ? 200 : 503, headers: plain, body: Array(text.utf8)))
        return readiness.withLock { kept in
            if let kept { return kept }
            kept = made
            return made
        }
    }

    /// `/readyz` before the first load: 503, saying what the server waits for (the store it is reaching, and why it
    /// has not yet, when it reads one; else the first load of its folders). Where its store lies is for token holders.
    private var startingAnswer: Response {
        let plain = [HTTPHeader("Content-Type", "text/plain; charset=utf-8"), HTTPHeader("Cache-Control", "no-store")]
        var text = "starting: waiting for the first load of the config folder\n"
        if let store = live?.store?() {
            let place = access.tokens.isEmpty ? " at \(store.server)" : ""
            text = "starting: waiting for the first load from the store\(place) (\(store.state.rawValue))"
            if let problem = store.problem, access.tokens.isEmpty {
                text += ": " + LogEscaping.excerpt(problem, limit: 200)
            }
            text += "\n"
        }
        return Response(status: 503, headers: plain, body: Array(text.utf8))
    }

    private func gauges(_ live: Live) -> Metrics.Gauges {
        var gauges = Metrics.Gauges()
        gauges.reloads = live.reloads()
        gauges.listeners = live.listeners()
        let acme = live.acme?()
        gauges.acmeOrders = acme?.orders
        gauges.acmeQueue = acme?.queue
        gauges.acmeDNS = acme?.dns
        gauges.cdn = live.cdn?()
        gauges.store = live.store?()
        gauges.certificateCache = live.certificateCache?()
        gauges.responseCache = live.responseCache?()
        gauges.credentialVault = live.credentialVault?()
        gauges.shard = serverStatus?.shard
        for domain in serverStatus?.domains ?? [] {
            gauges.domainStates[domain.state, default: 0] += 1
            if let date = domain.lastGoodLoad { gauges.lastGoodLoad[domain.domain] = date }
        }
        for certificate in serverStatus?.certificates ?? [] where certificate.serving {
            if let notAfter = certificate.notAfter { gauges.certificateExpiry.append((certificate.folder, notAfter)) }
        }
        return gauges
    }
}
