public import AASACore
internal import CMicroHTTPD

/// A route table with a native response built for each of its prepared responses.
///
/// Immutable. Several listeners can serve one snapshot (``HTTPListener/init(configuration:snapshot:)``), so
/// the HTTPS and the plain HTTP listener build each native response once between them. The access handler
/// retains the current snapshot for the length of one handler call, so a concurrent
/// ``HTTPListener/replaceRoutes(_:)`` never frees responses being looked up.
public final class RouteSnapshot: Sendable {
    /// What the access handler reads for one prepared response, kept side by side in one array so a request
    /// touches one entry rather than three arrays and an object (at thousands of domains each is a cache miss).
    ///
    /// `@unchecked Sendable` for the same reason as ``NativeResponse``: the responses are never changed once
    /// built, and libmicrohttpd queues one response on many connections from many threads.
    struct Entry: @unchecked Sendable {
        /// The prepared response's identity, to check that a `.prepared` decision belongs to this table.
        let prepared: ObjectIdentifier
        /// The `MHD_Response` for plain HTTP, owned by one of ``owners``.
        let plain: OpaquePointer
        /// The `MHD_Response` for TLS: the plain one unless the response has HTTPS-only headers (HSTS,
        /// RFC 6797 §7.2: never sent over plain HTTP).
        let secure: OpaquePointer
        let status: UInt32
    }

    /// The router.
    let table: any RouteTable
    /// The table's prepared responses, kept alive for ``entries``.
    let prepared: [PreparedResponse]
    /// One entry per prepared response id.
    let entries: [Entry]
    /// Every native response the entries point into, each once.
    let owners: [NativeResponse]

    /// Builds every native response once; prepared responses with identical status, headers and body (every
    /// domain's 404 and 405) share one, as libmicrohttpd responses are immutable and reference-counted.
    ///
    /// - Throws: ``HTTPListenerError`` `invalid-response` when ids are not dense or a response cannot be built.
    public init(_ table: some RouteTable) throws {
        self.table = table
        let prepared = table.preparedResponses
        var entries: [Entry] = []
        entries.reserveCapacity(prepared.count)
        var built: [Response: NativeResponse] = [:]
        var builtSecure: [Response: NativeResponse] = [:]
        for (index, response) in prepared.enumerated() {
            guard response.id == index else {
                throw HTTPListenerError(
                    .invalidResponse,
                    "prepared response at position \(index) has id \(response.id); ids must be dense and in order")
            }
            let plain = try Self.shared(response.response, secure: false, in: &built)
            let secure =
                response.response.httpsOnlyHeaders.isEmpty
                ? plain : try Self.shared(response.response, secure: true, in: &builtSecure)
            entries.append(
                Entry(
                    prepared: ObjectIdentifier(response), plain: plain.pointer, secure: secure.pointer,
                    status: plain.status))
        }
        self.prepared = prepared
        self.entries = entries
        owners = Array(built.values) + Array(builtSecure.values)
    }

    /// The native response already built for an identical `response`, else a new one remembered in `built`.
    private static func shared(
        _ response: Response, secure: Bool, in built: inout [Response: NativeResponse]
    ) throws -> NativeResponse {
        if let same = built[response] { return same }
        let made = try NativeResponse(response, secure: secure)
        built[response] = made
        return made
    }

    /// Queues the native response built for `response` on `connection`; `nil` when `response` is not one of
    /// this table's.
    @inline(__always)
    func queue(_ response: PreparedResponse, secure: Bool, on connection: OpaquePointer) -> MHD_Result? {
        let id = response.id
        guard id >= 0, id < entries.count else { return nil }
        return entries.withUnsafeBufferPointer { entries in
            let entry = entries[id]
            guard entry.prepared == ObjectIdentifier(response) else { return nil }
            return MHD_queue_response(connection, entry.status, secure ? entry.secure : entry.plain)
        }
    }
}
