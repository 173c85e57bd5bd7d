internal import AASACore
internal import CMicroHTTPD

/// One libmicrohttpd response (owns one reference to an `MHD_Response`).
///
/// libmicrohttpd reference-counts responses: queuing adds a reference that the connection drops when
/// it has sent the response. Destroying ours in `deinit` therefore never pulls a response out from
/// under a connection that is still sending it.
final class NativeResponse: @unchecked Sendable {
    /// The owned `MHD_Response*`.
    let pointer: OpaquePointer
    /// HTTP status to queue it with.
    let status: UInt32

    /// Builds the native response once: body copied into libmicrohttpd-owned memory, headers added (with the
    /// HTTPS-only ones when `secure`).
    ///
    /// `MHD_RESPMEM_MUST_COPY` ties the body's lifetime to the response's reference count, so it lives
    /// exactly as long as any connection needs it.
    init(_ response: Response, secure: Bool = false) throws {
        guard (100...999).contains(response.status) else {
            throw HTTPListenerError(.invalidResponse, "HTTP status \(response.status) is not a 3-digit code")
        }
        let created = response.body.withUnsafeBytes { body in
            MHD_create_response_from_buffer(
                body.count, UnsafeMutableRawPointer(mutating: body.baseAddress), .RESPMEM_MUST_COPY)
        }
        pointer = try MHDCheck.notNull(
            created, HTTPListenerError(.invalidResponse, "libmicrohttpd could not allocate a response"))
        status = UInt32(response.status)
        for header in response.headers(secure: secure) {
            // libmicrohttpd sets Content-Length itself and refuses names or values with CR, LF or NUL.
            try MHDCheck.yes(
                MHD_add_response_header(pointer, header.name, header.value),
                HTTPListenerError(
                    .invalidResponse,
                    "header '\(header.name): \(header.value)' was refused by libmicrohttpd "
                        + "(Content-Length is set by the transport; names and values must not contain CR/LF)"))
        }
    }

    deinit { MHD_destroy_response(pointer) }

    /// Queues this response on `connection`.
    func queue(on connection: OpaquePointer) -> MHD_Result {
        MHD_queue_response(connection, status, pointer)
    }
}
