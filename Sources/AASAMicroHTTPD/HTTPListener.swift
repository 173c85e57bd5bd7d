public import AASACore
internal import CMicroHTTPD
internal import CShims.MicroHTTPD
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One listening socket served by libmicrohttpd (owns one `MHD_Daemon`).
///
/// Routes and certificates can be replaced while it runs; both swaps are atomic and affect only
/// requests (routes) or connections (certificates) that start afterwards.
///
/// Threads: one single-threaded libmicrohttpd daemon per worker thread, each with its own listening
/// socket on the same port (`SO_REUSEPORT`), so the kernel spreads new connections over them. With
/// libmicrohttpd's own thread pool every worker watches one shared listening socket and wakes for
/// every new connection; measured under new-TLS-connection load that cost twice the CPU per connection
/// of a single thread (about 800 µs against 400 µs, nginx 350-430 µs on the same machine).
public final class HTTPListener: Sendable {
    /// The configuration the listener was started with, its certificates those it serves now
    /// (``replaceCertificates(_:)``).
    public var configuration: ListenerConfiguration {
        var configuration = started
        if let startedTLS, let table = context.certificates.withLock({ $0 }) {
            var tls = TLSConfiguration(certificates: table, priorities: startedTLS.priorities)
            tls.sessionTicketLifetime = startedTLS.sessionTicketLifetime
            configuration.tls = tls
        }
        return configuration
    }
    /// The configuration the listener was started with, without its TLS settings, which ``startedTLS`` keeps
    /// without the certificates: the table a listener started with is let go once it is replaced and its
    /// connections are closed (a server's first table holds every certificate of its start).
    private let started: ListenerConfiguration
    private let startedTLS: (priorities: String, sessionTicketLifetime: Duration?)?
    /// The port actually bound (the kernel's choice when the configuration asked for 0).
    public let port: UInt16

    private let context: ListenerContext
    private let daemons: Mutex<[DaemonHandle]>
    private let reaper: WorkerLoop?

    /// `MHD_Daemon*`, made sendable: libmicrohttpd's daemon API is thread-safe for the calls we make.
    private struct DaemonHandle: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    /// Starts listening and serving `routes`.
    ///
    /// - Throws: ``HTTPListenerError``: `address-in-use` when the port is taken, `invalid-bind-address`,
    ///   `invalid-response` when a prepared response cannot be built, `start-failed` otherwise (with
    ///   libmicrohttpd's own explanation in the reason).
    public convenience init(configuration: ListenerConfiguration, routes: some RouteTable) throws {
        try self.init(configuration: configuration, snapshot: RouteSnapshot(routes))
    }

    /// Starts listening and serving `snapshot`, which other listeners may serve too.
    ///
    /// - Throws: as ``init(configuration:routes:)``.
    public init(configuration: ListenerConfiguration, snapshot: RouteSnapshot) throws {
        _ = ignoreSIGPIPE
        var withoutTLS = configuration
        withoutTLS.tls = nil
        started = withoutTLS
        startedTLS = configuration.tls.map { ($0.priorities, $0.sessionTicketLifetime) }
        // Deferred answers are built at a lower priority: a burst of heavy ones slows them, not the listener.
        let pool: WorkerPool?
        do {
            pool =
                configuration.deferredWorkers > 0
                ? try WorkerPool(
                    name: "deferred", workers: configuration.deferredWorkers,
                    queueLimit: configuration.deferredQueueLimit, niceness: 5)
                : nil
        } catch {
            throw HTTPListenerError(.startFailed, error.description)
        }
        let context: ListenerContext
        do {
            context = try ListenerContext(
                routes: snapshot, certificates: configuration.tls?.certificates,
                sessionTicketLifetime: configuration.tls?.sessionTicketLifetime,
                logHandler: configuration.logHandler, observer: configuration.observer,
                headerTimeout: configuration.headerTimeout, trustedProxies: configuration.trustedProxies,
                forwardedClientLimit: configuration.forwardedClientLimit, deferredWork: pool,
                bytesInFlight: configuration.bytesInFlight, lingeringDuration: configuration.lingeringDuration)
        } catch {
            pool?.stop()
            throw error
        }
        self.context = context

        var flags =
            MHD_USE_INTERNAL_POLLING_THREAD.rawValue | configuration.resolvedEventLoop.flag | MHD_USE_ERROR_LOG.rawValue
            | MHD_USE_ITC.rawValue  // MHD_quiesce_daemon needs the inter-thread channel
        // Not MHD_USE_TURBO: its optimistic reads spin through a TLS handshake (40 recv and 25 epoll_wait
        // calls per new connection against 15 and 6 without), and its keep-alive gain was within noise.
        if configuration.tls != nil { flags |= MHD_USE_TLS.rawValue }
        // Deferred answers suspend their connection while a worker builds them.
        if pool != nil { flags |= MHD_ALLOW_SUSPEND_RESUME.rawValue }
        var bind: SocketAddress.Bind? = nil
        if let address = configuration.bindAddress {
            guard let parsed = SocketAddress.bind(address, port: configuration.port) else {
                pool?.stop()
                throw HTTPListenerError(
                    .invalidBindAddress,
                    "bind address '\(address)' is not an IPv4 or IPv6 literal (e.g. 127.0.0.1, ::1)")
            }
            bind = parsed
            if parsed.isIPv6 { flags |= MHD_USE_IPv6.rawValue }
        } else if SocketAddress.ipv6Available {
            flags |= MHD_USE_DUAL_STACK.rawValue
        }

        let bound = configuration.boundSockets?.take()
        let count = bound?.count ?? max(1, configuration.threadPoolSize)
        // SO_REUSEPORT would let this listener share a port another server already listens on with the same
        // option, silently splitting its traffic; a plain bind first turns that into the usual error.
        if bound == nil, count > 1, configuration.port != 0,
            !Self.portIsFree(configuration.port, bind: bind, flags: flags)
        {
            pool?.stop()
            throw Self.startError(configuration, errno: EADDRINUSE, messages: [])
        }
        // The one retain handed to libmicrohttpd for all daemons; released in stop() after the last
        // MHD_stop_daemon (or below on failure).
        let cls = Unmanaged.passRetained(context).toOpaque()
        var started: [OpaquePointer] = []
        var port = configuration.boundSockets?.port ?? configuration.port
        var failure: (errno: Int32, messages: [String])?
        for index in 0..<count {
            var address = bind
            if let bind { address = SocketAddress.withPort(bind, port) }
            let listenSocket = bound?[index]
            let daemon: OpaquePointer? = Self.withOptions(
                configuration, cls: cls, bind: listenSocket == nil ? address : nil, listenSocket: listenSocket,
                daemons: count
            ) { options in
                cshims_mhd_start_daemon(UInt32(flags), port, accessHandler, cls, options)
            }
            guard let daemon else {
                failure = (errno, [])
                // The sockets no daemon took are ours to close.
                bound?[index...].forEach { close($0) }
                break
            }
            started.append(daemon)
            if port == 0 { port = cshims_mhd_get_daemon_info(daemon, .DAEMON_INFO_BIND_PORT)?.pointee.port ?? 0 }
        }
        let messages = context.finishStartup()
        if let failure {
            pool?.stop()
            for daemon in started { MHD_stop_daemon(daemon) }
            context.lingeringClose.stop()
            Unmanaged<ListenerContext>.fromOpaque(cls).release()
            throw Self.startError(configuration, errno: failure.errno, messages: messages)
        }
        self.daemons = Mutex(started.map(DaemonHandle.init))
        self.port = port
        let timeout = configuration.headerTimeout
        let log = configuration.logHandler
        self.reaper = context.connections.startReaper { closed in
            log(
                "closed \(closed) connection(s) that sent no complete request head (or accepted body) within \(timeout)"
            )
        }
    }

    deinit {
        stop(timeout: .zero)
    }

    /// Serves `routes` for every request that starts from now on.
    ///
    /// Its prepared responses are checked first (``RouteSnapshot/init(_:previous:cache:)``); a failure leaves the old
    /// routes in place. The new snapshot keeps the old one's response cache. Requests already being handled finish
    /// with the old table, which is freed after the last of them.
    public func replaceRoutes(_ routes: some RouteTable) throws {
        replaceRoutes(try RouteSnapshot(routes, previous: context.routes.withLock { $0 }))
    }

    /// Serves `snapshot` for every request that starts from now on; other listeners may serve it too.
    public func replaceRoutes(_ snapshot: RouteSnapshot) {
        let old = context.routes.withLock { current in
            defer { current = snapshot }
            return current
        }
        _ = old  // released here, outside the lock; responses still queued stay alive through libmicrohttpd's refcount
    }

    /// Serves `table` on every TLS connection accepted from now on; open connections keep their certificates.
    ///
    /// - Throws: ``HTTPListenerError`` `not-tls` when this listener serves plain HTTP.
    public func replaceCertificates(_ table: CertificateTable) throws {
        guard context.isTLS else {
            throw HTTPListenerError(.notTLS, "listener on port \(port) serves plain HTTP; it has no certificates")
        }
        context.certificates.withLock { $0 = table }
    }

    /// Connections closed so far because their request head (or TLS handshake) did not complete in time.
    public var headerTimeouts: Int { context.connections.headerTimeouts }

    /// Connections the request-head deadline is watching (those libmicrohttpd has not reported closed).
    var trackedConnections: Int { context.connections.count }

    /// Connections closed by libmicrohttpd that still linger (``LingeringClose``) while their client finishes.
    var lingeringConnections: Int { context.lingeringClose.count }
    /// The kernel's id of the thread reading lingering connections, 0 when none runs.
    var lingeringThreadID: Int32 { context.lingeringClose.threadID }

    /// The kernel's id of the header-deadline reaper's thread while it runs, 0 otherwise (no deadline, or stopped):
    /// for tests that check ``stop(timeout:)`` joins it.
    var reaperThreadID: Int32 { reaper?.threadIDs.first ?? 0 }

    /// Number of open client connections (0 once stopped).
    public var openConnections: Int {
        daemons.withLock { handles in handles.reduce(0) { $0 + Self.connections(of: $1) } }
    }

    private static func connections(of handle: DaemonHandle) -> Int {
        Int(cshims_mhd_get_daemon_info(handle.pointer, .DAEMON_INFO_CURRENT_CONNECTIONS)?.pointee.num_connections ?? 0)
    }

    /// Stops accepting, lets open connections finish for up to `timeout`, then closes everything.
    ///
    /// The listening socket goes first: it stops taking new clients (on Linux their handshakes are dropped for
    /// ``handshakeGrace``, then refused by the closed socket), while the connections the kernel had already
    /// completed or was completing on it are served like the open ones; closing the socket at once would reset
    /// them after their connect succeeded, and a router in front could not send them elsewhere. Idle keep-alive
    /// connections are closed when the timeout ends. Returns when libmicrohttpd's threads and the listener's
    /// lingering-close thread have ended; calling it again (or after another thread did) returns immediately.
    public func stop(timeout: Duration = .seconds(5)) {
        let handles = daemons.withLock { handles -> [DaemonHandle] in
            defer { handles = [] }
            return handles
        }
        guard !handles.isEmpty else { return }
        reaper?.stop()
        // Each listening socket first stops taking new handshakes, then those under way complete into its queue
        // (within a round trip), then the queue is handed to the daemon; only then is the socket closed, which
        // would reset any connection still in it.
        let listenSockets = handles.map { handle -> Int32 in
            let listenSocket = MHD_quiesce_daemon(handle.pointer)  // quiesce hands the socket to us
            if listenSocket >= 0 { Self.refuseNewHandshakes(listenSocket) }
            return listenSocket
        }
        if listenSockets.contains(where: { $0 >= 0 }) {
            usleep(UInt32(Self.microseconds(min(timeout, Self.handshakeGrace))))
        }
        // The daemons accept nothing more themselves: from here, each connection reported started is one handed over.
        let startedBefore = context.connections.started
        var handedOver = 0
        for (handle, listenSocket) in zip(handles, listenSockets) where listenSocket >= 0 {
            handedOver += Self.handOverQueuedConnections(
                listenSocket, to: handle, limit: max(1, configuration.listenBacklog))
            close(listenSocket)
        }
        let now = ContinuousClock.now
        let deadline = now + timeout
        // libmicrohttpd counts a connection handed over only once its thread has taken it from its queue: at once, or,
        // when that thread is busy serving, once it is done, when the count may be zero for a moment. Until every
        // connection handed over was taken (reported started), a count of zero does not mean that nothing is left.
        let connections = context.connections
        while ContinuousClock.now < deadline,
            connections.started - startedBefore < handedOver
                || handles.contains(where: { Self.connections(of: $0) > 0 })
        {
            usleep(10_000)
        }
        // Every deferred answer is built and its connection resumed (libmicrohttpd must not stop with one suspended),
        // and the answers are sent before the daemons close their connections.
        if let pool = context.deferredWork {
            let waiting = context.deferredPending.load(ordering: .relaxed) > 0
            pool.stop()
            let sent = ContinuousClock.now + Self.deferredAnswerGrace
            while waiting, ContinuousClock.now < sent,
                context.deferredPending.load(ordering: .relaxed) > 0
                    || handles.contains(where: { Self.connections(of: $0) > 0 })
            {
                usleep(10_000)
            }
        }
        for handle in handles { MHD_stop_daemon(handle.pointer) }
        // No callback can adopt a socket any more: the last lingering ones close, and their thread is joined.
        context.lingeringClose.stop()
        // No callback can run any more: drop the retain taken in init.
        Unmanaged.passUnretained(context).release()
    }

    /// How long ``stop(timeout:)`` gives the daemons' threads to send the deferred answers built during the stop.
    static let deferredAnswerGrace: Duration = .seconds(2)
    /// How long ``stop(timeout:)`` lets handshakes under way complete before it takes the queue: a round trip
    /// between the router and the server, with a wide margin.
    static let handshakeGrace: Duration = .milliseconds(50)

    static func microseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000
    }

    /// Makes `listenSocket` drop new handshakes (TCP segments with SYN and without ACK) while every other segment
    /// still arrives, such as the ACK that completes a handshake under way. A client whose SYN was dropped sends
    /// it again about a second later and meets the closed socket, a refusal, which a router takes as "try the next
    /// server"; a handshake still under way when the socket closes is reset after the client's connect succeeded,
    /// which a router cannot retry. Linux only (a classic BPF socket filter); elsewhere nothing changes.
    private static func refuseNewHandshakes(_ listenSocket: Int32) {
        #if os(Linux)
            /// `struct sock_filter` of <linux/filter.h>.
            struct Instruction {
                var code: UInt16
                var jumpIfTrue: UInt8
                var jumpIfFalse: UInt8
                var value: UInt32
            }
            /// `struct sock_fprog`.
            struct Program {
                var length: UInt16
                var instructions: UnsafeMutablePointer<Instruction>
            }
            // A TCP socket's filter sees the segment from its TCP header on: byte 13 holds the flags.
            var instructions = [
                Instruction(code: 0x30, jumpIfTrue: 0, jumpIfFalse: 0, value: 13),  // ld b [13]
                Instruction(code: 0x54, jumpIfTrue: 0, jumpIfFalse: 0, value: 0x12),  // and #(SYN | ACK)
                Instruction(code: 0x15, jumpIfTrue: 0, jumpIfFalse: 1, value: 0x02),  // jeq #SYN
                Instruction(code: 0x06, jumpIfTrue: 0, jumpIfFalse: 0, value: 0),  // ret #0: drop
                Instruction(code: 0x06, jumpIfTrue: 0, jumpIfFalse: 0, value: UInt32.max),  // ret: keep it whole
            ]
            instructions.withUnsafeMutableBufferPointer { buffer in
                var program = Program(length: UInt16(buffer.count), instructions: buffer.baseAddress!)
                _ = setsockopt(
                    listenSocket, SOL_SOCKET, SO_ATTACH_FILTER, &program, socklen_t(MemoryLayout<Program>.size))
            }
        #endif
    }

    /// Accepts the connections waiting on `listenSocket` (one `MHD_quiesce_daemon` returned) and gives each to
    /// `handle`'s daemon, which serves it as one it accepted itself (and closes one it cannot take). At most `limit`,
    /// the socket's backlog: the queue holds no more, so accepting further would only meet clients arriving after
    /// the stop began, which a closed socket refuses. Returns how many the daemon took.
    private static func handOverQueuedConnections(_ listenSocket: Int32, to handle: DaemonHandle, limit: Int) -> Int {
        let flags = fcntl(listenSocket, F_GETFL)
        guard flags >= 0, fcntl(listenSocket, F_SETFL, flags | O_NONBLOCK) == 0 else { return 0 }
        var handed = 0
        for _ in 0..<limit {
            var address = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let client = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { accept(listenSocket, $0, &length) }
            }
            if client < 0 {
                // A client that gave up while queued is skipped; anything else (EAGAIN: the queue is empty) ends it.
                if errno == ECONNABORTED || errno == EINTR { continue }
                break
            }
            let added = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    MHD_add_connection(handle.pointer, client, $0, length)
                }
            }
            // One it cannot take, it has closed.
            if added == .YES { handed += 1 }
        }
        return handed
    }

    // MARK: Starting

    /// Builds the option array (kept alive for the start call) and calls `body` with it.
    private static func withOptions<R>(
        _ configuration: ListenerConfiguration, cls: UnsafeMutableRawPointer, bind: SocketAddress.Bind?,
        listenSocket: Int32?, daemons: Int, _ body: (UnsafePointer<MHD_OptionItem>) -> R
    ) -> R {
        func item(_ option: MHD_OPTION, _ value: Int, _ pointer: UnsafeMutableRawPointer? = nil) -> MHD_OptionItem {
            MHD_OptionItem(option: option, value: value, ptr_value: pointer)
        }
        func function<F>(_ callback: F) -> Int { Int(bitPattern: unsafeBitCast(callback, to: UnsafeRawPointer.self)) }

        // The logger goes first so that errors while parsing later options reach it too.
        var options: [MHD_OptionItem] = [
            item(.EXTERNAL_LOGGER, function(logCallback), cls),
            item(.URI_LOG_CALLBACK, function(uriLogCallback), cls),
            item(.NOTIFY_COMPLETED, function(requestCompletedCallback), cls),
            item(.UNESCAPE_CALLBACK, function(identityUnescapeCallback), cls),
            // The limits are the listener's: each of the `daemons` enforces its share (the kernel spreads a
            // client's connections over the sockets by a hash that includes the source port).
            item(.CONNECTION_LIMIT, max(1, Self.share(configuration.connectionLimit, daemons))),
            item(.CONNECTION_TIMEOUT, max(0, configuration.connectionTimeoutSeconds)),
            item(.PER_IP_CONNECTION_LIMIT, max(0, Self.share(configuration.perIPConnectionLimit, daemons))),
            item(.LISTEN_BACKLOG_SIZE, max(1, configuration.listenBacklog)),
            item(.CONNECTION_MEMORY_LIMIT, configuration.connectionMemoryLimit),
            item(.NOTIFY_CONNECTION, function(connectionNotifyCallback), cls),
        ]
        if let listenSocket {
            options.append(item(.LISTEN_SOCKET, Int(listenSocket)))
        } else if daemons > 1 {
            options.append(item(.LISTENING_ADDRESS_REUSE, 1))
        }
        let priorities = configuration.tls.map { strdup($0.priorities) } ?? nil
        defer { free(priorities) }
        if configuration.tls != nil {
            options.append(item(.HTTPS_PRIORITIES, 0, UnsafeMutableRawPointer(priorities)))
            // The function3 variant: the one that can return an OCSP staple.
            options.append(
                item(
                    .HTTPS_CERT_CALLBACK2, 0,
                    unsafeBitCast(certificateRetrieveCallback, to: UnsafeMutableRawPointer.self)))
        }
        // libmicrohttpd reads the address during the start call only; a heap copy gives it a stable pointer.
        let address = UnsafeMutablePointer<sockaddr_storage>.allocate(capacity: 1)
        defer { address.deallocate() }
        if let bind {
            address.initialize(to: bind.storage)
            options.append(item(.SOCK_ADDR, 0, UnsafeMutableRawPointer(address)))
        }
        options.append(item(.END, 0))
        return options.withUnsafeBufferPointer { body($0.baseAddress!) }
    }

    /// `limit` split over `daemons`, rounded down so the listener never admits more than `limit` in all
    /// (at least 1 each); 0 (no limit) stays 0.
    static func share(_ limit: Int, _ daemons: Int) -> Int {
        limit <= 0 ? 0 : max(1, limit / max(1, daemons))
    }

    /// Whether a plain bind (`SO_REUSEADDR`, as libmicrohttpd binds, but not `SO_REUSEPORT`) to the
    /// listener's address succeeds; it fails while any other socket listens there.
    static func portIsFree(_ port: UInt16, bind: SocketAddress.Bind?, flags: UInt32) -> Bool {
        let dualStack = bind == nil && flags & MHD_USE_DUAL_STACK.rawValue == MHD_USE_DUAL_STACK.rawValue
        var address = bind.map { SocketAddress.withPort($0, port) } ?? SocketAddress.any(port: port, ipv6: dualStack)
        let family = address.isIPv6 ? AF_INET6 : AF_INET
        let fd = socket(family, SocketAddress.streamType, 0)
        guard fd >= 0 else { return true }  // cannot tell; libmicrohttpd's own bind reports real problems
        defer { close(fd) }
        var on: Int32 = 1
        var off: Int32 = 0
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        if dualStack { setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &off, socklen_t(MemoryLayout<Int32>.size)) }
        let length = socklen_t(address.isIPv6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
        let result = withUnsafePointer(to: &address.storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { systemBind(fd, $0, length) }
        }
        return result == 0 || errno != EADDRINUSE
    }

    static func startError(_ configuration: ListenerConfiguration, errno code: Int32, messages: [String])
        -> HTTPListenerError
    {
        let scheme = configuration.tls == nil ? "HTTP" : "HTTPS"
        let address = configuration.bindAddress ?? "all interfaces"
        let details = messages.isEmpty ? "" : ": " + messages.joined(separator: "; ")
        let inUse = String(cString: strerror(EADDRINUSE))
        if code == EADDRINUSE || messages.contains(where: { $0.contains(inUse) }) {
            return HTTPListenerError(
                .addressInUse,
                "port \(configuration.port) on \(address) is already in use\(details); "
                    + "stop the other server or choose another port")
        }
        return HTTPListenerError(
            .startFailed, "could not start the \(scheme) listener on port \(configuration.port) (\(address))\(details)")
    }
}

/// Ignores SIGPIPE once per process before the first daemon starts: a client that disconnects while
/// we write must cost an EPIPE, not the process. (Swift initialises globals once, thread-safely.)
private let ignoreSIGPIPE: Void = {
    _ = signal(SIGPIPE, SIG_IGN)
}()

/// `bind(2)`, named apart from ``SocketAddress/bind(_:port:)``.
private func systemBind(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
    bind(fd, address, length)
}
