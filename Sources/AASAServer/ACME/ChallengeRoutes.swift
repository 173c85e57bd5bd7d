public import AASACore

/// The public routes with http-01 answers in front (RFC 8555 §8.3): `GET /.well-known/acme-challenge/<token>`
/// answers the key authorization the server's own order published for the requested host (``ChallengeStore``), or
/// the file an external client wrote in the webroot (``WebrootChallenges``); every other request goes to `routes`.
///
/// Answered on plain HTTP and HTTPS alike (a CA follows redirects to HTTPS; the answers are not secret).
public struct ChallengeRoutes: RouteTable {
    /// The routes every other request goes to.
    public let routes: any RouteTable
    /// The server's own answers.
    public let store: ChallengeStore?
    /// The external client's answers.
    public let webroot: WebrootChallenges?
    /// The answer to any order of the account, whichever replica placed it; `nil` without `--acme`.
    public let stateless: StatelessChallenges?

    static let prefix = Array("/.well-known/acme-challenge/".utf8)

    /// `routes` with the answers of `store`, `stateless` and `webroot` in front.
    public init(
        _ routes: any RouteTable, store: ChallengeStore?, webroot: WebrootChallenges?,
        stateless: StatelessChallenges? = nil
    ) {
        self.routes = routes
        self.store = store
        self.webroot = webroot
        self.stateless = stateless
    }

    /// The responses of ``routes``: the answers are built per request.
    public var preparedResponses: [PreparedResponse] { routes.preparedResponses }

    /// Answers a challenge path, or passes the request on.
    public func route(_ request: some HTTPRequest) -> RouteDecision {
        let token = request.withPath { path -> String? in
            guard path.starts(with: Self.prefix) else { return nil }
            return String(decoding: path.dropFirst(Self.prefix.count), as: UTF8.self)
        }
        guard let token else { return routes.route(request) }
        let host = request.withHeader("Host") {
            HostName.withNormalized($0) { $0.map { String(decoding: $0, as: UTF8.self) } }
        }
        var answer: [UInt8]?
        if let host, let text = store?.answer(domain: host, token: token) ?? stateless?.answer(host: host, token: token)
        {
            answer = Array(text.utf8)
        }
        if answer == nil { answer = webroot?.answer(token: token) }
        let plain = [HTTPHeader("Content-Type", "text/plain; charset=utf-8"), HTTPHeader("Cache-Control", "no-store")]
        guard let answer else {
            return .dynamic(Response(status: 404, headers: plain, body: Array("no such ACME challenge\n".utf8)))
        }
        guard request.method.isRead else {
            return .dynamic(
                Response(
                    status: 405, headers: plain + [HTTPHeader("Allow", "GET, HEAD")],
                    body: Array("method not allowed\n".utf8)))
        }
        return .dynamic(
            Response(
                status: 200,
                headers: [
                    HTTPHeader("Content-Type", "application/octet-stream"), HTTPHeader("Cache-Control", "no-store"),
                ], body: answer))
    }
}
