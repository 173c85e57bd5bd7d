internal import CMicroHTTPD

/// How a listener's worker threads wait for socket events.
///
/// libmicrohttpd 0.9.75 in epoll mode busy-loops through TLS handshakes: while `gnutls_handshake` waits for
/// the client's next flight it returns `GNUTLS_E_AGAIN`, but the connection's "read ready" mark is only
/// cleared by the record-layer reader, so the connection stays on the ready list and the thread polls it
/// with `epoll_wait(…, 0)` until the client answers (one round trip on the internet). Measured here: 23 %
/// of a core burnt while 200 clients sat mid-handshake (0 % with poll), and twice nginx's CPU time per
/// new TLS connection (about 700-1,000 µs against 350-430 µs; 360-420 µs with poll). poll(2) waits
/// properly, but costs time in proportion to the open connections on every turn of the loop (with 2,000
/// idle keep-alive connections, about 20 µs more per request). Hence poll for TLS listeners, where
/// handshakes are the common case, and epoll for plain HTTP, usually behind a proxy with many connections.
public enum EventLoop: String, Sendable, CaseIterable {
    /// `epoll(7)`: constant cost per event, however many connections are open.
    case epoll
    /// `poll(2)`: cost grows with the open connections, but TLS handshakes never spin.
    case poll

    /// The libmicrohttpd flag.
    var flag: UInt32 {
        switch self {
        case .epoll: MHD_USE_EPOLL.rawValue
        case .poll: MHD_USE_POLL.rawValue
        }
    }
}
