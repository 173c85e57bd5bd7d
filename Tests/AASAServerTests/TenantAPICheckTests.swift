import AASATestSupport
import Foundation
import Testing

@testable import AASACore
@testable import AASAServer

/// A site.json sent to the API is checked beside the domain's stored files, as `check` and a load read it: a touch
/// icon the domain holds is found, one it lacks is `touch-icon-missing`, on both stores; the findings name the
/// domain's own files, never a folder the store's files were written to for the check.
@Suite(.storeCluster) struct TenantAPICheckTests {
    /// A PNG header of `width` × `height` (all a touch icon's check reads).
    static func png(_ width: UInt8, _ height: UInt8) -> [UInt8] {
        PNGInfo.signature + [0, 0, 0, 13] + Array("IHDR".utf8) + [0, 0, 0, width, 0, 0, 0, height]
            + [8, 6, 0, 0, 0, 0, 0, 0, 0]
    }

    static func withIcon(_ path: String) -> String {
        """
        {
          "universalLinks": { "apps": [{ "appIDs": ["ABCDE12345.com.example.shop"], "rules": [{ "path": "/buy/*" }] }] },
          "pages": { "touchIcons": ["\(path)"] }
        }

        """
    }

    @Test(arguments: APIBackend.allCases)
    func aSiteJSONIsCheckedWithTheDomainsStoredFiles(_ backend: APIBackend) throws {
        let fixture = try APIFixture(backend)
        #expect(fixture.call(.put, "/shop.example", body: siteJSON(["/buy/*"])).status == 201)
        let icon = Self.png(180, 180)
        switch backend {
        case .folder:
            try FileManager.default.createDirectory(
                atPath: fixture.folder.path + "/shop.example/pages/icons", withIntermediateDirectories: true)
            #expect(
                FileManager.default.createFile(
                    atPath: fixture.folder.path + "/shop.example/pages/icons/icon-180.png", contents: Data(icon)))
        case .store:
            let store = try Store(uri: fixture.uri!)
            try store.put(
                StoredDomain(
                    name: "shop.example", siteJSON: Array(siteJSON(["/buy/*"]).utf8),
                    files: ["pages/icons/icon-180.png": icon]))
        }
        let tag = try #require(fixture.call(.get, "/shop.example").header("ETag"))

        let found = fixture.call(.put, "/shop.example", body: Self.withIcon("/icons/icon-180.png"), ifMatch: tag)
        #expect(found.status == 200, "\(found.text)")
        let foundTag = try #require(found.header("ETag"))
        let missing = fixture.call(
            .put, "/shop.example", query: "dryRun=true", body: Self.withIcon("/icons/none.png"),
            ifMatch: foundTag)
        #expect(missing.status == 422, "\(missing.text)")
        let rules = (missing.json["diagnostics"] as? [[String: Any]])?.compactMap { $0["rule"] as? String } ?? []
        #expect(rules.contains("touch-icon-missing"), "\(missing.text)")
        #expect(!missing.text.contains("aasa-api-check"), "\(missing.text)")
    }
}
