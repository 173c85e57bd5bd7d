internal import CMicroHTTPD
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A listener's sockets, bound and listening before the listener starts: so a process started as root can bind
/// port 443, drop its privileges, and only then load anything or start serving (`serve --user`).
///
/// One socket per worker thread, all on one port with `SO_REUSEPORT`, as ``HTTPListener`` binds them itself. The
/// listener that takes them (``ListenerConfiguration/boundSockets``) hands them to libmicrohttpd, which closes them
/// when it stops; sockets no listener took are closed when this object goes.
public final class ListeningSockets: Sendable {
    /// The bound port (the kernel's choice when the configuration asked for 0).
    public let port: UInt16
    let descriptors: [Int32]
    private let taken = Mutex(false)

    /// Binds `configuration.threadPoolSize` sockets to its address and port and listens on them.
    ///
    /// - Throws: ``HTTPListenerError``: `address-in-use`, `invalid-bind-address`, `start-failed`.
    public init(_ configuration: ListenerConfiguration) throws(HTTPListenerError) {
        var dualStack = false
        var address: SocketAddress.Bind
        if let text = configuration.bindAddress {
            guard let parsed = SocketAddress.bind(text, port: configuration.port) else {
                throw HTTPListenerError(
                    .invalidBindAddress, "bind address '\(text)' is not an IPv4 or IPv6 literal (e.g. 127.0.0.1, ::1)")
            }
            address = parsed
        } else {
            dualStack = SocketAddress.ipv6Available
            address = SocketAddress.any(port: configuration.port, ipv6: dualStack)
        }
        let count = max(1, configuration.threadPoolSize)
        let flags: UInt32 = dualStack ? MHD_USE_DUAL_STACK.rawValue : 0
        if count > 1, configuration.port != 0,
            !HTTPListener.portIsFree(
                configuration.port, bind: configuration.bindAddress == nil ? nil : address, flags: flags)
        {
            throw HTTPListener.startError(configuration, errno: EADDRINUSE, messages: [])
        }
        var descriptors: [Int32] = []
        var port = configuration.port
        for _ in 0..<count {
            let bound = SocketAddress.withPort(address, port)
            let fd = socket(bound.isIPv6 ? AF_INET6 : AF_INET, SocketAddress.streamType, 0)
            var on: Int32 = 1
            var off: Int32 = 0
            let size = socklen_t(MemoryLayout<Int32>.size)
            var ok = fd >= 0 && fcntl(fd, F_SETFD, FD_CLOEXEC) == 0
            ok = ok && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, size) == 0
            if count > 1 { ok = ok && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, size) == 0 }
            if dualStack { ok = ok && setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &off, size) == 0 }
            var storage = bound.storage
            let length = socklen_t(bound.isIPv6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
            ok =
                ok
                && withUnsafePointer(to: &storage) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { systemBind(fd, $0, length) }
                } == 0
            ok = ok && listen(fd, Int32(max(1, configuration.listenBacklog))) == 0
            // libmicrohttpd's event loop expects a non-blocking listening socket.
            ok = ok && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == 0
            guard ok else {
                let code = errno
                if fd >= 0 { close(fd) }
                descriptors.forEach { close($0) }
                throw HTTPListener.startError(configuration, errno: code, messages: [String(cString: strerror(code))])
            }
            if port == 0 {
                var local = sockaddr_storage()
                var localLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
                _ = withUnsafeMutablePointer(to: &local) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &localLength) }
                }
                port = withUnsafeBytes(of: &local) { raw in
                    bound.isIPv6
                        ? UInt16(bigEndian: raw.load(as: sockaddr_in6.self).sin6_port)
                        : UInt16(bigEndian: raw.load(as: sockaddr_in.self).sin_port)
                }
            }
            descriptors.append(fd)
        }
        self.descriptors = descriptors
        self.port = port
    }

    /// Hands the sockets to a listener, once; `nil` when a listener already took them.
    func take() -> [Int32]? {
        taken.withLock { taken in
            defer { taken = true }
            return taken ? nil : descriptors
        }
    }

    deinit {
        let wasTaken = taken.withLock { $0 }
        if !wasTaken { descriptors.forEach { close($0) } }
    }
}

/// `bind(2)`, named apart from ``SocketAddress/bind(_:port:)``.
private func systemBind(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
    bind(fd, address, length)
}
