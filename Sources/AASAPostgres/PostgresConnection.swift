internal import CLibPQ
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One blocking connection to PostgreSQL through libpq.
///
/// Statements are always parameterised (`PQexecParams`): values travel apart from the SQL, so no value is ever
/// spelled in SQL. Names that must be spelled in SQL (a `LISTEN` channel) are checked to be plain lowercase
/// identifiers first.
///
/// **Threads.** A connection is used by one thread at a time: ``execute(_:_:)``, ``transaction(_:)``,
/// ``withAdvisoryLock(_:_:)``, ``listen(_:)``, ``notify(_:payload:)`` and ``waitForNotification(timeout:)`` must not
/// run concurrently on the same connection (a second concurrent call is a programming error and traps). ``wake()``
/// and ``close()`` may be called from any thread at any time: ``wake()`` ends a running or the next
/// ``waitForNotification(timeout:)`` at once, and ``close()`` wakes it or cancels the running statement, and closes
/// the connection as soon as the operation running on it returns (at once when none runs).
///
/// **A server that goes silent** (a network partition, a machine lost without closing its sockets) is noticed by TCP
/// keepalives after about 25 s of silence (probes after 10 s idle, every 5 s, 3 unanswered), and data unacknowledged
/// for 30 s breaks the connection, and a statement is cancelled after 60 s (`statement_timeout`); the URI can set
/// other values (`keepalives_idle`, `tcp_user_timeout`, `options`, …).
public final class PostgresConnection: @unchecked Sendable {
    /// The server, as `host:port/database` from the URI (no user, no password): what errors and logs name.
    public let server: String

    /// The state shared with ``close()`` and ``wake()`` callers on other threads.
    private struct State {
        var handle: Handle?
        var inUse = false
        var executing = false
        var closeRequested = false
        /// libpq's status after the last operation was not `CONNECTION_OK` (read by the thread that ran it, so that
        /// ``isAlive`` from another thread never touches libpq).
        var broken = false
    }

    /// libpq's connection handle, which only the thread that set ``State/inUse`` touches, and its cancel handle,
    /// which ``close()`` uses from another thread (libpq allows that) while the state's lock keeps both alive.
    private struct Handle: @unchecked Sendable {
        let connection: OpaquePointer
        let cancel: OpaquePointer?

        func finish() {
            if let cancel { PQfreeCancel(cancel) }
            PQfinish(connection)
        }
    }

    private let state: Mutex<State>
    private let wakePipe: WakePipe

    /// The longest `NOTIFY` payload PostgreSQL accepts, in bytes (its limit is 8000, terminator included).
    public static let maximumPayloadBytes = 7999

    /// The server `uri` names, as errors and logs name it: `host:port/database`, never the user or the password.
    public static func server(of uri: String) -> String { ConnectionTarget(uri: uri).server }

    /// Connects to the server `uri` names: a libpq connection URI (`postgresql://user@host:5432/db?sslmode=…`) or
    /// `key=value` string.
    ///
    /// - Parameter connectTimeout: how long to wait for the server to answer, per address tried; rounded up to whole
    ///   seconds, at least 2 (libpq's minimum). It overrides a `connect_timeout` in the URI.
    /// - Throws: ``PostgresError`` `.invalidURI` when libpq cannot read `uri`, `.connect` when no connection could be
    ///   made; the message names `host:port/database` and never the password.
    public init(uri: String, connectTimeout: Duration = .seconds(10)) throws(PostgresError) {
        let target = ConnectionTarget(uri: uri)
        server = target.server
        if let reason = target.parseError {
            throw PostgresError(.invalidURI, server: target.server, message: "the connection URI is invalid: \(reason)")
        }
        guard let wakePipe = WakePipe() else {
            throw PostgresError(.connect, server: target.server, message: "no file descriptor left for a wake pipe")
        }
        self.wakePipe = wakePipe
        let (seconds, fraction) = connectTimeout.components
        let timeoutSeconds = max(2, seconds + (fraction > 0 ? 1 : 0))
        // Keywords are processed in order and a later one wins: the defaults before the URI (expanded from
        // `dbname`) are the URI's to change; the timeout and the encoding after it are ours whatever it says.
        let settings: [(String, String)] = [
            ("keepalives", "1"), ("keepalives_idle", "10"), ("keepalives_interval", "5"), ("keepalives_count", "3"),
            ("tcp_user_timeout", "30000"), ("fallback_application_name", "aasa-server"),
            // No statement runs for ever: a lock held elsewhere or a server gone slow ends as an error.
            ("options", "-c statement_timeout=60s"),
            ("dbname", uri), ("connect_timeout", String(timeoutSeconds)), ("client_encoding", "UTF8"),
        ]
        let connection = Self.withCStrings(settings.map(\.0)) { keywords in
            Self.withCStrings(settings.map(\.1)) { values in PQconnectdbParams(keywords, values, 1) }
        }
        guard let connection else {
            throw PostgresError(.connect, server: target.server, message: "libpq could not allocate a connection")
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = target.scrub(String(cString: PQerrorMessage(connection)))
            PQfinish(connection)
            throw PostgresError(.connect, server: target.server, message: message)
        }
        // The server's notices (`relation … already exists, skipping`) are not errors, and libpq would print them on
        // standard error: they are dropped.
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
        state = Mutex(State(handle: Handle(connection: connection, cancel: PQgetCancel(connection))))
    }

    deinit {
        state.withLock { state in
            state.handle?.finish()
            state.handle = nil
        }
    }

    // MARK: Statements

    /// Runs one statement with its parameters (`$1`, `$2`, … in `sql`) and returns its result.
    ///
    /// Text parameters are sent as text with no declared type (the server infers it; cast in SQL, `$1::bigint`, where
    /// it cannot); byte parameters are sent in binary as `bytea`; `nil` is `NULL`.
    ///
    /// - Throws: ``PostgresError`` `.statement` (with its SQLSTATE) when the server refuses it, `.connectionLost`
    ///   when the connection broke, `.invalidParameter` (before anything is sent) for text holding a NUL byte or a
    ///   value over ``PostgresValue/maximumByteCount``, `.closed` after ``close()``.
    @discardableResult
    public func execute(_ sql: String, _ parameters: [PostgresValue?] = []) throws(PostgresError) -> PostgresResult {
        try checkParameters(parameters, sql: sql)
        return try using(executing: true) { connection throws(PostgresError) in
            let result = Self.withParameters(parameters) { types, values, lengths, formats in
                PQexecParams(connection, sql, Int32(parameters.count), types, values, lengths, formats, 0)
            }
            defer { PQclear(result) }
            guard let result else {
                throw failure(connection, result: nil, sql: sql, parameters: parameters)
            }
            let status = PQresultStatus(result)
            guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY else {
                throw failure(connection, result: result, sql: sql, parameters: parameters)
            }
            return PostgresResult(result)
        }
    }

    /// Runs `body` in a transaction: `BEGIN`, then `COMMIT` when it returns, `ROLLBACK` when it throws (and the
    /// error is rethrown).
    ///
    /// - Throws: what `body` threw, or a ``PostgresError``: `BEGIN` or `COMMIT` failed, or `COMMIT` answered
    ///   `ROLLBACK` because a statement inside failed and `body` went on (nothing of the transaction was kept).
    public func transaction<Value>(_ body: () throws -> Value) throws -> Value {
        try execute("BEGIN")
        let value: Value
        do {
            value = try body()
        } catch {
            _ = try? execute("ROLLBACK")
            throw error
        }
        let commit = try execute("COMMIT")
        guard commit.commandTag == "COMMIT" else {
            throw PostgresError(
                .statement, server: server,
                message: "the transaction was rolled back: a statement in it failed (the server answered "
                    + "\(commit.commandTag) to COMMIT)", statement: "COMMIT")
        }
        return value
    }

    /// Runs `body` holding the session-level advisory lock `key` (`pg_advisory_lock`), waiting while another session
    /// holds it, and releases it after (`pg_advisory_unlock`) whether `body` returns or throws. Replicas starting
    /// together take the same lock so that one of them at a time creates or upgrades a schema.
    ///
    /// - Throws: what `body` threw, or a ``PostgresError`` when taking or releasing the lock failed. When the
    ///   connection breaks, the server releases the lock with the session.
    public func withAdvisoryLock<Value>(_ key: Int64, _ body: () throws -> Value) throws -> Value {
        try execute("SELECT pg_advisory_lock($1::bigint)", [.integer(key)])
        let value: Value
        do {
            value = try body()
        } catch {
            _ = try? execute("SELECT pg_advisory_unlock($1::bigint)", [.integer(key)])
            throw error
        }
        let unlocked = try execute("SELECT pg_advisory_unlock($1::bigint)", [.integer(key)])
        guard unlocked.rowCount == 1, unlocked.text(0, 0) == "t" else {
            throw PostgresError(
                .statement, server: server, message: "advisory lock \(key) was not held when it was released",
                statement: "SELECT pg_advisory_unlock($1::bigint)")
        }
        return value
    }

    // MARK: Notifications

    /// Listens to `channel` (`LISTEN`): from now on, ``waitForNotification(timeout:)`` returns what is sent on it.
    ///
    /// - Throws: ``PostgresError`` `.invalidIdentifier` (nothing sent) unless `channel` is a plain lowercase
    ///   identifier, `[a-z_][a-z0-9_]*` of at most 63 bytes, since a channel name is spelled in the SQL.
    public func listen(_ channel: String) throws(PostgresError) {
        try checkIdentifier(channel)
        try execute("LISTEN \(channel)")
    }

    /// Stops listening to `channel` (`UNLISTEN`).
    ///
    /// - Throws: ``PostgresError`` `.invalidIdentifier` as ``listen(_:)`` does.
    public func unlisten(_ channel: String) throws(PostgresError) {
        try checkIdentifier(channel)
        try execute("UNLISTEN \(channel)")
    }

    /// Sends `payload` on `channel` (`pg_notify`, parameterised); inside a transaction it is delivered at `COMMIT`.
    ///
    /// - Throws: ``PostgresError`` `.invalidIdentifier` as ``listen(_:)`` does, `.invalidParameter` for a payload
    ///   over ``maximumPayloadBytes``.
    public func notify(_ channel: String, payload: String = "") throws(PostgresError) {
        try notify(channel, payloads: [payload])
    }

    /// Sends each of `payloads` on `channel` in their order, in one statement (one round trip for them all; none for no
    /// payloads); inside a transaction they are delivered at `COMMIT`.
    ///
    /// - Throws: ``PostgresError`` `.invalidIdentifier` as ``listen(_:)`` does, `.invalidParameter` for a payload
    ///   over ``maximumPayloadBytes`` (nothing is sent).
    public func notify(_ channel: String, payloads: [String]) throws(PostgresError) {
        try checkIdentifier(channel)
        if let payload = payloads.first(where: { $0.utf8.count > Self.maximumPayloadBytes }) {
            throw PostgresError(
                .invalidParameter, server: server,
                message: "a NOTIFY payload of \(payload.utf8.count) bytes is over the limit of "
                    + "\(Self.maximumPayloadBytes); send a key and read the data with a query")
        }
        switch payloads.count {
        case 0: return
        case 1:
            try execute("SELECT pg_notify($1, $2)", [.text(channel), .text(payloads[0])])
            return
        default: break
        }
        try execute(
            """
            SELECT pg_notify($1, payload) FROM unnest($2::text[]) WITH ORDINALITY AS sent(payload, position)
            ORDER BY position
            """, [.text(channel), .text(PostgresValue.arrayLiteral(payloads))])
    }

    /// Waits until a notification arrives on a channel this connection listens to, `timeout` passes, or another
    /// thread calls ``wake()`` or ``close()``, and returns the notification, or `nil` for the other two.
    ///
    /// Notifications already received are returned first, one per call. The wait polls libpq's socket and a wake
    /// pipe together, so a wake returns at once; a ``wake()`` made while no wait runs ends the next one at once.
    ///
    /// - Throws: ``PostgresError`` `.connectionLost` when the connection broke, `.closed` after ``close()``.
    public func waitForNotification(timeout: Duration) throws(PostgresError) -> PostgresNotification? {
        let deadline = ContinuousClock.now + timeout
        return try using { connection throws(PostgresError) -> PostgresNotification? in
            while true {
                guard PQconsumeInput(connection) == 1 else {
                    throw failure(connection, result: nil, sql: nil, parameters: [])
                }
                if let notification = PQnotifies(connection) {
                    defer { PQfreemem(notification) }
                    return PostgresNotification(
                        channel: String(cString: notification.pointee.relname),
                        payload: String(cString: notification.pointee.extra),
                        senderProcessID: notification.pointee.be_pid)
                }
                if wakePipe.drain() { return nil }
                let remaining = ContinuousClock.now.duration(to: deadline)
                guard remaining > .zero else { return nil }
                let socket = PQsocket(connection)
                guard socket >= 0 else { throw failure(connection, result: nil, sql: nil, parameters: []) }
                var descriptors = [
                    pollfd(fd: socket, events: Int16(POLLIN), revents: 0),
                    pollfd(fd: wakePipe.readEnd, events: Int16(POLLIN), revents: 0),
                ]
                let (seconds, attoseconds) = remaining.components
                let milliseconds = min(Int64(Int32.max), seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
                let ready = poll(&descriptors, 2, Int32(milliseconds))
                if ready < 0 && errno != EINTR {
                    throw PostgresError(
                        .connectionLost, server: server, message: "poll failed: \(String(cString: strerror(errno)))")
                }
            }
        }
    }

    /// Ends a running ``waitForNotification(timeout:)`` at once (or the next one, when none runs). Any thread.
    public func wake() { wakePipe.wake() }

    // MARK: Lifecycle

    /// Whether the connection was working after its last operation (libpq's `CONNECTION_OK`) and is not closed. A
    /// server that went away is seen at the next operation, which throws `.connectionLost`.
    public var isAlive: Bool {
        state.withLock { state in
            !state.closeRequested && state.handle != nil && !state.broken
        }
    }

    /// Closes the connection: at once when no operation runs, otherwise as soon as the running one returns. A
    /// running ``waitForNotification(timeout:)`` is woken; a running statement is cancelled (libpq's `PQcancel`, a
    /// request on a new connection to the server) and throws `.closed`. Any thread; later operations throw `.closed`.
    public func close() {
        let idle: Handle? = state.withLock { state in
            state.closeRequested = true
            guard let handle = state.handle else { return nil }
            guard state.inUse else {
                state.handle = nil
                return handle
            }
            // Under the lock, so that the thread running the statement cannot free the cancel handle meanwhile.
            if state.executing, let cancel = handle.cancel {
                var reason = [CChar](repeating: 0, count: 256)
                _ = PQcancel(cancel, &reason, Int32(reason.count))
            }
            return nil
        }
        if let idle {
            idle.finish()
        } else {
            wakePipe.wake()
        }
    }

    // MARK: Internals

    /// Runs `body` with the handle, marked in use so that ``close()`` from another thread leaves it alone until
    /// `body` returns; finishes the connection then when ``close()`` was called meanwhile.
    private func using<Value>(
        executing: Bool = false, _ body: (OpaquePointer) throws(PostgresError) -> Value
    ) throws(PostgresError) -> Value {
        let claim: Result<Handle, PostgresError> = state.withLock { state in
            guard !state.closeRequested, let handle = state.handle else {
                return .failure(PostgresError(.closed, server: server, message: "the connection is closed"))
            }
            precondition(!state.inUse, "a PostgresConnection was used by two threads at once")
            state.inUse = true
            state.executing = executing
            return .success(handle)
        }
        let handle = try claim.get()
        defer {
            let broken = PQstatus(handle.connection) != CONNECTION_OK
            let closing: Handle? = state.withLock { state in
                state.broken = broken
                state.inUse = false
                state.executing = false
                guard state.closeRequested, let handle = state.handle else { return nil }
                state.handle = nil
                return handle
            }
            closing?.finish()
        }
        return try body(handle.connection)
    }

    /// The error for a failed statement or a broken connection: the SQLSTATE and the server's primary message (its
    /// detail can hold row values, so it is left out), with each text parameter the message quotes replaced by its
    /// placeholder.
    private func failure(
        _ connection: OpaquePointer, result: OpaquePointer?, sql: String?, parameters: [PostgresValue?]
    ) -> PostgresError {
        let field = { (code: UInt8) -> String? in
            guard let result, let value = PQresultErrorField(result, Int32(code)) else { return nil }
            return String(cString: value)
        }
        let sqlState = field(UInt8(ascii: "C"))
        var message = field(UInt8(ascii: "M")) ?? String(cString: PQerrorMessage(connection))
        for (index, parameter) in parameters.enumerated() {
            if case .text(let value)? = parameter, !value.isEmpty {
                message = message.replacing("\"\(value)\"", with: "$\(index + 1)")
            }
        }
        if message.isEmpty { message = "libpq reported no reason" }
        if state.withLock({ $0.closeRequested }) {
            return PostgresError(
                .closed, server: server, message: "the connection was closed while the statement ran: \(message)",
                sqlState: sqlState, statement: sql)
        }
        let lost = PQstatus(connection) != CONNECTION_OK
        return PostgresError(
            lost ? .connectionLost : .statement, server: server, message: message, sqlState: sqlState,
            statement: sql)
    }

    private func checkParameters(_ parameters: [PostgresValue?], sql: String) throws(PostgresError) {
        guard parameters.count <= Int(UInt16.max) else {
            throw PostgresError(
                .invalidParameter, server: server,
                message: "\(parameters.count) parameters, over the protocol's limit of \(UInt16.max)", statement: sql)
        }
        for (index, parameter) in parameters.enumerated() {
            switch parameter {
            case .text(let text)? where text.utf8.contains(0):
                throw PostgresError(
                    .invalidParameter, server: server,
                    message: "parameter $\(index + 1) is text holding a NUL byte; send it as bytes (bytea)",
                    statement: sql)
            case .text(let text)? where text.utf8.count > PostgresValue.maximumByteCount:
                throw oversized(index)
            case .bytes(let bytes)? where bytes.count > PostgresValue.maximumByteCount:
                throw oversized(index)
            default: break
            }
        }
        func oversized(_ index: Int) -> PostgresError {
            PostgresError(
                .invalidParameter, server: server,
                message: "parameter $\(index + 1) is over \(PostgresValue.maximumByteCount) bytes, the largest "
                    + "field PostgreSQL accepts", statement: sql)
        }
    }

    private func checkIdentifier(_ name: String) throws(PostgresError) {
        let bytes = Array(name.utf8)
        let valid =
            !bytes.isEmpty && bytes.count <= 63 && !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[0])
            && bytes.allSatisfy {
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "_")
            }
        guard valid else {
            throw PostgresError(
                .invalidIdentifier, server: server,
                message: "'\(name)' is not a plain identifier: use 1 to 63 of a-z, 0-9 and _, not starting with a digit"
            )
        }
    }

    /// Calls `body` with libpq's four parameter arrays (types, values, lengths, formats), all pointing into one
    /// buffer that lives for the call. Text is NUL-terminated with type 0 (inferred); bytes are binary `bytea` (17).
    private static func withParameters<Value>(
        _ parameters: [PostgresValue?],
        _ body: (
            UnsafePointer<Oid>?, UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?
        ) -> Value
    ) -> Value {
        // One leading byte so that an empty value still has an address (a null pointer would mean NULL).
        var storage: [UInt8] = [0]
        var offsets: [Int?] = []
        var types: [Oid] = []
        var lengths: [Int32] = []
        var formats: [Int32] = []
        for parameter in parameters {
            switch parameter {
            case nil:
                offsets.append(nil)
                types.append(0)
                lengths.append(0)
                formats.append(0)
            case .text(let text)?:
                offsets.append(storage.count)
                storage.append(contentsOf: text.utf8)
                storage.append(0)
                types.append(0)
                lengths.append(0)
                formats.append(0)
            case .bytes(let bytes)?:
                offsets.append(storage.count)
                storage.append(contentsOf: bytes)
                types.append(17)
                lengths.append(Int32(bytes.count))
                formats.append(1)
            }
        }
        return storage.withUnsafeBufferPointer { buffer in
            let base = UnsafeRawPointer(buffer.baseAddress!)
            let values: [UnsafePointer<CChar>?] = offsets.map {
                $0.map { (base + $0).assumingMemoryBound(to: CChar.self) }
            }
            return types.withUnsafeBufferPointer { types in
                values.withUnsafeBufferPointer { values in
                    lengths.withUnsafeBufferPointer { lengths in
                        formats.withUnsafeBufferPointer { formats in
                            body(types.baseAddress, values.baseAddress, lengths.baseAddress, formats.baseAddress)
                        }
                    }
                }
            }
        }
    }

    /// Calls `body` with `strings` as a NULL-terminated array of C strings.
    private static func withCStrings<Value>(
        _ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> Value
    ) -> Value {
        let copies = strings.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        let pointers = copies.map { UnsafePointer($0) } + [nil]
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}
