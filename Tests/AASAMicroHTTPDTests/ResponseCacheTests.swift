import AASACore
import AASATestSupport
import CMicroHTTPD
import Foundation
import Testing

@testable import AASAMicroHTTPD

/// Each domain's native responses are built when first asked for and kept by a bounded cache (CLOCK); the route
/// snapshot checks them when its table is swapped in, as libmicrohttpd would.
@Suite struct ResponseCacheTests {
    /// `count` distinct 200 responses, each with an ETag naming it, and HSTS over TLS with `https`.
    static func responses(_ count: Int, https: Bool = false) -> [PreparedResponse] {
        (0..<count).map { index in
            PreparedResponse(
                Response(
                    status: 200, headers: [HTTPHeader("ETag", "\"\(index)\"")], body: Array("body \(index)".utf8),
                    httpsOnlyHeaders: https ? [HTTPHeader("Strict-Transport-Security", "max-age=60")] : []))
        }
    }

    /// Whether `response` has a native form kept for `secure` (asking marks it sent, as a request does).
    static func isKept(_ response: PreparedResponse, secure: Bool = false) -> Bool {
        response.transportForm(secure: secure, as: NativeResponse.self) != nil
    }

    /// The ETag libmicrohttpd holds in `native`: reads the response's own memory.
    static func etag(of native: NativeResponse) -> String? {
        MHD_get_response_header(native.pointer, "ETag").map { String(cString: $0) }
    }

    @Test func keepsAtMostItsCapacityLettingGoOfOneNotAskedForSinceTheLastSweep() throws {
        let cache = ResponseCache(capacity: 3)
        let responses = Self.responses(5)
        for response in responses.prefix(3) { #expect(cache.native(for: response, secure: false) != nil) }
        #expect(cache.figures == ResponseCache.Figures(builds: 3, evictions: 0, count: 3))
        // Asked for again: kept, nothing built.
        let again = try #require(cache.native(for: responses[2], secure: false))
        #expect(Self.etag(of: again) == "\"2\"" && cache.figures.builds == 3)
        // A fourth needs room: every form was sent since it was built, so the sweep unmarks them all and lets go of
        // the first, 0.
        #expect(cache.native(for: responses[3], secure: false) != nil)
        #expect(cache.figures == ResponseCache.Figures(builds: 4, evictions: 1, count: 3))
        // 2 is asked for again, 1 is not: a fifth takes 1's place.
        _ = cache.native(for: responses[2], secure: false)
        #expect(cache.native(for: responses[4], secure: false) != nil)
        #expect(cache.figures == ResponseCache.Figures(builds: 5, evictions: 2, count: 3))
        #expect((0..<5).map { Self.isKept(responses[$0]) } == [false, false, true, true, true])
        // 1 asked for again is built again, and sent the same.
        let rebuilt = try #require(cache.native(for: responses[1], secure: false))
        #expect(Self.etag(of: rebuilt) == "\"1\"" && rebuilt.status == 200)
        #expect(cache.figures == ResponseCache.Figures(builds: 6, evictions: 3, count: 3))
    }

    @Test func tlsFormsAreKeptApartOnlyWhenTLSSendsMoreHeaders() throws {
        let cache = ResponseCache(capacity: 10)
        let plain = Self.responses(1)[0]
        let plainOverTLS = try #require(cache.native(for: plain, secure: true))
        // Without HTTPS-only headers, one form serves both.
        #expect(cache.native(for: plain, secure: false) === plainOverTLS)
        let hsts = Self.responses(1, https: true)[0]
        let secure = try #require(cache.native(for: hsts, secure: true))
        let insecure = try #require(cache.native(for: hsts, secure: false))
        #expect(secure !== insecure)
        #expect(MHD_get_response_header(secure.pointer, "Strict-Transport-Security") != nil)
        #expect(MHD_get_response_header(insecure.pointer, "Strict-Transport-Security") == nil)
        #expect(cache.figures == ResponseCache.Figures(builds: 3, evictions: 0, count: 3))
    }

    @Test func aCapacityOfZeroBuildsForEveryRequestAndKeepsNone() throws {
        let cache = ResponseCache(capacity: 0)
        let response = Self.responses(1)[0]
        for _ in 0..<3 { #expect(try #require(cache.native(for: response, secure: false)).status == 200) }
        #expect(cache.figures == ResponseCache.Figures(builds: 3, evictions: 0, count: 0))
        #expect(!Self.isKept(response))
    }

    @Test func responsesAReloadDroppedLeaveTheirPlacesToNewOnes() {
        let cache = ResponseCache(capacity: 4)
        var old = Self.responses(4)
        for response in old { _ = cache.native(for: response, secure: false) }
        #expect(cache.figures.count == 4)
        old.removeAll()
        #expect(cache.figures.count == 0)
        let new = Self.responses(4)
        for response in new { _ = cache.native(for: response, secure: false) }
        // Their places were free: nothing let go.
        #expect(cache.figures == ResponseCache.Figures(builds: 8, evictions: 0, count: 4))
        #expect(new.allSatisfy { Self.isKept($0) })
    }

    /// Threads asking for many responses through a cache far smaller than them: forms are let go while other threads
    /// hold and read them, and each thread still reads the bytes of the response it asked for.
    @Test func formsLetGoWhileOtherThreadsHoldThemStayWhole() async {
        let cache = ResponseCache(capacity: 8)
        let responses = Self.responses(64)
        let mismatches = await withTaskGroup(of: Int.self) { group in
            for thread in 0..<4 {
                group.addTask {
                    var random = SeededRandomNumberGenerator(seed: UInt64(thread + 1))
                    var mismatches = 0
                    for _ in 0..<20_000 {
                        let index = Int.random(in: 0..<responses.count, using: &random)
                        let native = cache.native(for: responses[index], secure: false)
                        if native.flatMap(Self.etag(of:)) != "\"\(index)\"" { mismatches += 1 }
                    }
                    return mismatches
                }
            }
            return await group.reduce(0, +)
        }
        #expect(mismatches == 0)
        let figures = cache.figures
        #expect(figures.count <= 8 && figures.evictions > 0)
        // Two threads may build the same form at once: one is kept, the other sent once and dropped.
        #expect(figures.builds - figures.evictions >= figures.count)
    }

    /// The snapshot's check (``NativeResponse/refusal(of:)``) accepts exactly the headers libmicrohttpd accepts
    /// (a NUL, which Swift's strings hold and C's end at, it refuses too).
    @Test(arguments: [
        ("X-A", "b"), ("X-A", ""), ("", "b"), ("X A", "b"), ("X\tA", "b"), ("X\rA", "b"), ("X\nA", "b"),
        ("X-A", "b\r\nInjected: 1"), ("X-A", "b\nc"), ("X-A", "b\rc"), ("X-A", "b\tc"), ("X-A", " b"),
        ("Content-Length", "5"), ("content-length", "5"), ("Connection", "close"), ("Connection", "keep-alive"),
        ("Transfer-Encoding", "identity"), ("Date", "Mon, 01 Jan 2024 00:00:00 GMT"), ("ETag", "\"x\""),
        ("Cache-Control", "public, max-age=3600"),
    ])
    func theSnapshotsCheckAcceptsWhatLibmicrohttpdBuilds(name: String, value: String) {
        let response = Response(status: 200, headers: [HTTPHeader(name, value)])
        let built = (try? NativeResponse(response)) != nil
        #expect((NativeResponse.refusal(of: response) == nil) == built, "'\(name): \(value)'")
    }

    @Test func aSnapshotRefusesAResponseLibmicrohttpdWouldNotBuildWithoutBuildingAny() throws {
        struct Routes: RouteTable {
            let preparedResponses: [PreparedResponse]
            func route(_ request: some HTTPRequest) -> RouteDecision { .prepared(preparedResponses[0]) }
        }
        let good = Self.responses(3)
        let error = #expect(throws: HTTPListenerError.self) {
            try RouteSnapshot(
                Routes(
                    preparedResponses: good + [PreparedResponse(Response(status: 200, headers: [HTTPHeader("X", "")]))])
            )
        }
        #expect(error?.code == .invalidResponse)
        let snapshot = try RouteSnapshot(Routes(preparedResponses: good))
        // Checked, not built: a domain's responses are built when first asked for.
        #expect(!good.contains { Self.isKept($0) })
        #expect(snapshot.cache.figures.builds == 0)
    }
}
