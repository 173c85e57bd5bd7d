import AASACore

/// The operators' listener: loopback by default, never reachable through the public hosts.
///
/// Rebuilt with every reload, so `/match` answers for the configuration actually served and `/status`
/// describes the reload that built it.
public final class AdminRoutes: RouteTable {
    /// Every prepared response, indexed by id.
    public let preparedResponses: [PreparedResponse]
    private let health: PreparedResponse
    private let notFound: PreparedResponse
    private let status: PreparedResponse?
    private let matchers: DomainMatchers

    /// Builds the admin routes for the published domains and, when given, the server's status.
    public init(published: [PublishedDomain] = [], status: ServerStatus? = nil) {
        var builder = PreparedResponseBuilder()
        let plain = [HTTPHeader("Content-Type", "text/plain; charset=utf-8"), HTTPHeader("Cache-Control", "no-store")]
        health = builder.prepare(Response(status: 200, headers: plain, body: Array("ok\n".utf8)))
        notFound = builder.prepare(Response(status: 404, headers: plain, body: Array("not found\n".utf8)))
        self.status = status.map { status in
            builder.prepare(
                Response(
                    status: 200,
                    headers: [HTTPHeader("Content-Type", "application/json"), HTTPHeader("Cache-Control", "no-store")],
                    body: status.json()))
        }
        preparedResponses = builder.responses
        matchers = DomainMatchers(
            files: Dictionary(published.map { ($0.domain, $0.file) }, uniquingKeysWith: { first, _ in first }))
    }

    /// `/healthz` answers while the process is alive; `/match?url=…` says which app opens a URL and why;
    /// `/status` says what each domain and certificate serves and what the last reload found.
    public func route(_ request: some HTTPRequest) -> RouteDecision {
        let path = request.withPath { String(decoding: $0, as: UTF8.self) }
        switch path {
        case "/healthz": return .prepared(health)
        case "/status": return .prepared(status ?? notFound)
        case "/match" where request.method != .other: return .dynamic(matchers.answer(rawQuery: request.rawQuery))
        default: return .prepared(notFound)
        }
    }
}
