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

    /// Builds the native response once: the body sent from the Swift arrays' own storage, headers added (with
    /// the HTTPS-only ones when `secure`).
    ///
    /// libmicrohttpd reads the arrays' storage instead of copying the body (`MHD_RESPMEM_MUST_COPY` would keep
    /// every served file in memory twice: 7 MiB at 10,000 domains). The storage is kept alive by a box that
    /// the response retains: libmicrohttpd releases it when it frees the response, after the last connection
    /// sending it, so the body lives exactly as long as any connection needs it. The box holds the arrays in a
    /// `let`, never mutated, so their storage never moves.
    ///
    /// A body of several parts (a large page spliced per URL, ``Response/bodyParts``) becomes an iovec response:
    /// libmicrohttpd keeps one pointer and length per part and writes the parts one after the other, so the
    /// page's fixed chunks, shared by every URL's rendering, are never copied for a request or a connection.
    ///
    /// `released` runs when libmicrohttpd frees the response (``InFlightBytes/release(_:)``), or at once when it
    /// could not be made.
    init(_ response: Response, secure: Bool = false, released: (@Sendable () -> Void)? = nil) throws {
        if let refusal = Self.refusal(of: response.status) { throw refusal }
        let created: OpaquePointer?
        let parts = response.bodyParts
        if parts.isEmpty {
            released?()
            created = MHD_create_response_from_buffer(0, nil, .RESPMEM_PERSISTENT)
        } else {
            let storage =
                parts.count == 1
                ? BodyStorage(bytes: parts[0], parts: [], released: released)
                : BodyStorage(bytes: [], parts: parts, released: released)
            let box = Unmanaged.passRetained(storage)
            let release: MHD_ContentReaderFreeCallback = { box in
                box.map { Unmanaged<BodyStorage>.fromOpaque($0).release() }
            }
            if storage.parts.isEmpty {
                created = storage.bytes.withUnsafeBytes { body in
                    MHD_create_response_from_buffer_with_free_callback_cls(
                        body.count, UnsafeMutableRawPointer(mutating: body.baseAddress), release, box.toOpaque())
                }
            } else {
                let vectors = storage.parts.map { part in
                    part.withUnsafeBytes { MHD_IoVec(iov_base: $0.baseAddress, iov_len: $0.count) }
                }
                created = MHD_create_response_from_iovec(vectors, UInt32(vectors.count), release, box.toOpaque())
            }
            // libmicrohttpd calls the free callback only for a response it made.
            if created == nil { box.release() }
        }
        pointer = try MHDCheck.notNull(
            created, HTTPListenerError(.invalidResponse, "libmicrohttpd could not allocate a response"))
        status = UInt32(response.status)
        for header in response.headers(secure: secure) {
            // libmicrohttpd sets Content-Length itself and refuses names or values with CR, LF or NUL.
            try MHDCheck.yes(MHD_add_response_header(pointer, header.name, header.value), Self.refused(header))
        }
    }

    deinit { MHD_destroy_response(pointer) }

    /// Why libmicrohttpd would refuse to build `response` over plain HTTP or TLS, or `nil` when it would build it:
    /// its rules, checked without building it (a route table's responses are checked when it is swapped in and built
    /// when first asked for). A status outside 100–999; a header name that is empty or holds a space, tab, CR, LF or
    /// NUL; a value that is empty or holds CR, LF or NUL; a header the transport manages itself.
    static func refusal(of response: Response) -> HTTPListenerError? {
        if let refusal = refusal(of: response.status) { return refusal }
        if let index = refusedIndex(in: response.headers) { return Self.refused(response.headers[index]) }
        if let index = refusedIndex(in: response.httpsOnlyHeaders) {
            return Self.refused(response.httpsOnlyHeaders[index])
        }
        return nil
    }

    /// Where the first header of `headers` libmicrohttpd would refuse is, or `nil`. Each header is read where it
    /// lies: handing each to a closure copied its name and value (two retains and two releases), and the strings
    /// the domains of a load share (their `Cache-Control`) were written by every thread.
    private static func refusedIndex(in headers: [HTTPHeader]) -> Int? {
        headers.indices.first { index in
            headers[index].name.isEmpty || headers[index].value.isEmpty
                || holds(headers[index].name) { $0 == 0x00 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D || $0 == 0x20 }
                || holds(headers[index].value) { $0 == 0x00 || $0 == 0x0A || $0 == 0x0D }
                || isManagedByTheTransport(headers[index])
        }
    }

    /// Whether a byte of `text` is one `refused` refuses: its bytes looked at in place (every response of a route
    /// table is checked, at a start two for every domain, and stepping through a `String.UTF8View` cost ten times as
    /// much); a text not stored as UTF-8 (none a load makes) is stepped through.
    private static func holds(_ text: String, _ refused: (UInt8) -> Bool) -> Bool {
        text.utf8.withContiguousStorageIfAvailable { $0.contains(where: refused) } ?? text.utf8.contains(where: refused)
    }

    /// Why a response of `status` cannot be built: it is not a 3-digit code.
    private static func refusal(of status: Int) -> HTTPListenerError? {
        (100...999).contains(status)
            ? nil : HTTPListenerError(.invalidResponse, "HTTP status \(status) is not a 3-digit code")
    }

    /// A header libmicrohttpd sets itself and refuses from a response: `Content-Length`, `Transfer-Encoding`, and a
    /// `Connection` other than `close`.
    private static func isManagedByTheTransport(_ header: HTTPHeader) -> Bool {
        switch header.name.utf8.count {
        case 14: header.name.lowercased() == "content-length"
        case 17: header.name.lowercased() == "transfer-encoding"
        case 10: header.name.lowercased() == "connection" && header.value.lowercased() != "close"
        default: false
        }
    }

    /// The error of a header libmicrohttpd refused.
    private static func refused(_ header: HTTPHeader) -> HTTPListenerError {
        HTTPListenerError(
            .invalidResponse,
            "header '\(header.name): \(header.value)' was refused by libmicrohttpd "
                + "(Content-Length, Transfer-Encoding and Connection are the transport's; names and values must not be empty or "
                + "contain CR/LF)")
    }

    /// Queues this response on `connection`.
    func queue(on connection: OpaquePointer) -> MHD_Result {
        MHD_queue_response(connection, status, pointer)
    }
}

/// The bytes of one native response's body, retained by libmicrohttpd until it frees the response: one array, or
/// the parts of an iovec response (`bytes` then empty).
private final class BodyStorage {
    let bytes: [UInt8]
    let parts: [[UInt8]]
    let released: (@Sendable () -> Void)?

    init(bytes: [UInt8], parts: [[UInt8]], released: (@Sendable () -> Void)?) {
        self.bytes = bytes
        self.parts = parts
        self.released = released
    }

    deinit { released?() }
}
