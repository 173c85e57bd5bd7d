public import AASACore

/// A route table with a native response built for each of its prepared responses.
///
/// Immutable. Several listeners can serve one snapshot (``HTTPListener/init(configuration:snapshot:)``), so
/// the HTTPS and the plain HTTP listener build each native response once between them. The access handler
/// retains the current snapshot for the length of one handler call, so a concurrent
/// ``HTTPListener/replaceRoutes(_:)`` never frees responses being looked up.
public final class RouteSnapshot: Sendable {
    /// The router.
    let table: any RouteTable
    /// The table's prepared responses, by id (kept to check that a `.prepared` decision belongs to this table).
    let prepared: [PreparedResponse]
    /// Native response per prepared response id, for plain HTTP.
    let native: [NativeResponse]
    /// Native response per prepared response id, for TLS: the same object as in ``native`` unless the response
    /// has HTTPS-only headers (HSTS, RFC 6797 §7.2: never sent over plain HTTP).
    let secureNative: [NativeResponse]

    /// Builds every native response once; prepared responses with identical status, headers and body (every
    /// domain's 404 and 405) share one, as libmicrohttpd responses are immutable and reference-counted.
    ///
    /// - Throws: ``HTTPListenerError`` `invalid-response` when ids are not dense or a response cannot be built.
    public init(_ table: some RouteTable) throws {
        self.table = table
        let prepared = table.preparedResponses
        var native: [NativeResponse] = []
        var secureNative: [NativeResponse] = []
        native.reserveCapacity(prepared.count)
        secureNative.reserveCapacity(prepared.count)
        var built: [Response: NativeResponse] = [:]
        var builtSecure: [Response: NativeResponse] = [:]
        for (index, response) in prepared.enumerated() {
            guard response.id == index else {
                throw HTTPListenerError(
                    .invalidResponse,
                    "prepared response at position \(index) has id \(response.id); ids must be dense and in order")
            }
            let plain = try Self.shared(response.response, secure: false, in: &built)
            native.append(plain)
            secureNative.append(
                response.response.httpsOnlyHeaders.isEmpty
                    ? plain : try Self.shared(response.response, secure: true, in: &builtSecure))
        }
        self.prepared = prepared
        self.native = native
        self.secureNative = secureNative
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

    /// The native response for `response` if it belongs to this table.
    @inline(__always)
    func nativeResponse(for response: PreparedResponse, secure: Bool) -> NativeResponse? {
        let id = response.id
        guard id >= 0, id < native.count, prepared[id] === response else { return nil }
        return secure ? secureNative[id] : native[id]
    }
}
