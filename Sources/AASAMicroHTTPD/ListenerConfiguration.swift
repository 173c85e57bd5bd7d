public import AASACore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How an ``HTTPListener`` listens: address, port, TLS and resource limits.
public struct ListenerConfiguration: Sendable {
    /// TCP port; `0` lets the kernel pick a free one (read it back from ``HTTPListener/port``).
    public var port: UInt16
    /// IPv4 or IPv6 literal to bind to (`127.0.0.1`, `::1`), or `nil` for every interface
    /// (dual-stack IPv6 + IPv4 when the host has IPv6, else IPv4 only).
    public var bindAddress: String?
    /// TLS settings, or `nil` for plain HTTP.
    public var tls: TLSConfiguration?
    /// Number of worker threads: one single-threaded libmicrohttpd daemon (epoll loop) each, all listening on
    /// the port with `SO_REUSEPORT`.
    public var threadPoolSize: Int
    /// Most simultaneous connections; more are accepted and closed at once. Each worker thread enforces
    /// its share (the limit divided by ``threadPoolSize``).
    public var connectionLimit: Int
    /// Seconds of inactivity after which a connection is closed (an inactivity timer, not a deadline).
    public var connectionTimeoutSeconds: Int
    /// The deadline for a complete request head: counted from accept (TLS handshake included) for the first
    /// request and from the end of the previous response for the next, however actively the client trickles
    /// bytes (slowloris). `.zero` disables it.
    public var headerTimeout: Duration
    /// Bytes the request line plus headers may take: a request line beyond it gets 414, headers beyond it 431.
    /// `Cookie` headers count twice: libmicrohttpd keeps a parsed copy of them in the same memory.
    public var requestHeadLimit: Int
    /// Most simultaneous connections from one client address (a first defence against slowloris); each worker
    /// thread enforces its share, so a client may be refused somewhat before the limit when its connections
    /// hash unevenly onto the threads, never after it.
    public var perIPConnectionLimit: Int
    /// Proxies whose word on the client's address is taken: for a request whose peer lies in one of these
    /// blocks, the address in `X-Forwarded-For` or `Forwarded` (``ForwardedHeaders``) is the one observers see
    /// as ``AASACore/HTTPRequest/remoteAddress`` and the one ``forwardedClientLimit`` counts. Empty: no proxy is
    /// trusted and those headers are ignored.
    public var trustedProxies: [IPNetwork] = []
    /// Most requests in progress at once per forwarded client address (requests from a trusted proxy that name
    /// a client); beyond it, 429. `0`: no limit. ``perIPConnectionLimit`` cannot tell such clients apart, as all
    /// of them reach the listener from the proxy's address.
    public var forwardedClientLimit: Int = 0
    /// Threads that build the answers routes defer (``AASACore/RouteDecision/deferred(_:)``: work that may wait for a
    /// database or take much CPU), apart from the worker threads, so such work never holds a thread that answers
    /// other requests. `0`: deferred answers are built on the worker thread like any other.
    public var deferredWorkers: Int = 0
    /// Deferred answers that may wait for one of the ``deferredWorkers``; a request that finds every worker busy and
    /// the queue full is answered 503 with `Retry-After` at once.
    public var deferredQueueLimit: Int = 0
    /// The most bytes of one-off answers (built for one request: the API's, `/status`) the listener's connections
    /// hold at once, each shared buffer counted once; an answer that would pass it gets 503 with `Retry-After`
    /// (``InFlightBytes``). Prepared answers (the association files, pages) are shared by every request and never
    /// count.
    public var bytesInFlight: Int = Self.defaultBytesInFlight
    /// ``bytesInFlight``'s default: 256 MiB, sixteen pages at the page cap.
    public static let defaultBytesInFlight = 256 << 20
    /// How long a refused connection lingers at most while its client finishes sending (``LingeringClose``); longer
    /// in tests that tell a client's close from this bound.
    var lingeringDuration: Duration = LingeringClose.duration
    /// Listen backlog passed to `listen(2)`.
    public var listenBacklog: Int
    /// How each worker thread waits for its sockets; `nil` picks ``EventLoop/poll`` for TLS and
    /// ``EventLoop/epoll`` for plain HTTP (see ``EventLoop``).
    public var eventLoop: EventLoop?
    /// Receives libmicrohttpd's own diagnostics (one line each, without trailing newline).
    public var logHandler: @Sendable (String) -> Void
    /// Told about every answered request (metrics, access log); `nil` for none.
    public var observer: (any RequestObserver)?
    /// Sockets bound ahead of the start (``ListeningSockets``): the listener serves on them, one worker thread
    /// each, instead of binding ``port`` itself.
    public var boundSockets: ListeningSockets?

    /// Creates a configuration; the defaults suit a public HTTPS listener.
    public init(
        port: UInt16,
        bindAddress: String? = nil,
        tls: TLSConfiguration? = nil,
        threadPoolSize: Int = ListenerConfiguration.activeProcessorCount,
        connectionLimit: Int = 10_000,
        connectionTimeoutSeconds: Int = 15,
        headerTimeout: Duration = .seconds(10),
        requestHeadLimit: Int = 16 * 1024,
        perIPConnectionLimit: Int = 256,
        listenBacklog: Int = 1024,
        logHandler: @escaping @Sendable (String) -> Void = ListenerConfiguration.logToStandardError
    ) {
        self.port = port
        self.bindAddress = bindAddress
        self.tls = tls
        self.threadPoolSize = threadPoolSize
        self.connectionLimit = connectionLimit
        self.connectionTimeoutSeconds = connectionTimeoutSeconds
        self.headerTimeout = headerTimeout
        self.requestHeadLimit = requestHeadLimit
        self.perIPConnectionLimit = perIPConnectionLimit
        self.listenBacklog = listenBacklog
        self.logHandler = logHandler
    }

    /// libmicrohttpd's per-connection memory pool for ``requestHeadLimit``. Measured on 0.9.75: the request
    /// head may fill the pool but for about 1 KiB (the response head), except that parsed cookies are copied
    /// into the pool too; hence the limit plus 1 KiB.
    ///
    /// The pool's size is a cost on every request, not only a cap: libmicrohttpd zeroes the whole pool
    /// between requests (`MHD_pool_reset`; 7.5 % of the server's CPU time with a 33 KiB pool under HTTPS
    /// keep-alive load, 2 % with 5 KiB), and a pool above 32 KiB is mmap'ed per connection instead of
    /// malloc'ed. Hence the 16 KiB default.
    var connectionMemoryLimit: Int { max(4096, requestHeadLimit) + 1024 }

    /// The event loop in use: ``eventLoop``, or the default for this listener's kind.
    var resolvedEventLoop: EventLoop { eventLoop ?? (tls == nil ? .epoll : .poll) }

    /// Processors currently online (at least 1).
    public static var activeProcessorCount: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

    /// Writes `message` to standard error with a `libmicrohttpd: ` prefix.
    @Sendable public static func logToStandardError(_ message: String) {
        let line = Array(("libmicrohttpd: " + message + "\n").utf8)
        _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }
}
