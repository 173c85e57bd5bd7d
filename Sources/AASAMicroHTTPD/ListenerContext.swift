internal import AASACore
import Synchronization

/// Everything libmicrohttpd's callbacks reach for one listener; passed to them as the `cls` pointer.
///
/// Lifetime: ``HTTPListener`` passes it retained once (`Unmanaged.passRetained`) when starting the
/// daemon and releases it exactly once after `MHD_stop_daemon` returns, when no callback can run any more.
/// Everything here is immutable or behind a `Mutex`, because callbacks run on libmicrohttpd's threads.
final class ListenerContext: Sendable {
    /// The routes in use; swapped whole by `replaceRoutes`.
    let routes: Mutex<RouteSnapshot>
    /// The certificates for connections accepted from now on, or `nil` for plain HTTP.
    let certificates: Mutex<CertificateTable?>
    /// Whether the listener serves TLS (fixed at start; only the certificates themselves change).
    let isTLS: Bool
    /// The ticket keys of a TLS listener that resumes sessions.
    let sessionTickets: SessionTickets?
    /// Where libmicrohttpd's diagnostics go.
    let logHandler: @Sendable (String) -> Void
    /// Told about every answered request (metrics, logs), if set.
    let observer: (any RequestObserver)?
    /// Diagnostics collected while the daemon starts, so a start failure can say why.
    let startupMessages = Mutex<[String]?>([])
    /// Open connections and their request-head deadlines.
    let connections: ConnectionRegistry
    /// The 413 sent to a request that announces a body its route does not take (built once).
    let payloadTooLarge: NativeResponse
    /// The 400 sent to a request whose target hides bytes behind a NUL (built once).
    let badRequest: NativeResponse
    /// The 400 sent to a request with more than one `Host` header (built once).
    let repeatedHost: NativeResponse
    /// Keeps refused connections open while their client finishes sending, so it reads the refusal.
    let lingeringClose: LingeringClose
    /// Proxies trusted to name the client (``ListenerConfiguration/trustedProxies``).
    let trustedProxies: [IPNetwork]
    /// Counts requests in progress per forwarded client, when a limit is set.
    let forwardedClients: ForwardedClientLimiter?
    /// The 429 sent to a forwarded client over its limit (built once; the proxy's connection stays open).
    let tooManyRequests: NativeResponse
    /// Where ``AASACore/RouteDecision/deferred(_:)`` answers are built, or `nil` to build them on the listener's own
    /// threads (``ListenerConfiguration/deferredWorkers``).
    let deferredWork: WorkerPool?
    /// The 503 for deferred work that finds every worker busy and the queue full.
    let busy: Response
    /// Requests suspended for a deferred answer that has not been queued yet.
    let deferredPending = Atomic<Int>(0)
    /// The bytes of one-off answers the connections still hold (``ListenerConfiguration/bytesInFlight``).
    let inFlight: InFlightBytes
    /// The 503 for an answer whose body would take ``inFlight`` past its bound.
    let bytesBusy: Response

    init(
        routes: RouteSnapshot, certificates: CertificateTable?, sessionTicketLifetime: Duration? = nil,
        logHandler: @escaping @Sendable (String) -> Void,
        observer: (any RequestObserver)? = nil, headerTimeout: Duration = .zero, trustedProxies: [IPNetwork] = [],
        forwardedClientLimit: Int = 0, deferredWork: WorkerPool? = nil,
        bytesInFlight: Int = ListenerConfiguration.defaultBytesInFlight,
        lingeringDuration: Duration = LingeringClose.duration
    ) throws {
        self.deferredWork = deferredWork
        lingeringClose = LingeringClose(duration: lingeringDuration)
        self.inFlight = InFlightBytes(limit: bytesInFlight)
        self.bytesBusy = Response(
            status: 503,
            headers: [
                HTTPHeader("Content-Type", "text/plain; charset=utf-8"), HTTPHeader("Cache-Control", "no-store"),
                HTTPHeader("Retry-After", "1"),
            ],
            body: Array(
                "busy: answers of \(bytesInFlight >> 20) MiB are still being sent on this listener; retry after 1 s\n"
                    .utf8))
        let workers = deferredWork.map { "\($0.workers) workers and \($0.queueLimit) queue places" } ?? ""
        self.busy = Response(
            status: 503,
            headers: [
                HTTPHeader("Content-Type", "text/plain; charset=utf-8"), HTTPHeader("Cache-Control", "no-store"),
                HTTPHeader("Retry-After", "1"),
            ],
            body: Array("busy: all \(workers) for this kind of request are taken; retry after 1 s\n".utf8))
        self.trustedProxies = trustedProxies
        self.forwardedClients =
            trustedProxies.isEmpty || forwardedClientLimit <= 0
            ? nil : ForwardedClientLimiter(limit: forwardedClientLimit)
        self.tooManyRequests = try NativeResponse(
            Response(
                status: 429,
                headers: [
                    HTTPHeader("Content-Type", "text/plain; charset=utf-8"), HTTPHeader("Cache-Control", "no-store"),
                    HTTPHeader("Retry-After", "1"),
                ],
                body: Array("too many requests from this client address at once\n".utf8)))
        self.observer = observer
        self.connections = ConnectionRegistry(headerTimeout: headerTimeout)
        self.badRequest = try Self.closingResponse(400, "bad request: NUL byte in the request target\n")
        self.payloadTooLarge = try Self.closingResponse(413, "request bodies are not accepted here\n")
        self.repeatedHost = try Self.closingResponse(
            400, "bad request: more than one Host header (RFC 9112 section 3.2 allows exactly one)\n")
        self.routes = Mutex(routes)
        self.certificates = Mutex(certificates)
        self.isTLS = certificates != nil
        self.sessionTickets = certificates == nil ? nil : sessionTicketLifetime.map(SessionTickets.init(lifetime:))
        self.logHandler = logHandler
    }

    /// A plain-text refusal that also closes the connection (what follows on it cannot be trusted).
    static func closingResponse(_ status: Int, _ text: String) throws -> NativeResponse {
        try closingResponse(
            Response(
                status: status,
                headers: [
                    HTTPHeader("Content-Type", "text/plain; charset=utf-8"), HTTPHeader("Cache-Control", "no-store"),
                ],
                body: Array(text.utf8)))
    }

    /// `response` sent with `Connection: close`: the request's body, announced but not read, cannot be skipped.
    static func closingResponse(_ response: Response) throws -> NativeResponse {
        var response = response
        response.headers.append(HTTPHeader("Connection", "close"))
        return try NativeResponse(response)
    }

    /// Forwards a libmicrohttpd diagnostic, also keeping it while the daemon is starting.
    func log(_ message: String) {
        startupMessages.withLock { messages in
            if messages != nil, messages!.count < 32 { messages!.append(message) }
        }
        logHandler(message)
    }

    /// Stops collecting startup diagnostics and returns them.
    func finishStartup() -> [String] {
        startupMessages.withLock { messages in
            defer { messages = nil }
            return messages ?? []
        }
    }
}
