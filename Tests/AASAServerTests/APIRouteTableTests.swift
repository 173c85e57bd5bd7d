import AASACore
import AASATestSupport
import Foundation
import Testing

@testable import AASAServer

/// The tenant API's routes are declared once (`APIRoute.table`): the OpenAPI document and docs/api.md list the same
/// paths and methods, only GET and HEAD take a read token, and each body cap comes from the route the path's shape
/// names.
@Suite struct APIRouteTableTests {
    /// The table's operations, `METHOD /api/v1/path`, HEAD left out (the documents list GET).
    static let declared = Set(
        APIRoute.table.flatMap { route in
            route.methods.filter { $0.method != .head }.map { "\($0.method.name) \(APIRoute.prefix)\(route.path)" }
        })

    @Test func theOpenAPIDocumentListsTheTablesOperations() throws {
        let document = try JSONSerialization.jsonObject(with: Data(PackageResources.openapi_json)) as? [String: Any]
        let paths = try #require(document?["paths"] as? [String: [String: Any]])
        var listed: Set<String> = []
        for (path, operations) in paths {
            for method in operations.keys where ["get", "put", "delete", "post"].contains(method) {
                listed.insert("\(method.uppercased()) \(path)")
            }
        }
        #expect(listed == Self.declared)
    }

    @Test func docsAPIHasASectionForEachOperation() throws {
        let text = try String(contentsOfFile: RepositoryPaths.root + "/docs/api.md", encoding: .utf8)
        let sections = Set(
            text.split(separator: "\n").filter { $0.hasPrefix("## `") }.map { line in
                String(line.dropFirst(4).prefix { $0 != "`" && $0 != "?" })
            })
        #expect(sections == Self.declared.subtracting(["GET /api/v1/openapi.json"]))
    }

    @Test func onlyReadsTakeAReadTokenAndOnlyPutsTakeABody() {
        for route in APIRoute.table {
            for method in route.methods {
                #expect(
                    (method.scope == .read) == [.get, .head].contains(method.method),
                    "\(method.method.name) \(route.path)")
                #expect((method.body != .none) == (method.method == .put), "\(method.method.name) \(route.path)")
            }
        }
    }

    @Test(arguments: [
        (RequestMethod.put, "/api/v1/domains/shop.example", SiteConfigLoader.maximumConfigBytes),
        (.put, "/api/v1/domains/shop.example/pages/index.html", PageLoader().maximumFileBytes),
        (.put, "/api/v1/domains/shop.example/pages/a/b/c.css", PageLoader().maximumFileBytes),
        (.put, "/api/v1/domains/shop.example/pages/_landing.html", PageLoader().maximumTemplateBytes),
        // A bad name gets its 400 after a body within the cap, not a 413: the cap goes by the path's shape.
        (.put, "/api/v1/domains/NOT A NAME", SiteConfigLoader.maximumConfigBytes),
        (.get, "/api/v1/domains/shop.example", 0),
        (.delete, "/api/v1/domains/shop.example", 0),
        (.post, "/api/v1/domains/shop.example/history/abc/restore", 0),
        (.put, "/api/v1/domains/", 0),
        (.put, "/api/v1/domains/shop.example/", 0),
        (.put, "/api/v1/domains/shop.example/pages/", 0),
        (.put, "/api/v1/domains//pages/a", 0),
        (.put, "/api/v1/caller", 0),
        (.put, "/elsewhere/domains/shop.example", 0),
    ])
    func bodyCapsFollowTheRouteThePathNames(method: RequestMethod, path: String, bytes: Int) {
        #expect(APIRoute.maximumBodyBytes(method: method, path: path) == bytes)
    }

    @Test(arguments: [
        ("/api/v1/domains/shop.example/history/abc1/restore", "restore"),
        ("/api/v1/domains/shop.example/pages/a/b.css", "page a/b.css"),
        ("/api/v1/domains/Bad_Name/unknown", "400"),
        ("/api/v1/domains/shop.example/history/NOT-A-REVISION", "400"),
        ("/api/v1/domains/shop.example/history/", "400"),
        ("/api/v1/domains/shop.example/unknown", "404"),
        ("/api/v1/caller/", "404"),
        ("/api/v2/caller", "404"),
    ])
    func aPathMatchesItsRouteOrIsRefused(path: String, expected: String) {
        switch APIRoute.match(path) {
        case .accepted(let match):
            switch match.handler {
            case .restore(let name, let revision):
                #expect("restore" == expected && name == "shop.example" && revision == "abc1")
            case .page(_, let page): #expect("page \(page)" == expected)
            default: Issue.record("\(path): \(match.handler)")
            }
        case .refused(let refusal): #expect("\(refusal.status)" == expected, "\(path)")
        }
    }
}
