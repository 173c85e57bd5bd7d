internal import AASACore
internal import CGnuTLS
internal import CMicroHTTPD
internal import CShims.MicroHTTPD

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// The C callbacks given to libmicrohttpd and GnuTLS. All are capture-free closures (a C function
// pointer cannot capture); per-listener state arrives as the `cls` pointer, an unretained view of the
// ListenerContext that HTTPListener keeps retained until the daemon has stopped (STYLE §4). They run on
// libmicrohttpd's threads and touch only immutable or Mutex-protected state.

/// Per-request state in libmicrohttpd's `*req_cls`, set up by ``uriLogCallback`` and read by ``accessHandler``:
///
/// * `nil`: first handler call for a request without a query string;
/// * the listener's `cls` pointer: a later call for a request without a query string;
/// * anything else: a `malloc`ed block `[phase byte][query bytes][NUL]` (phase 0 = first call, 1 = later),
///   freed by ``requestCompletedCallback``.
enum RequestState {
    /// Allocates the block holding `query`; `nil` if memory runs out (the query then reads as absent).
    static func make(query: UnsafePointer<CChar>) -> UnsafeMutableRawPointer? {
        let length = strlen(query)
        guard let block = malloc(length + 2) else { return nil }
        block.storeBytes(of: 0, as: UInt8.self)
        memcpy(block + 1, query, length + 1)
        return block
    }
}

/// Sees the raw request URI before libmicrohttpd splits and clobbers the query, and keeps the query.
///
/// Only requests with a `?` allocate; everything else returns `nil`.
let uriLogCallback:
    @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, OpaquePointer?)
        -> UnsafeMutableRawPointer? = { _, uri, _ in
            guard let uri, let question = strchr(uri, Int32(UInt8(ascii: "?"))) else { return nil }
            return RequestState.make(query: question + 1)
        }

/// Frees what ``uriLogCallback`` allocated, once per request, however the request ended.
let requestCompletedCallback: MHD_RequestCompletedCallback = { cls, _, requestState, _ in
    guard let requestState, let state = requestState.pointee else { return }
    if state != cls { free(state) }
    requestState.pointee = nil
}

/// Identity unescaping: the router gets the path and query exactly as sent (`/a%2Fb` stays `/a%2Fb`).
let identityUnescapeCallback:
    @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafeMutablePointer<CChar>?)
        -> Int = { _, _, text in
            guard let text else { return 0 }
            return strlen(text)
        }

/// Routes a request and queues the response.
///
/// Two phases, as libmicrohttpd 0.9.75 needs for keep-alive: the first call (headers complete) only
/// records that it happened; queuing then would make libmicrohttpd close the connection after the
/// response. Bodies are consumed and ignored; the response is queued on the final call.
let accessHandler: MHD_AccessHandlerCallback = { cls, connection, url, method, _, _, uploadSize, requestState in
    guard let cls, let connection, let url, let method, let uploadSize, let requestState else { return .NO }
    var query: UnsafePointer<CChar>? = nil
    if let state = requestState.pointee {
        if state != cls {
            if state.load(as: UInt8.self) == 0 {
                state.storeBytes(of: 1, as: UInt8.self)
                return .YES
            }
            query = UnsafePointer((state + 1).assumingMemoryBound(to: CChar.self))
        }
    } else {
        requestState.pointee = cls
        return .YES
    }
    if uploadSize.pointee != 0 {
        uploadSize.pointee = 0
        return .YES
    }

    let context = Unmanaged<ListenerContext>.fromOpaque(cls).takeUnretainedValue()
    // Retained until the end of this call, so a concurrent replaceRoutes cannot free its responses.
    let snapshot = context.routes.withLock { $0 }
    let request = MHDRequest(
        connection: connection, url: url, method: MHDRequest.method(method), methodText: method, query: query,
        isTLS: context.isTLS)
    let answered: Response
    let result: MHD_Result
    var preparedAnswer: PreparedResponse?
    switch snapshot.table.route(request) {
    case .prepared(let prepared):
        answered = prepared.response
        preparedAnswer = prepared
        if let native = snapshot.nativeResponse(for: prepared) {
            result = native.queue(on: connection)
        } else {
            // A response from another table (a router bug): still answer correctly, just not precomputed.
            result = queueDynamic(prepared.response, on: connection, context: context)
        }
    case .dynamic(let response):
        answered = response
        result = queueDynamic(response, on: connection, context: context)
    }
    if let observer = context.observer {
        observer.requestAnswered(
            request, status: answered.status, bodyBytes: request.method == .head ? 0 : answered.body.count,
            prepared: preparedAnswer)
    }
    return result
}

/// Builds, queues and releases a one-off response; an unsendable response becomes an empty 500.
private func queueDynamic(_ response: Response, on connection: OpaquePointer, context: ListenerContext) -> MHD_Result {
    do {
        return try NativeResponse(response).queue(on: connection)
    } catch {
        context.logHandler("dynamic response dropped: \(error)")
        guard let fallback = try? NativeResponse(Response(status: 500)) else { return .NO }
        return fallback.queue(on: connection)
    }
}

/// Pins the certificate table current at accept time to the connection, for its whole life.
///
/// STARTED runs before the TLS handshake; the retained table becomes the connection's socket context,
/// where ``certificateRetrieveCallback`` finds it. CLOSED releases it: the one release per retain.
let connectionNotifyCallback: MHD_NotifyConnectionCallback = { cls, _, socketContext, code in
    guard let cls, let socketContext else { return }
    switch code {
    case .CONNECTION_NOTIFY_STARTED:
        let context = Unmanaged<ListenerContext>.fromOpaque(cls).takeUnretainedValue()
        if let table = context.certificates.withLock({ $0 }) {
            socketContext.pointee = Unmanaged.passRetained(table).toOpaque()
        }
    case .CONNECTION_NOTIFY_CLOSED:
        if let table = socketContext.pointee {
            Unmanaged<CertificateTable>.fromOpaque(table).release()
            socketContext.pointee = nil
        }
    @unknown default:
        break
    }
}

/// GnuTLS asks which certificate to present: pick by SNI from the connection's table.
///
/// GnuTLS passes no user pointer, but libmicrohttpd stores its connection as the session pointer
/// (`gnutls_session_set_ptr`), and the connection's socket context holds the table pinned by
/// ``connectionNotifyCallback``. So each listener uses its own table with no process-global state.
/// Never fails for an unknown or missing name: the default entry is served (clients such as wrk send
/// IP literals as SNI). GnuTLS does not free what is returned; the pinned table keeps it alive.
let certificateRetrieveCallback:
    @convention(c) (
        gnutls_session_t?, UnsafePointer<gnutls_datum_t>?, Int32, UnsafePointer<gnutls_pk_algorithm_t>?, Int32,
        UnsafeMutablePointer<UnsafeMutablePointer<gnutls_pcert_st>?>?, UnsafeMutablePointer<UInt32>?,
        UnsafeMutablePointer<gnutls_privkey_t?>?
    ) -> Int32 = { session, _, _, _, _, certificates, certificateCount, privateKey in
        guard let session, let certificates, let certificateCount, let privateKey,
            let connection = gnutls_session_get_ptr(session),
            let info = cshims_mhd_get_connection_info(OpaquePointer(connection), .CONNECTION_INFO_SOCKET_CONTEXT),
            let pinned = info.pointee.socket_context
        else { return -1 }
        let table = Unmanaged<CertificateTable>.fromOpaque(pinned).takeUnretainedValue()
        let credential = table.credentials[table.entryIndex(forServerName: ServerName.read(from: session))]
        certificates.pointee = credential.certificates
        certificateCount.pointee = credential.count
        privateKey.pointee = credential.privateKey
        return 0
    }

/// Formats libmicrohttpd's printf-style diagnostics and hands them to the listener's log handler.
let logCallback: MHD_LogCallback = { cls, format, arguments in
    guard let cls, let format, let arguments else { return }
    var buffer = [CChar](repeating: 0, count: 512)
    _ = vsnprintf(&buffer, buffer.count, format, arguments)
    var message = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    while message.last == "\n" { message.removeLast() }
    Unmanaged<ListenerContext>.fromOpaque(cls).takeUnretainedValue().log(message)
}
