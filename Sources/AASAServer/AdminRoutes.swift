import AASACore

/// The operators' listener: loopback by default, never reachable through the public hosts.
public final class AdminRoutes: RouteTable {
    /// Every prepared response, indexed by id.
    public let preparedResponses: [PreparedResponse]
    private let health: PreparedResponse
    private let notFound: PreparedResponse

    /// Builds the admin routes.
    public init() {
        var builder = PreparedResponseBuilder()
        let plain = [HTTPHeader("Content-Type", "text/plain; charset=utf-8"), HTTPHeader("Cache-Control", "no-store")]
        health = builder.prepare(Response(status: 200, headers: plain, body: Array("ok\n".utf8)))
        notFound = builder.prepare(Response(status: 404, headers: plain, body: Array("not found\n".utf8)))
        preparedResponses = builder.responses
    }

    /// `/healthz` answers while the process is alive.
    public func route(_ request: some HTTPRequest) -> RouteDecision {
        let isHealth = request.withPath { $0.elementsEqual("/healthz".utf8) }
        return .prepared(isHealth ? health : notFound)
    }
}
