internal import AASACore

/// A route table with a native response built for each of its prepared responses.
///
/// Immutable. The access handler retains the current snapshot for the length of one handler call,
/// so a concurrent ``HTTPListener/replaceRoutes(_:)`` never frees responses being looked up.
final class RouteSnapshot: Sendable {
    /// The router.
    let table: any RouteTable
    /// The table's prepared responses, by id (kept to check that a `.prepared` decision belongs to this table).
    let prepared: [PreparedResponse]
    /// Native response per prepared response id.
    let native: [NativeResponse]

    /// Builds every native response once, for a TLS listener when `secure`.
    init(_ table: some RouteTable, secure: Bool) throws {
        self.table = table
        let prepared = table.preparedResponses
        var native: [NativeResponse] = []
        native.reserveCapacity(prepared.count)
        for (index, response) in prepared.enumerated() {
            guard response.id == index else {
                throw HTTPListenerError(
                    .invalidResponse,
                    "prepared response at position \(index) has id \(response.id); ids must be dense and in order")
            }
            native.append(try NativeResponse(response.response, secure: secure))
        }
        self.prepared = prepared
        self.native = native
    }

    /// The native response for `response` if it belongs to this table.
    @inline(__always)
    func nativeResponse(for response: PreparedResponse) -> NativeResponse? {
        let id = response.id
        guard id >= 0, id < native.count, prepared[id] === response else { return nil }
        return native[id]
    }
}
