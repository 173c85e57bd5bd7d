public import AASACore
internal import CMicroHTTPD

/// A route table, the native forms of the responses every domain sends alike, and the cache of the others' forms.
///
/// Immutable. Several listeners can serve one snapshot (``HTTPListener/init(configuration:snapshot:)``), so
/// the HTTPS and the plain HTTP listener share each native response between them. The access handler
/// retains the current snapshot for the length of one handler call, so a concurrent
/// ``HTTPListener/replaceRoutes(_:)`` never frees responses being looked up.
///
/// The native forms live in the prepared responses themselves (``PreparedResponse/transportForm(secure:as:)``). Those
/// every domain sends alike are built when their table is swapped in and kept as long as their response; each
/// domain's own are built when it is first asked for and kept by the ``ResponseCache`` the snapshot hands on to the
/// next one: at 100,000 domains, every domain's association file and assetlinks.json built ahead would hold about
/// 124 MB of libmicrohttpd responses, most of them for names nobody asks for in an hour.
public final class RouteSnapshot: Sendable {
    /// The router.
    let table: any RouteTable
    /// The forms of each domain's own responses, kept for the requests to come.
    public let cache: ResponseCache
    /// The native forms of the responses every domain sends alike (``PreparedResponse/isCommon``), by response,
    /// plain and TLS: each is built once for all domains, and handed on to the next snapshot.
    private let common: [Response: NativeResponse]
    private let commonSecure: [Response: NativeResponse]

    /// Checks that libmicrohttpd would build each new response in `table.preparedResponses`
    /// (``NativeResponse/refusal(of:)``) and builds those every domain sends alike, found in `previous` or built once
    /// here. `cache` keeps the others' forms once they are asked for: `previous`'s unless given, a new one of the
    /// default capacity for the first snapshot.
    ///
    /// - Throws: ``HTTPListenerError`` `invalid-response` when a response cannot be built.
    public init(_ table: some RouteTable, previous: RouteSnapshot? = nil, cache: ResponseCache? = nil) throws {
        self.table = table
        self.cache = cache ?? previous?.cache ?? ResponseCache()
        var common = previous?.common ?? [:]
        var commonSecure = previous?.commonSecure ?? [:]
        var own: [PreparedResponse] = []
        for prepared in table.preparedResponses {
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
        // Each domain's own responses are independent of the others': a full table's are checked on every processor.
        let check = { @Sendable (prepared: PreparedResponse) -> HTTPListenerError? in
            NativeResponse.refusal(of: prepared.response)
        }
        let refusals = own.count < Self.concurrentFrom ? own.map(check) : own.concurrentMap(check)
        if let refusal = refusals.lazy.compactMap({ $0 }).first { throw refusal }
        self.common = common
        self.commonSecure = commonSecure
    }

    /// From how many responses a snapshot checks them on every processor rather than on the calling thread (a
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

    /// Queues the native form of `response` on `connection`: the one kept, or one built now (``ResponseCache``);
    /// `nil` when it cannot be built.
    @inline(__always)
    func queue(_ response: PreparedResponse, secure: Bool, on connection: OpaquePointer) -> MHD_Result? {
        cache.native(for: response, secure: secure)?.queue(on: connection)
    }
}
