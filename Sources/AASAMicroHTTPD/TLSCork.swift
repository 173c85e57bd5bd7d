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
/// The flush never waits: it runs on a worker thread that serves other connections too, and libmicrohttpd
/// believes the response already sent, so it would not wait for the socket on our behalf. Two rules make
/// waiting unnecessary:
///
/// * A response is corked only when its body is at most ``limit`` and nothing is waiting in the socket's
///   send queue (``sendQueueIsEmpty(_:)``). The corked record (head, body of at most 8 KiB, TLS overhead)
///   then goes into an empty send buffer of at least 16 KiB (`tcp_wmem`'s default; loopback and real links
///   tune it higher) in one `sendmsg`, whether or not the client is reading at that moment. Otherwise the
///   response is not corked and libmicrohttpd writes it its own way, waiting for writability in its event
///   loop like any large response: a client that pipelines and never reads fills its socket, and from then
///   on its answers wait there, holding nobody else.
/// * If the flush still meets a full socket (`GNUTLS_E_AGAIN`: only a client that pipelined and stopped
///   reading, as a reading client's empty queue always takes the record), the connection is shut down at
///   once; libmicrohttpd notices on its next read or write and closes it.
enum TLSCork {
    /// Largest body corked: well inside a 16 KiB TLS record and the kernel's initial 16 KiB send buffer.
    static let limit = 8 * 1024

    /// Corks the connection's session when the response is small enough and the socket's send queue is
    /// empty; remembers it in the state.
    @inline(__always)
    static func cork(_ connection: OpaquePointer, bodyBytes: Int) {
        guard bodyBytes <= limit, let state = ConnectionState.of(connection), state.corkedSession == nil,
            let info = cshims_mhd_get_connection_info(connection, .CONNECTION_INFO_GNUTLS_SESSION),
            let session = info.pointee.tls_session, sendQueueIsEmpty(state.socket)
        else { return }
        gnutls_record_cork(OpaquePointer(session))
        state.corkedSession = OpaquePointer(session)
    }

    /// Whether the kernel holds no bytes of this socket that the peer has not acknowledged (`SIOCOUTQ`, which
    /// Linux defines as `TIOCOUTQ`). A client that reads each answer before asking again acknowledges it with
    /// its next request, so its queue is empty whenever a request is handled.
    @inline(__always)
    static func sendQueueIsEmpty(_ socket: Int32) -> Bool {
        var queued: Int32 = 0
        return ioctl(socket, UInt(TIOCOUTQ), &queued) == 0 && queued == 0
    }

    /// Sends what the session collected without waiting; see the type's notes for a socket that is full.
    static func flush(_ session: OpaquePointer, socket: Int32) {
        // GNUTLS_E_INTERRUPTED (a signal) is retried at once; it cannot repeat for long.
        for _ in 0..<4 {
            let result = gnutls_record_uncork(session, 0)
            if result >= 0 {
                // libmicrohttpd set TCP_CORK for the head (it expected the body to follow in another write) and
                // would have cleared it with the body; the record goes out now, so push it.
                var off: Int32 = 0
                setsockopt(socket, Int32(IPPROTO_TCP), TCP_CORK, &off, socklen_t(MemoryLayout<Int32>.size))
                return
            }
            if result != GNUTLS_E_INTERRUPTED { break }
        }
        // A hard error (the client went away) or a full socket (a client that pipelined and does not read):
        // end the connection now rather than hold the worker thread.
        shutdown(socket, Int32(SHUT_RDWR))
    }
}
