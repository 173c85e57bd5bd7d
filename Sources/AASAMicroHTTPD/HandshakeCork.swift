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
/// While corked, the session's read and read-timeout functions are this type's: `recv` and `poll` on the socket,
/// as GnuTLS's defaults, with the connection's ``ConnectionState`` as the receive pointer (unretained, as for
/// ``certificateRetrieveCallback``: both run only during the handshake, while libmicrohttpd keeps the state). When
/// the cork comes off, the session gets plain `recv` and `poll` on the socket for the rest of the connection, so
/// nothing after the handshake reads the state or pays for the check. The send pointer stays the socket, for
/// GnuTLS's own `sendmsg`.
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
        let session = OpaquePointer(pointer)
        state.corkedHandshake = session
        gnutls_transport_set_ptr2(session, Unmanaged.passUnretained(state).toOpaque(), socketPointer(state.socket))
        gnutls_transport_set_pull_function(session, corkedRead)
        gnutls_transport_set_pull_timeout_function(session, corkedWait)
    }

    /// `recv`, uncorking first once the flight is written.
    private static let corkedRead: gnutls_pull_func = { pointer, buffer, length in
        let state = Unmanaged<ConnectionState>.fromOpaque(pointer!).takeUnretainedValue()
        if let session = state.corkedHandshake, !TLSCork.sendQueueIsEmpty(state.socket) {
            uncork(session, state: state)
        }
        return recv(state.socket, buffer, length, 0)
    }

    private static let corkedWait: gnutls_pull_timeout_func = { pointer, milliseconds in
        waitReadable(Unmanaged<ConnectionState>.fromOpaque(pointer!).takeUnretainedValue().socket, milliseconds)
    }

    /// Sends what the cork held and gives the session plain socket reads for the rest of the connection.
    private static func uncork(_ session: OpaquePointer, state: ConnectionState) {
        var off: Int32 = 0
        setsockopt(state.socket, Int32(IPPROTO_TCP), TCP_CORK, &off, socklen_t(MemoryLayout<Int32>.size))
        state.corkedHandshake = nil
        gnutls_transport_set_ptr2(session, socketPointer(state.socket), socketPointer(state.socket))
        gnutls_transport_set_pull_function(session, read)
        gnutls_transport_set_pull_timeout_function(session, wait)
    }

    /// A socket as GnuTLS's transport pointer (`GNUTLS_INT_TO_POINTER`).
    private static func socketPointer(_ socket: Int32) -> UnsafeMutableRawPointer? {
        UnsafeMutableRawPointer(bitPattern: Int(socket))
    }

    private static let read: gnutls_pull_func = { pointer, buffer, length in
        recv(Int32(truncatingIfNeeded: Int(bitPattern: pointer)), buffer, length, 0)
    }

    private static let wait: gnutls_pull_timeout_func = { pointer, milliseconds in
        waitReadable(Int32(truncatingIfNeeded: Int(bitPattern: pointer)), milliseconds)
    }

    /// Waits up to `milliseconds` (`UInt32.max`: `GNUTLS_INDEFINITE_TIMEOUT`) for `socket` to be readable, as
    /// GnuTLS's default does: > 0 when it is, 0 on timeout, -1 on error.
    private static func waitReadable(_ socket: Int32, _ milliseconds: UInt32) -> Int32 {
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, milliseconds == UInt32.max ? -1 : Int32(clamping: milliseconds))
    }
}
