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
public final class HTTPListener: Sendable {
    /// The configuration the listener was started with.
    public let configuration: ListenerConfiguration
    /// The port actually bound (the kernel's choice when the configuration asked for 0).
    public let port: UInt16

    private let context: ListenerContext
    private let daemon: Mutex<DaemonHandle?>

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
        self.configuration = configuration
        let context = ListenerContext(
            routes: snapshot, certificates: configuration.tls?.certificates,
            logHandler: configuration.logHandler, observer: configuration.observer)
        self.context = context

        var flags =
            MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue | MHD_USE_ERROR_LOG.rawValue
            | MHD_USE_ITC.rawValue  // MHD_quiesce_daemon needs the inter-thread channel with a thread pool
        if configuration.tls != nil { flags |= MHD_USE_TLS.rawValue }
        var bind: SocketAddress.Bind? = nil
        if let address = configuration.bindAddress {
            guard let parsed = SocketAddress.bind(address, port: configuration.port) else {
                throw HTTPListenerError(
                    .invalidBindAddress,
                    "bind address '\(address)' is not an IPv4 or IPv6 literal (e.g. 127.0.0.1, ::1)")
            }
            bind = parsed
            if parsed.isIPv6 { flags |= MHD_USE_IPv6.rawValue }
        } else if SocketAddress.ipv6Available {
            flags |= MHD_USE_DUAL_STACK.rawValue
        }

        // The one retain handed to libmicrohttpd; released in stop() after MHD_stop_daemon (or below on failure).
        let cls = Unmanaged.passRetained(context).toOpaque()
        let started: OpaquePointer? = Self.withOptions(configuration, cls: cls, bind: bind) { options in
            cshims_mhd_start_daemon(UInt32(flags), configuration.port, accessHandler, cls, options)
        }
        let startErrno = errno
        let messages = context.finishStartup()
        guard let started else {
            Unmanaged<ListenerContext>.fromOpaque(cls).release()
            throw Self.startError(configuration, errno: startErrno, messages: messages)
        }
        self.daemon = Mutex(DaemonHandle(pointer: started))
        self.port =
            cshims_mhd_get_daemon_info(started, .DAEMON_INFO_BIND_PORT)?.pointee.port ?? configuration.port
    }

    deinit {
        stop(timeout: .zero)
    }

    /// Serves `routes` for every request that starts from now on.
    ///
    /// Native responses for all prepared responses are built first; a failure leaves the old routes in place.
    /// Requests already being handled finish with the old table, which is freed after the last of them.
    public func replaceRoutes(_ routes: some RouteTable) throws {
        replaceRoutes(try RouteSnapshot(routes))
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

    /// Number of open client connections (0 once stopped).
    public var openConnections: Int {
        daemon.withLock { handle in
            guard let handle,
                let info = cshims_mhd_get_daemon_info(handle.pointer, .DAEMON_INFO_CURRENT_CONNECTIONS)
            else { return 0 }
            return Int(info.pointee.num_connections)
        }
    }

    /// Stops accepting, lets open connections finish for up to `timeout`, then closes everything.
    ///
    /// The listening socket is closed first, so new clients are refused at once. Idle keep-alive
    /// connections are closed when the timeout ends. Returns when libmicrohttpd's threads have ended;
    /// calling it again (or after another thread did) returns immediately.
    public func stop(timeout: Duration = .seconds(5)) {
        guard
            let handle = daemon.withLock({ handle -> DaemonHandle? in
                defer { handle = nil }
                return handle
            })
        else { return }
        let listenSocket = MHD_quiesce_daemon(handle.pointer)
        if listenSocket >= 0 { close(listenSocket) }  // quiesce hands the socket to us
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline,
            let info = cshims_mhd_get_daemon_info(handle.pointer, .DAEMON_INFO_CURRENT_CONNECTIONS),
            info.pointee.num_connections > 0
        {
            usleep(10_000)
        }
        MHD_stop_daemon(handle.pointer)
        // No callback can run any more: drop the retain taken in init.
        Unmanaged.passUnretained(context).release()
    }

    // MARK: Starting

    /// Builds the option array (kept alive for the start call) and calls `body` with it.
    private static func withOptions<R>(
        _ configuration: ListenerConfiguration, cls: UnsafeMutableRawPointer, bind: SocketAddress.Bind?,
        _ body: (UnsafePointer<MHD_OptionItem>) -> R
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
            item(.CONNECTION_LIMIT, max(1, configuration.connectionLimit)),
            item(.CONNECTION_TIMEOUT, max(0, configuration.connectionTimeoutSeconds)),
            item(.PER_IP_CONNECTION_LIMIT, max(0, configuration.perIPConnectionLimit)),
            item(.LISTEN_BACKLOG_SIZE, max(1, configuration.listenBacklog)),
        ]
        if configuration.threadPoolSize > 1 {
            options.append(item(.THREAD_POOL_SIZE, configuration.threadPoolSize))
        }
        let priorities = configuration.tls.map { strdup($0.priorities) } ?? nil
        defer { free(priorities) }
        if configuration.tls != nil {
            options.append(item(.HTTPS_PRIORITIES, 0, UnsafeMutableRawPointer(priorities)))
            options.append(
                item(
                    .HTTPS_CERT_CALLBACK, 0,
                    unsafeBitCast(certificateRetrieveCallback, to: UnsafeMutableRawPointer.self)))
            options.append(item(.NOTIFY_CONNECTION, function(connectionNotifyCallback), cls))
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

    private static func startError(_ configuration: ListenerConfiguration, errno code: Int32, messages: [String])
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
