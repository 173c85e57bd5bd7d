internal import AASACore
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a listener knows about one client connection, from accept to close: libmicrohttpd's socket context.
///
/// Created when libmicrohttpd reports the connection started and released when it reports it closed
/// (``connectionNotifyCallback``). libmicrohttpd handles a connection on one worker thread only, so
/// ``serverName`` is written and read on that thread; the reaper in ``ConnectionRegistry`` reads only the
/// immutable socket and the atomic deadline. Hence `@unchecked Sendable`.
final class ConnectionState: @unchecked Sendable {
    /// The certificate table current when the connection was accepted, kept for its whole life, so a
    /// certificate reload never changes what a handshake in progress presents. `nil` on plain HTTP.
    let certificates: CertificateTable?
    /// The connection's socket; shut down (never closed: libmicrohttpd owns it) when its deadline passes.
    let socket: Int32
    /// When the client must have sent a complete request head, or the body its route accepted, in
    /// ``ConnectionState/now()`` nanoseconds; 0 while a request is being handled.
    let headerDeadline: Atomic<UInt64>
    /// The credential the handshake presented, kept until the connection closes: GnuTLS reads it after the
    /// certificate callback returns, and the table's cache may let it go meanwhile.
    var presented: GnuTLSCredential?
    /// Whether the handshake's certificate could not be imported (the handshake fails).
    var certificateRefused = false
    /// The SNI host name, lower-cased without a trailing dot, once the handshake or the first request read it.
    var serverName: String?
    /// Whether ``serverName`` has been looked up (a client may send no SNI at all).
    var serverNameKnown = false
    /// The forwarded client whose request is in progress, counted by the listener's ``ForwardedClientLimiter``
    /// until the request completes; else `nil`.
    var forwardedClient: IPAddress?
    /// The TLS session while a response is corked (see ``TLSCork``), else `nil`.
    var corkedSession: OpaquePointer?
    /// The TLS session while the socket is corked until the server's first handshake flight is written
    /// (``HandshakeCork``), else `nil`.
    var corkedHandshake: OpaquePointer?
    /// Whether the connection was refused before its request was read whole (413, 400): its close lingers
    /// (``LingeringClose``) so that the client reads the refusal.
    var refused = false
    /// Whether a request line has arrived whose head is not complete yet: a close now answers a head that
    /// libmicrohttpd refused (431) or a client that stalled, so it lingers too.
    var headStarted = false
    /// Whether the last thing on the connection was a completed response (no request line since): a close then
    /// leaves no request half read, unless bytes are waiting. A close of a connection that never completed a
    /// response (libmicrohttpd's 414 to a first request line too long to read) lingers.
    var responded = false
    /// Whether the request in progress sends a body its route accepts (``RouteTable/maximumBodyBytes(for:)``):
    /// it is read into ``body``, at most ``bodyLimit`` bytes.
    var readsBody = false
    /// The most bytes ``body`` may hold, decided when the request head was complete.
    var bodyLimit = 0
    /// The body of the request in progress, as read so far.
    var body: [UInt8] = []
    /// The answer deferred work built for the request in progress, handed from the worker that built it to the
    /// listener's thread, which sends it when the connection is resumed.
    private let deferredAnswer = Mutex<Response?>(nil)

    /// Keeps `response` for the request in progress (from a deferred worker's thread).
    func keepDeferredAnswer(_ response: Response) {
        deferredAnswer.withLock { $0 = response }
    }

    /// The answer kept by ``keepDeferredAnswer(_:)``, once.
    func takeDeferredAnswer() -> Response? {
        deferredAnswer.withLock { answer in
            defer { answer = nil }
            return answer
        }
    }

    init(certificates: CertificateTable?, socket: Int32, headerDeadline: UInt64) {
        self.certificates = certificates
        self.socket = socket
        self.headerDeadline = Atomic(headerDeadline)
    }

    /// Starts the clock for the next request head: the handshake and the first head count from accept,
    /// each later head from the end of the previous response (an idle keep-alive connection is waiting too).
    @inline(__always)
    func expectRequestHead(within timeout: UInt64) {
        headerDeadline.store(timeout == 0 ? 0 : Self.now() &+ timeout, ordering: .relaxed)
    }

    /// The head has arrived and its route accepts a body: the body must arrive within `timeout` of the head's end,
    /// however actively the client trickles it (the slowloris defence of heads, extended to bodies).
    @inline(__always)
    func expectRequestBody(within timeout: UInt64) {
        expectRequestHead(within: timeout)
    }

    /// Forgets the body of the request that ended (its bytes are freed).
    func endRequestBody() {
        readsBody = false
        bodyLimit = 0
        body = []
    }

    /// The head (and the body its route accepted) has arrived: no deadline until the response is sent.
    @inline(__always)
    func requestHeadReceived() {
        headerDeadline.store(0, ordering: .relaxed)
    }

    /// Monotonic clock in nanoseconds (vDSO, no system call).
    @inline(__always)
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }
}
