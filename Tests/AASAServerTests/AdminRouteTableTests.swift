import AASACore
import AASATestSupport
import Foundation
import Testing

@testable import AASAServer

/// The admin routes are closed by default: every route is declared once in `AdminRoute.table` with its access, only
/// the probes and the dashboard page are open, a path not in the table is 404, and with a token set every other
/// route of the table answers 401 without it, checked against a real server for each route the table holds, so a
/// route added to it is covered without a new test.
@Suite(.serialized) struct AdminRouteTableTests {
    static let openPaths: Set<String> = ["/", "/healthz", "/readyz"]
    static let token = "t0k-admin"

    @Test func onlyTheProbesAndTheDashboardAreOpenAndOnlyTheProbesAnswerCrossSite() {
        #expect(AdminRoute.byPath.count == AdminRoute.table.count, "each path is declared once")
        #expect(Set(AdminRoute.table.filter { $0.access == .open }.map(\.path)) == Self.openPaths)
        #expect(Set(AdminRoute.table.filter(\.answersCrossSite).map(\.path)) == ["/healthz", "/readyz"])
        // Every route reads (GET, HEAD) but the one action, which only POST reaches.
        for route in AdminRoute.table {
            #expect(route.methods == (route.path == "/acme/retry" ? [.post] : [.get, .head]), "\(route.path)")
        }
    }

    @Test(arguments: AdminRoute.table.map(\.path) + ["/nothing-here"])
    func withATokenEveryRouteButTheOpenOnesNeedsIt(path: String) {
        let access = AdminAccess(token: Array(Self.token.utf8))
        let verdict = Array("localhost".utf8).withUnsafeBytes { host in
            access.verdict(path: path, host: host, authorization: nil)
        }
        let needsToken = AdminRoute.byPath[path].map { $0.access == .token } ?? false
        #expect(verdict == (needsToken ? .unauthorized : .allowed), "\(path)")
    }

    /// A real server with a token: each route of the table answers 401 without it unless open, and something else
    /// with it; a path not in the table is 404 either way; a method a route does not list is 404.
    @Test func aRealServerWithATokenRefusesEveryTokenRouteAndAnswers404OutsideTheTable() throws {
        let live = try LiveServer(configure: { $0.adminAccess = AdminAccess(token: Array(Self.token.utf8)) })
        let base = "http://127.0.0.1:\(live.admin)"
        let bearer = ["Authorization: Bearer \(Self.token)"]
        for route in AdminRoute.table {
            // A method the route declares, and one it does not.
            let (method, undeclared) = route.methods.contains(.get) ? ("GET", "POST") : ("POST", "GET")
            let without = try Curl.request(base + route.path, method: method)
            let with = try Curl.request(base + route.path, method: method, headers: bearer)
            if route.access == .token {
                #expect(without.status == 401, "\(route.path)")
                #expect(without.headers["www-authenticate"] == "Bearer", "\(route.path)")
            } else {
                #expect(without.status == 200, "\(route.path)")
            }
            #expect(with.status != 401 && with.status != 404, "\(route.path): \(with.status)")
            #expect(
                try Curl.request(base + route.path, method: undeclared, headers: bearer).status == 404, "\(route.path)")
        }
        for path in ["/nothing-here", "/status/", "/STATUS", "/metrics.txt"] {
            #expect(try Curl.request(base + path).status == 404, "\(path)")
            #expect(try Curl.request(base + path, headers: bearer).status == 404, "\(path)")
        }
    }

    /// docs/operations.md's admin table documents exactly the routes of `AdminRoute.table`.
    @Test func theOperationsGuideListsEveryRouteOfTheTable() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("docs/operations.md"), encoding: .utf8)
        let section = try #require(text.components(separatedBy: "## Admin listener").dropFirst().first)
        let rows = section.components(separatedBy: "\n\n").first { $0.hasPrefix("| Path |") } ?? ""
        let documented = rows.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("| `/") else { return nil }
            let cell = line.dropFirst(3).prefix { $0 != "`" }
            return String(cell.prefix { $0 != "?" })
        }
        #expect(Set(documented) == Set(AdminRoute.table.map(\.path)))
        #expect(documented.count == AdminRoute.table.count)
    }
}
