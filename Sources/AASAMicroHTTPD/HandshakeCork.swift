internal import CGnuTLS
internal import CMicroHTTPD
internal import CShims.MicroHTTPD

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Sends the server's first handshake flight in one TCP segment.
///
/// GnuTLS writes a TLS 1.3 server flight with two `sendmsg` calls: ServerHello with ChangeCipherSpec (133
/// bytes with an ECDSA P-256 certificate), then the encrypted EncryptedExtensions, Certificate,
/// CertificateVerify and Finished (about 740 bytes). Sent as they are, the client wakes twice and the kernel sends
/// two segments. nginx (OpenSSL) sends one.
///
/// The socket is corked (`TCP_CORK`) when the connection is accepted, and uncorked by the session's read
/// function on the first read that finds bytes waiting in the send queue (`TIOCOUTQ`). That read is the server
/// waiting for the client's answer to its flight, once the whole flight is written: the client's Finished in
/// TLS 1.3, its key exchange in TLS 1.2, the new ClientHello after a HelloRetryRequest. Reads before it (the
/// ClientHello) find the queue empty and leave the cork. The kernel sends corked data after 200 ms at the latest,
/// so nothing can stay behind the cork for longer, whatever a client does.
///
/// The read and read-timeout functions replace GnuTLS's defaults (`recv` and `poll` on the socket) with the same
/// calls, plus one flag check per read; the session's receive pointer is the connection's ``ConnectionState``
/// (unretained: libmicrohttpd reports the connection closed, which releases the state, only after its last
/// read), and its send pointer stays the socket, for GnuTLS's own `sendmsg`.
enum HandshakeCork {
    /// Corks a new TLS connection's socket and takes over its session's reads.
    static func start(_ connection: OpaquePointer, state: ConnectionState) {
        guard state.socket >= 0, state.certificates != nil,
            let info = cshims_mhd_get_connection_info(connection, .CONNECTION_INFO_GNUTLS_SESSION),
            let pointer = info.pointee.tls_session
        else { return }
        var on: Int32 = 1
        guard setsockopt(state.socket, Int32(IPPROTO_TCP), TCP_CORK, &on, socklen_t(MemoryLayout<Int32>.size)) == 0
        else { return }
        state.handshakeCorked = true
        let session = OpaquePointer(pointer)
        gnutls_transport_set_ptr2(
            session, Unmanaged.passUnretained(state).toOpaque(), UnsafeMutableRawPointer(bitPattern: Int(state.socket)))
        gnutls_transport_set_pull_function(session, read)
        gnutls_transport_set_pull_timeout_function(session, wait)
    }

    /// `recv`, uncorking first when the flight is written.
    private static let read: gnutls_pull_func = { pointer, buffer, length in
        let state = Unmanaged<ConnectionState>.fromOpaque(pointer!).takeUnretainedValue()
        if state.handshakeCorked && !TLSCork.sendQueueIsEmpty(state.socket) {
            var off: Int32 = 0
            setsockopt(state.socket, Int32(IPPROTO_TCP), TCP_CORK, &off, socklen_t(MemoryLayout<Int32>.size))
            state.handshakeCorked = false
        }
        return recv(state.socket, buffer, length, 0)
    }

    /// Waits up to `milliseconds` (`UInt32.max`: `GNUTLS_INDEFINITE_TIMEOUT`) for the socket to be readable, as
    /// GnuTLS's default does: > 0 when it is, 0 on timeout, -1 on error.
    private static let wait: gnutls_pull_timeout_func = { pointer, milliseconds in
        let state = Unmanaged<ConnectionState>.fromOpaque(pointer!).takeUnretainedValue()
        var descriptor = pollfd(fd: state.socket, events: Int16(POLLIN), revents: 0)
        let timeout = milliseconds == UInt32.max ? -1 : Int32(clamping: milliseconds)
        return poll(&descriptor, 1, timeout)
    }
}
