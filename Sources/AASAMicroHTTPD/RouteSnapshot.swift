public import AASACore
internal import CMicroHTTPD

/// A route table whose new prepared responses have their native forms built.
///
/// Immutable. Several listeners can serve one snapshot (``HTTPListener/init(configuration:snapshot:)``), so
/// the HTTPS and the plain HTTP listener build each native response once between them. The access handler
/// retains the current snapshot for the length of one handler call, so a concurrent
/// ``HTTPListener/replaceRoutes(_:)`` never frees responses being looked up.
///
/// The native forms live in the prepared responses themselves (``PreparedResponse/transportForm(secure:make:)``):
/// a table made from the previous one (a reload that changed a few domains) lists only its new responses, and
/// the snapshot builds only theirs; every other response keeps the forms it has.
public final class RouteSnapshot: Sendable {
    /// The router.
    let table: any RouteTable
    /// The native forms of the responses every domain sends alike (``PreparedResponse/isCommon``), by response,
    /// plain and TLS: each is built once for all domains, and handed on to the next snapshot.
    private let common: [Response: NativeResponse]
    private let commonSecure: [Response: NativeResponse]

    /// Builds the native form of every 200 response in `table.preparedResponses` (both forms when it has HTTPS-only
    /// headers): the bodies clients come for. Responses every domain sends alike share one form, found in
    /// `previous` or built once here. The others (a file's 304, which most domains are never asked for) are built
    /// on first use: at 100,000 domains they would hold about 90 MB of libmicrohttpd responses for nothing.
    ///
    /// - Throws: ``HTTPListenerError`` `invalid-response` when a response cannot be built.
    public init(_ table: some RouteTable, previous: RouteSnapshot? = nil) throws {
        self.table = table
        var common = previous?.common ?? [:]
        var commonSecure = previous?.commonSecure ?? [:]
        var own: [PreparedResponse] = []
        for prepared in table.preparedResponses where prepared.status == 200 || prepared.isCommon {
            guard prepared.isCommon else {
                own.append(prepared)
                continue
            }
            let response = prepared.response
            let plain = try prepared.transportForm(secure: false) {
                try Self.form(response, secure: false, in: &common)
            }
            _ = try prepared.transportForm(secure: true) {
                response.httpsOnlyHeaders.isEmpty
                    ? plain : try Self.form(response, secure: true, in: &commonSecure)
            }
        }
        // Each domain's own responses are independent of the others': a full table's are built on every processor.
        let build = { @Sendable (prepared: PreparedResponse) -> HTTPListenerError? in
            do {
                let plain = try prepared.transportForm(secure: false) {
                    try NativeResponse(prepared.response, secure: false)
                }
                _ = try prepared.transportForm(secure: true) {
                    prepared.response.httpsOnlyHeaders.isEmpty
                        ? plain : try NativeResponse(prepared.response, secure: true)
                }
                return nil
            } catch {
                return error as? HTTPListenerError ?? HTTPListenerError(.invalidResponse, "\(error)")
            }
        }
        let failures = own.count < Self.concurrentFrom ? own.map(build) : own.concurrentMap(build)
        if let failure = failures.lazy.compactMap({ $0 }).first { throw failure }
        self.common = common
        self.commonSecure = commonSecure
    }

    /// From how many responses a snapshot builds them on every processor rather than on the calling thread (a
    /// reload of a few domains is quicker without handing work to other threads).
    static let concurrentFrom = 256

    /// The native form of a common `response`: the form already built for an identical response, or a new one.
    private static func form(_ response: Response, secure: Bool, in built: inout [Response: NativeResponse]) throws
        -> NativeResponse
    {
        if let same = built[response] { return same }
        let made = try NativeResponse(response, secure: secure)
        built[response] = made
        return made
    }

    /// Queues the native form of `response` on `connection`, building it first if it has none yet (a response
    /// made after the table, such as a page rendered for one URL); `nil` when it cannot be built.
    @inline(__always)
    func queue(_ response: PreparedResponse, secure: Bool, on connection: OpaquePointer) -> MHD_Result? {
        if let native = response.transportForm(secure: secure, as: NativeResponse.self) {
            return native.queue(on: connection)
        }
        let built = try? response.transportForm(secure: secure) {
            try NativeResponse(response.response, secure: secure)
        }
        return built?.queue(on: connection)
    }
}
