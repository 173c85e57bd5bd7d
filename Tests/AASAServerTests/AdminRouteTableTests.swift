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
        // Every route reads (GET, HEAD) but the one action, which only POST reaches, and the tenant API, whose token
        // scopes decide who writes and which answers any other method with its 405.
        for route in AdminRoute.table {
            let expected: Set<RequestMethod> =
                switch route.path {
                case "/acme/retry": [.post]
                case "/api/v1/": [.get, .head, .post, .put, .delete, .other]
                default: [.get, .head]
                }
            #expect(route.methods == expected, "\(route.path)")
        }
        // The API is the one prefix route.
        #expect(AdminRoute.table.filter(\.isPrefix).map(\.path) == ["/api/v1/"])
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
            // A method the route declares, and one it does not; a prefix route is asked for a path under it.
            let method = route.methods.contains(.get) ? "GET" : "POST"
            let undeclared = route.methods.contains(.post) ? "PATCH" : route.methods.contains(.get) ? "POST" : "GET"
            let path = route.isPrefix ? route.path + "openapi.json" : route.path
            let without = try Curl.request(base + path, method: method)
            let with = try Curl.request(base + path, method: method, headers: bearer)
            if route.access == .token {
                #expect(without.status == 401, "\(route.path)")
                #expect(without.headers["www-authenticate"] == "Bearer", "\(route.path)")
            } else {
                #expect(without.status == 200, "\(route.path)")
            }
            #expect(with.status != 401, "\(route.path): \(with.status)")
            // The API is 404 while the server has no handler for it (AdminAPITransportTests covers what reaches one).
            if route.handler != .api { #expect(with.status != 404, "\(route.path): \(with.status)") }
            // The API answers any method, with 405 and Allow for one its route does not take.
            let refused = try Curl.request(base + path, method: undeclared, headers: bearer)
            #expect(refused.status == (route.handler == .api ? 405 : 404), "\(route.path)")
            if route.handler == .api { #expect(refused.headers["allow"] == "GET, HEAD", "\(route.path)") }
        }
        for path in ["/nothing-here", "/status/", "/STATUS", "/metrics.txt", "/api/v1", "/api/v2/domains", "/API/v1/x"]
        {
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
