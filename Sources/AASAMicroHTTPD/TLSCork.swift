internal import CGnuTLS
internal import CMicroHTTPD
internal import CShims.MicroHTTPD

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Sends a small response's head and body in one TLS record and one system call.
///
/// libmicrohttpd 0.9.75 writes the head and the body of a response with two `gnutls_record_send` calls
/// on TLS: two records, two `sendmsg`. nginx writes one. Corking the session before the response is
/// queued makes GnuTLS collect both; the request-completed callback (which libmicrohttpd calls once the
/// body is "sent", before it reads the next request or closes) uncorks, and GnuTLS sends one record.
///
/// Only bodies up to ``limit`` are corked, so the flush fits the socket's send buffer at once. If it does
/// not (a client that stopped reading while pipelining), the flush waits at most ``flushDeadline`` for
/// the socket to drain, then shuts the connection down: a worker thread is never held longer than that.
enum TLSCork {
    /// Largest body corked: well inside a 16 KiB TLS record and the kernel's initial 16 KiB send buffer.
    static let limit = 8 * 1024
    /// Longest a worker thread waits for a stalled client's socket before giving the connection up.
    static let flushDeadline: Int32 = 50  // milliseconds

    /// Corks the connection's session when the response is small enough; remembers it in the state.
    @inline(__always)
    static func cork(_ connection: OpaquePointer, bodyBytes: Int) {
        guard bodyBytes <= limit, let state = ConnectionState.of(connection), state.corkedSession == nil,
            let info = cshims_mhd_get_connection_info(connection, .CONNECTION_INFO_GNUTLS_SESSION),
            let session = info.pointee.tls_session
        else { return }
        gnutls_record_cork(OpaquePointer(session))
        state.corkedSession = OpaquePointer(session)
    }

    /// Sends what the session collected; see the type's notes for a client that does not read.
    static func flush(_ session: OpaquePointer, socket: Int32) {
        var waited: Int32 = 0
        while true {
            let result = gnutls_record_uncork(session, 0)
            if result >= 0 {
                // libmicrohttpd set TCP_CORK for the head (it expected the body to follow in another write) and
                // would have cleared it with the body; the record goes out now, so push it.
                var off: Int32 = 0
                setsockopt(socket, Int32(IPPROTO_TCP), TCP_CORK, &off, socklen_t(MemoryLayout<Int32>.size))
                return
            }
            guard result == GNUTLS_E_AGAIN || result == GNUTLS_E_INTERRUPTED, waited < flushDeadline else {
                // A hard error (the client went away) or a client that does not read: end the connection,
                // libmicrohttpd notices on its next read or write.
                shutdown(socket, Int32(SHUT_RDWR))
                return
            }
            var poller = pollfd(fd: socket, events: Int16(POLLOUT), revents: 0)
            let started = ConnectionState.now()
            _ = poll(&poller, 1, flushDeadline - waited)
            waited += Int32(min(UInt64(flushDeadline), (ConnectionState.now() - started) / 1_000_000 + 1))
        }
    }
}
