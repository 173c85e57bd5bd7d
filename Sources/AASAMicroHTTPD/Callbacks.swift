internal import AASACore
internal import CGnuTLS
internal import CMicroHTTPD
internal import CShims.MicroHTTPD
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// The C callbacks given to libmicrohttpd and GnuTLS. All are capture-free closures (a C function
// pointer cannot capture); per-listener state arrives as the `cls` pointer, an unretained view of the
// ListenerContext that HTTPListener keeps retained until the daemon has stopped. They run on
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
/// Only requests with a `?` allocate; everything else returns `nil`. Also notes that a request head has started
/// (``ConnectionState/headStarted``).
let uriLogCallback:
    @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, OpaquePointer?)
        -> UnsafeMutableRawPointer? = { _, uri, connection in
            if let connection, let state = ConnectionState.of(connection) {
                state.headStarted = true
                state.responded = false
            }
            guard let uri, let question = strchr(uri, Int32(UInt8(ascii: "?"))) else { return nil }
            return RequestState.make(query: question + 1)
        }

/// Frees what ``uriLogCallback`` allocated, once per request, however the request ended, and starts the
/// connection's clock for its next request head.
let requestCompletedCallback: MHD_RequestCompletedCallback = { cls, connection, requestState, _ in
    if let cls, let connection, let state = ConnectionState.of(connection) {
        if let session = state.corkedSession {
            state.corkedSession = nil
            TLSCork.flush(session, socket: state.socket)
        }
        let context = Unmanaged<ListenerContext>.fromOpaque(cls).takeUnretainedValue()
        if let client = state.forwardedClient {
            state.forwardedClient = nil
            context.forwardedClients?.release(client)
        }
        if state.readsBody { state.endRequestBody() }
        state.expectRequestHead(within: context.connections.headerTimeout)
        state.responded = true
    }
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
/// response. A body reaches the calls in between only when its route accepted it (``headComplete``): it is
/// kept, never beyond the route's cap (``acceptBody``); the response is queued on the final call.
let accessHandler: MHD_AccessHandlerCallback = {
    cls, connection, url, method, version, uploadData, uploadSize, requestState in
    guard let cls, let connection, let url, let method, let uploadSize, let requestState else { return .NO }
    var query: UnsafePointer<CChar>? = nil
    if let state = requestState.pointee {
        if state != cls {
            query = UnsafePointer((state + 1).assumingMemoryBound(to: CChar.self))
            if state.load(as: UInt8.self) == 0 {
                state.storeBytes(of: 1, as: UInt8.self)
                return headComplete(connection, cls: cls, url: url, method: method, version: version, query: query)
            }
        }
    } else {
        requestState.pointee = cls
        return headComplete(connection, cls: cls, url: url, method: method, version: version, query: nil)
    }
    if uploadSize.pointee != 0 {
        return acceptBody(
            connection, cls: cls, url: url, method: method, query: query, data: uploadData, size: uploadSize)
    }

    let context = Unmanaged<ListenerContext>.fromOpaque(cls).takeUnretainedValue()
    // Retained until the end of this call, so a concurrent replaceRoutes cannot free its responses.
    let snapshot = context.routes.withLock { $0 }
    var request = MHDRequest(
        connection: connection, url: url, method: MHDRequest.method(method), methodText: method, query: query,
        isTLS: context.isTLS)
    let connectionState = ConnectionState.of(connection)
    if let state = connectionState, state.readsBody {
        // The whole body has arrived: no deadline until the response is sent.
        state.requestHeadReceived()
        request.body = state.body
    }
    if !context.trustedProxies.isEmpty {
        request.forwardedClient = ForwardedClient.address(of: connection, trusting: context.trustedProxies)
    }
    let decision: RouteDecision
    if let answer = connectionState?.takeDeferredAnswer() {
        // Resumed: deferred work built this request's answer (admitted and routed on the call that suspended it).
        context.deferredPending.subtract(1, ordering: .relaxed)
        decision = .dynamic(answer)
    } else {
        if let client = request.forwardedClient, let limiter = context.forwardedClients {
            guard limiter.admit(client) else {
                let refused = context.tooManyRequests.queue(on: connection)
                context.observer?.requestAnswered(request, status: 429, bodyBytes: 0, prepared: nil)
                return refused
            }
            connectionState?.forwardedClient = client
        }
        decision = snapshot.table.route(request)
    }
    let status: Int
    let bodyBytes: Int
    let result: MHD_Result
    var preparedAnswer: PreparedResponse?
    switch decision {
    case .prepared(let prepared):
        // Read from the prepared response itself, not its Response (whose arrays are further cache misses).
        status = prepared.status
        bodyBytes = prepared.bodyByteCount
        preparedAnswer = prepared
        if context.isTLS { TLSCork.cork(connection, bodyBytes: bodyBytes) }
        if let queued = snapshot.queue(prepared, secure: context.isTLS, on: connection) {
            result = queued
        } else {
            // A response libmicrohttpd refused to build (checked when its table was swapped in): answer anyway.
            result = queueDynamic(prepared.response, on: connection, context: context)
        }
    case .dynamic(let response):
        status = response.status
        bodyBytes = response.bodyByteCount
        if context.isTLS { TLSCork.cork(connection, bodyBytes: bodyBytes) }
        result = queueDynamic(response, on: connection, context: context)
    case .deferred(let work):
        guard let pool = context.deferredWork, let state = connectionState else {
            let response = work.build()
            status = response.status
            bodyBytes = response.bodyByteCount
            if context.isTLS { TLSCork.cork(connection, bodyBytes: bodyBytes) }
            result = queueDynamic(response, on: connection, context: context)
            break
        }
        context.deferredPending.add(1, ordering: .relaxed)
        defer_(work, on: connection, state: state, pool: pool, busy: context.busy)
        // Told when the answer is sent, on the call that follows the resume.
        return .YES
    }
    if let observer = context.observer {
        observer.requestAnswered(
            request, status: status, bodyBytes: request.method == .head ? 0 : bodyBytes, prepared: preparedAnswer)
    }
    return result
}

/// Builds a deferred answer on `pool`: the connection is suspended (libmicrohttpd stops reading and timing it) before
/// the work is handed over, so the worker's resume always follows the suspend; the worker keeps the answer in the
/// connection's state and resumes it, and libmicrohttpd then calls ``accessHandler`` again, which sends it. Work the
/// pool refuses (every worker busy, the queue full, or the listener stopping) is answered with `busy` the same way,
/// at once. ``HTTPListener/stop(timeout:)`` joins the pool before it stops the daemons, so no connection is left
/// suspended.
private func defer_(
    _ work: DeferredWork, on connection: OpaquePointer, state: ConnectionState, pool: WorkerPool, busy: Response
) {
    struct Suspended: @unchecked Sendable {
        let connection: OpaquePointer
    }
    let suspended = Suspended(connection: connection)
    MHD_suspend_connection(connection)
    let taken = pool.submit {
        state.keepDeferredAnswer(work.build())
        MHD_resume_connection(suspended.connection)
    }
    if !taken {
        state.keepDeferredAnswer(busy)
        MHD_resume_connection(connection)
    }
}

/// The first handler call of a request: its head is complete, so its connection's deadline stops.
///
/// Three kinds of request are answered at once, before routing: one whose request line hides bytes behind a
/// NUL (400), one with more than one `Host` header (400, RFC 9112 §3.2: which one names the site is
/// ambiguous), and one that announces a body its route does not take (413, before a byte of the body is read;
/// libmicrohttpd then closes the connection instead of reading the body): every body but one the route table
/// allows for this request (``RouteTable/maximumBodyBytes(for:)``, 0 everywhere but the admin API), and one whose
/// `Content-Length` is over that cap. Each closes its connection, lingering (``LingeringClose``) so that the
/// client reads the answer. A body the route takes has the header deadline again to arrive whole.
private func headComplete(
    _ connection: OpaquePointer, cls: UnsafeMutableRawPointer, url: UnsafePointer<CChar>,
    method: UnsafePointer<CChar>, version: UnsafePointer<CChar>?, query: UnsafePointer<CChar>?
) -> MHD_Result {
    let state = ConnectionState.of(connection)
    state?.requestHeadReceived()
    state?.headStarted = false
    let refusal: (response: NativeResponse, status: Int)
    let context = Unmanaged<ListenerContext>.fromOpaque(cls).takeUnretainedValue()
    let announced = announcedBody(connection)
    if hidesBytesBehindNUL(url: url, query: query, version: version) {
        refusal = (context.badRequest, 400)
    } else if repeatsHost(connection) {
        refusal = (context.repeatedHost, 400)
    } else if announced != .none {
        let request = MHDRequest(
            connection: connection, url: url, method: MHDRequest.method(method), methodText: method, query: query,
            isTLS: context.isTLS)
        let table = context.routes.withLock { $0 }.table
        // A transfer coding other than chunked has no length libmicrohttpd can find: it is never taken.
        let limit = announced == .unsupported ? 0 : table.maximumBodyBytes(for: request)
        if limit <= 0, let refused = table.refusal(for: request) {
            // Refused on its head (no token, a cross-site caller): that is the answer, whatever its body.
            let closing = try? ListenerContext.closingResponse(refused.response)
            refusal = (closing ?? context.payloadTooLarge, closing == nil ? 413 : refused.status)
        } else if limit <= 0 || state == nil {
            refusal = (context.payloadTooLarge, 413)
        } else if case .length(let length) = announced, length > UInt64(limit) {
            let text = "request body of \(length) bytes is over the \(limit) bytes \(request.methodName) accepts here\n"
            refusal = ((try? ListenerContext.closingResponse(413, text)) ?? context.payloadTooLarge, 413)
        } else if let state {
            state.readsBody = true
            state.bodyLimit = limit
            if case .length(let length) = announced { state.body.reserveCapacity(Int(length)) }
            state.expectRequestBody(within: context.connections.headerTimeout)
            return .YES
        } else {
            return .NO
        }
    } else {
        return .YES
    }
    state?.refused = true
    let result = refusal.response.queue(on: connection)
    if let observer = context.observer {
        var request = MHDRequest(
            connection: connection, url: url, method: MHDRequest.method(method), methodText: method, query: query,
            isTLS: context.isTLS)
        if !context.trustedProxies.isEmpty {
            request.forwardedClient = ForwardedClient.address(of: connection, trusting: context.trustedProxies)
        }
        observer.requestAnswered(request, status: refusal.status, bodyBytes: 0, prepared: nil)
    }
    return result
}

/// Whether the request target holds a NUL byte with more of the target after it.
///
/// libmicrohttpd 0.9.75 hands the target over as a C string, so `GET /index.html<NUL>.png` would be routed
/// as `/index.html`: what the router sees is not what the client sent. libmicrohttpd parses the request
/// line in place (`method<NUL>target<NUL>version`, the query split off at `?` with NULs, each byte where
/// it was), so the target's raw bytes end right before `version`. Whatever lies between the end of the
/// C strings we were given (path, and the query kept by ``uriLogCallback``) and `version`, other than the
/// NULs and spaces libmicrohttpd wrote or skipped, was hidden behind a NUL.
private func hidesBytesBehindNUL(
    url: UnsafePointer<CChar>, query: UnsafePointer<CChar>?, version: UnsafePointer<CChar>?
) -> Bool {
    // Only a version that libmicrohttpd found in the line itself (it follows a NUL and says HTTP/) bounds the
    // target; anything else (no version at all) leaves nothing to compare.
    guard let version, version > url, (version - 1).pointee == 0, strncmp(version, "HTTP/", 5) == 0 else {
        return false
    }
    var end = url + strlen(url)
    if let query { end += 1 + strlen(query) }
    guard end < version, version - end <= 1 << 20 else { return false }
    var cursor = end
    while cursor < version {
        let byte = UInt8(bitPattern: cursor.pointee)
        if byte != 0 && byte != UInt8(ascii: " ") && byte != UInt8(ascii: "\t") { return true }
        cursor += 1
    }
    return false
}

/// Whether the request head carries `Host` more than once (libmicrohttpd keeps every header line, and a lookup
/// finds the first).
private func repeatsHost(_ connection: OpaquePointer) -> Bool {
    var count = 0
    _ = withUnsafeMutablePointer(to: &count) { counter in
        MHD_get_connection_values(
            connection, .HEADER_KIND,
            { cls, _, key, _ in
                guard let cls, let key, strcasecmp(key, "Host") == 0 else { return .YES }
                let count = cls.assumingMemoryBound(to: Int.self)
                count.pointee += 1
                return count.pointee > 1 ? .NO : .YES
            }, counter)
    }
    return count > 1
}

/// The body a request head announces.
private enum AnnouncedBody: Equatable {
    /// None: no `Transfer-Encoding`, and no `Content-Length` or one of 0.
    case none
    /// `Content-Length` bytes (libmicrohttpd answered 400 itself to a value that is not a number).
    case length(UInt64)
    /// `Transfer-Encoding: chunked`: the length is known only at its end.
    case chunked
    /// Another `Transfer-Encoding`, whose end libmicrohttpd cannot find.
    case unsupported
}

/// The body the request head announces: `Transfer-Encoding` decides over `Content-Length` (RFC 9112 §6.3), as
/// in libmicrohttpd.
private func announcedBody(_ connection: OpaquePointer) -> AnnouncedBody {
    func header(_ name: StaticString) -> UnsafeRawBufferPointer? {
        var value: UnsafePointer<CChar>? = nil
        var size = 0
        let found = name.withUTF8Buffer { key in
            key.withMemoryRebound(to: CChar.self) { key in
                MHD_lookup_connection_value_n(connection, .HEADER_KIND, key.baseAddress, key.count, &value, &size)
            }
        }
        guard found == .YES, let value else { return nil }
        return UnsafeRawBufferPointer(start: value, count: size)
    }
    if let coding = header("Transfer-Encoding") {
        return coding.map { $0 | 0x20 } == Array("chunked".utf8) ? .chunked : .unsupported
    }
    guard let length = header("Content-Length") else { return .none }
    var value: UInt64 = 0
    for byte in length where byte != UInt8(ascii: " ") && byte != UInt8(ascii: "\t") {
        guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return .unsupported }
        let (times10, overflow) = value.multipliedReportingOverflow(by: 10)
        guard !overflow, times10 <= UInt64.max - UInt64(byte - UInt8(ascii: "0")) else { return .length(.max) }
        value = times10 + UInt64(byte - UInt8(ascii: "0"))
    }
    return value == 0 ? .none : .length(value)
}

/// A piece of a body its route accepted (``headComplete``): kept while the body stays within its cap.
///
/// A body that passes the cap (a chunked one, whose length no header announced) is refused at once. libmicrohttpd
/// 0.9.75 lets no response be queued while a body is being read (`MHD_queue_response` refuses), so the 413 is
/// written to the connection directly (through the TLS session on HTTPS) before the handler tells
/// libmicrohttpd to close it; it lingers like every refusal, so the client reads the answer.
private func acceptBody(
    _ connection: OpaquePointer, cls: UnsafeMutableRawPointer, url: UnsafePointer<CChar>,
    method: UnsafePointer<CChar>, query: UnsafePointer<CChar>?, data: UnsafePointer<CChar>?,
    size: UnsafeMutablePointer<Int>
) -> MHD_Result {
    guard let state = ConnectionState.of(connection), state.readsBody, let data else {
        // No body was accepted for this request: nothing to keep (headComplete refused every other body).
        size.pointee = 0
        return .YES
    }
    if size.pointee <= state.bodyLimit - state.body.count {
        state.body.append(contentsOf: UnsafeRawBufferPointer(start: data, count: size.pointee))
        size.pointee = 0
        return .YES
    }
    let context = Unmanaged<ListenerContext>.fromOpaque(cls).takeUnretainedValue()
    let limit = state.bodyLimit
    state.endRequestBody()
    state.refused = true
    let request = MHDRequest(
        connection: connection, url: url, method: MHDRequest.method(method), methodText: method, query: query,
        isTLS: context.isTLS)
    let text = "request body is over the \(limit) bytes \(request.methodName) accepts here\n"
    let answer = Array(
        ("HTTP/1.1 413 Content Too Large\r\nContent-Type: text/plain; charset=utf-8\r\nCache-Control: no-store\r\n"
            + "Connection: close\r\nContent-Length: \(text.utf8.count)\r\n\r\n" + text).utf8)
    answer.withUnsafeBytes { bytes in
        if context.isTLS {
            guard let info = cshims_mhd_get_connection_info(connection, .CONNECTION_INFO_GNUTLS_SESSION),
                let session = info.pointee.tls_session
            else { return }
            _ = gnutls_record_send(OpaquePointer(session), bytes.baseAddress, bytes.count)
        } else {
            LingeringClose.sendAtOnce(state.socket, bytes)
        }
    }
    context.observer?.requestAnswered(request, status: 413, bodyBytes: text.utf8.count, prepared: nil)
    return .NO
}

/// Builds, queues and releases a one-off response; an unsendable response becomes an empty 500. Its body counts
/// against the listener's bytes in flight (``ListenerContext/inFlight``) until libmicrohttpd frees it; past the bound,
/// the answer is a 503 with `Retry-After` instead.
private func queueDynamic(_ response: Response, on connection: OpaquePointer, context: ListenerContext) -> MHD_Result {
    let buffers = InFlightBytes.buffers(of: response.bodyParts)
    let inFlight = context.inFlight
    guard inFlight.admit(buffers) else {
        return (try? NativeResponse(context.bytesBusy, secure: context.isTLS).queue(on: connection)) ?? .NO
    }
    do {
        return try NativeResponse(response, secure: context.isTLS, released: { inFlight.release(buffers) }).queue(
            on: connection)
    } catch {
        context.logHandler("dynamic response dropped: \(error)")
        guard let fallback = try? NativeResponse(Response(status: 500)) else { return .NO }
        return fallback.queue(on: connection)
    }
}

/// Gives every connection its ``ConnectionState`` for its whole life, and registers it for the
/// request-head deadline.
///
/// STARTED runs before the TLS handshake: the certificate table current at accept time is pinned in the
/// state, where ``certificateRetrieveCallback`` finds it. CLOSED runs before libmicrohttpd closes the
/// socket; it unregisters the state (so the reaper can no longer touch the socket) and releases it: the
/// one release per retain.
let connectionNotifyCallback: MHD_NotifyConnectionCallback = { cls, connection, socketContext, code in
    guard let cls, let socketContext else { return }
    let context = Unmanaged<ListenerContext>.fromOpaque(cls).takeUnretainedValue()
    switch code {
    case .CONNECTION_NOTIFY_STARTED:
        guard let connection else { return }
        let socket = cshims_mhd_get_connection_info(connection, .CONNECTION_INFO_CONNECTION_FD)?.pointee.connect_fd
        let registry = context.connections
        registry.countStarted()
        let state = ConnectionState(
            certificates: context.certificates.withLock { $0 }, socket: socket ?? -1,
            headerDeadline: registry.headerTimeout == 0 ? 0 : ConnectionState.now() &+ registry.headerTimeout)
        if socket != nil { registry.register(state) }
        socketContext.pointee = Unmanaged.passRetained(state).toOpaque()
        context.sessionTickets?.enable(on: connection)
        HandshakeCork.start(connection, state: state)
    case .CONNECTION_NOTIFY_CLOSED:
        if let pointer = socketContext.pointee {
            let state = Unmanaged<ConnectionState>.fromOpaque(pointer)
            let connectionState = state.takeUnretainedValue()
            // A close after a refusal (ours, or libmicrohttpd's 431 mid-head or 414 mid-line), or with bytes unread,
            // resets the connection once the client's next bytes arrive, destroying the answer: linger instead. A
            // close after a completed response with nothing unread (keep-alive timeout, `Connection: close`) does not.
            if connectionState.socket >= 0,
                connectionState.refused || connectionState.headStarted || !connectionState.responded
                    ? LingeringClose.clientMaySend(connectionState.socket)
                    : LingeringClose.hasUnreadBytes(connectionState.socket)
            {
                context.lingeringClose.adopt(connectionState.socket)
            }
            context.connections.unregister(connectionState)
            state.release()
            socketContext.pointee = nil
        }
    @unknown default:
        break
    }
}

extension ConnectionState {
    /// The state of `connection` (unretained: valid while libmicrohttpd has not reported it closed).
    @inline(__always)
    static func of(_ connection: OpaquePointer) -> ConnectionState? {
        guard let info = cshims_mhd_get_connection_info(connection, .CONNECTION_INFO_SOCKET_CONTEXT),
            let pointer = info.pointee.socket_context
        else { return nil }
        return Unmanaged<ConnectionState>.fromOpaque(pointer).takeUnretainedValue()
    }

    /// The SNI of `session`, read once per connection and kept normalised (see ``serverName``).
    func serverName(of session: gnutls_session_t) -> String? {
        if !serverNameKnown {
            serverName = ServerName.read(from: session).flatMap(HostName.serverName)
            serverNameKnown = true
        }
        return serverName
    }
}

/// GnuTLS asks which certificate (and OCSP staple) to present: pick by SNI from the connection's table.
///
/// GnuTLS passes no user pointer, but libmicrohttpd stores its connection as the session pointer
/// (`gnutls_session_set_ptr`), and the connection's socket context holds the table pinned by
/// ``connectionNotifyCallback``. So each listener uses its own table with no process-global state.
/// Never fails for an unknown or missing name: the default entry is served (clients such as wrk send
/// IP literals as SNI). A certificate imported on first use that GnuTLS refuses fails the handshake (its
/// ``DeferredCredential/failure`` says why). GnuTLS frees nothing returned here (no `GNUTLS_CERT_RETR_DEINIT_ALL`):
/// the connection keeps the credential alive, whatever its table's cache lets go. The staple is offered only while it is valid; GnuTLS sends it only to clients
/// that asked for one (`status_request`).
let certificateRetrieveCallback:
    @convention(c) (
        gnutls_session_t?, UnsafePointer<gnutls_cert_retr_st>?,
        UnsafeMutablePointer<UnsafeMutablePointer<gnutls_pcert_st>?>?, UnsafeMutablePointer<UInt32>?,
        UnsafeMutablePointer<UnsafeMutablePointer<gnutls_ocsp_data_st>?>?, UnsafeMutablePointer<UInt32>?,
        UnsafeMutablePointer<gnutls_privkey_t?>?, UnsafeMutablePointer<UInt32>?
    ) -> Int32 = { session, _, certificates, certificateCount, ocsp, ocspCount, privateKey, flags in
        guard let session, let certificates, let certificateCount, let privateKey,
            let connection = gnutls_session_get_ptr(session),
            let state = ConnectionState.of(OpaquePointer(connection)),
            let table = state.certificates, !state.certificateRefused
        else { return -1 }
        // GnuTLS asks again for each key exchange it tries: one import per handshake.
        guard let credential = state.presented ?? table.credential(forServerName: state.serverName(of: session)) else {
            state.certificateRefused = true
            return -1
        }
        state.presented = credential
        certificates.pointee = credential.certificates
        certificateCount.pointee = credential.count
        privateKey.pointee = credential.privateKey
        if let ocsp, let ocspCount {
            if let staple = credential.staple, staple.pointee.exptime > time(nil) {
                ocsp.pointee = staple
                ocspCount.pointee = 1
            } else {
                ocsp.pointee = nil
                ocspCount.pointee = 0
            }
        }
        flags?.pointee = 0
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
