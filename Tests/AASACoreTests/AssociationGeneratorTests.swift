import AASATestSupport
import Foundation
import Testing

@testable import AASACore

@Suite struct AssociationGeneratorTests {
    /// Golden files: the exact bytes served for each sample domain. Regenerate with AASA_UPDATE_GOLDEN=1.
    @Test(arguments: ["shop.example", "links.example"])
    func sampleDomainsGenerateTheirGoldenFile(domain: String) throws {
        let loaded = SiteConfigLoader().loadDomain(
            domain: domain, file: RepositoryPaths.siteConfig + "/\(domain)/site.json")
        #expect(!loaded.diagnostics.hasErrors, "\(loaded.diagnostics)")
        let bytes = try #require(loaded.generated?.bytes)
        let golden = RepositoryPaths.fixtures + "/golden/\(domain).aasa.json"
        if ProcessInfo.processInfo.environment["AASA_UPDATE_GOLDEN"] == "1" {
            try Data(bytes).write(to: URL(fileURLWithPath: golden))
        }
        let expected = try [UInt8](Data(contentsOf: URL(fileURLWithPath: golden)))
        #expect(String(decoding: bytes, as: UTF8.self) == String(decoding: expected, as: UTF8.self))
    }

    @Test func outputIsCompactUTF8WithoutBOMAndDeterministic() {
        let json =
            #"{"universalLinks": {"apps": [{"appIDs": ["ABCDE12345.com.example.app"], "rules": [{"path": "/é/*"}]}]}}"#
        let first = loadSite(json).generated?.bytes ?? []
        let second = loadSite(json).generated?.bytes ?? []
        #expect(first == second)
        #expect(!first.starts(with: [0xEF, 0xBB, 0xBF]))
        #expect(!first.contains(0x0A) && !first.contains(0x20))
        #expect(String(decoding: first, as: UTF8.self).contains("/é/*"))
    }

    @Test func legacyPathsShareTheEntryAndFurtherAppsRepeatTheComponents() {
        let loaded = loadSite(
            #"""
            {"universalLinks": {"apps": [{"appIDs": ["ABCDE12345.com.a", "ABCDE12345.com.b"],
              "rules": [{"path": "/x/*", "exclude": true}, {"path": "/*"}]}]}}
            """#)
        #expect(
            String(decoding: loaded.generated?.bytes ?? [], as: UTF8.self) == #"""
                {"applinks":{"apps":[],"details":[{"appID":"ABCDE12345.com.a","appIDs":["ABCDE12345.com.a","ABCDE12345.com.b"],"components":[{"/":"/x/*","exclude":true},{"/":"/*"}],"paths":["NOT /x/*","/*"]},{"appID":"ABCDE12345.com.b","appIDs":["ABCDE12345.com.b"],"components":[{"/":"/x/*","exclude":true},{"/":"/*"}],"paths":["NOT /x/*","/*"]}]}}
                """#)
    }

    @Test func legacyFormatOffEmitsOnlyTheModernForm() {
        let loaded = loadSite(
            #"""
            {"legacyFormat": false, "universalLinks": {"apps": [{"appIDs": ["ABCDE12345.com.a"], "rules": [{"path": "/*"}]}]},
             "webCredentials": ["ABCDE12345.com.a"], "appClips": ["ABCDE12345.com.a.Clip"], "handoff": ["ABCDE12345.com.a"]}
            """#)
        #expect(
            String(decoding: loaded.generated?.bytes ?? [], as: UTF8.self) == #"""
                {"applinks":{"details":[{"appIDs":["ABCDE12345.com.a"],"components":[{"/":"/*"}]}]},"webcredentials":{"apps":["ABCDE12345.com.a"]},"appclips":{"apps":["ABCDE12345.com.a.Clip"]},"activitycontinuation":{"apps":["ABCDE12345.com.a"]}}
                """#)
    }

    @Test(arguments: [
        (#"{"path": "/p/*", "query": {"id": "?*"}}"#, "it has a query condition"),
        (#"{"path": "/p/*", "query": "a=*"}"#, "it has a query condition"),
        (#"{"path": "/p/*", "fragment": "top"}"#, "it has a fragment condition"),
        (#"{"path": "/$(v)/*"}"#, "it uses a substitution variable"),
        (#"{"path": "/p/*", "caseSensitive": false}"#, "it is case-insensitive"),
        (#"{"path": "/p/*", "percentEncoded": false}"#, "it matches decoded (percentEncoded false) paths"),
    ])
    func rulesLegacyCannotExpressAreLeftOutWithAWarning(rule: String, reason: String) {
        let loaded = loadSite(
            #"""
            {"universalLinks": {"variables": {"v": ["a"]}, "apps": [{"appIDs": ["ABCDE12345.com.a"], "rules": [\#(rule), {"path": "/keep"}]}]}}
            """#)
        let warning = loaded.diagnostics.first { $0.rule == .legacyInexpressible }
        #expect(warning?.message == "rule left out of the iOS 9–12 paths: \(reason)")
        #expect(warning?.keyPath == "universalLinks.apps[0].rules[0]")
        #expect(warning?.line == 1 && warning?.column == 100)
        let legacy = loaded.generated?.file.applinks?.details.first
        #expect(legacy?.paths == ["/keep"])
        #expect(legacy?.appID == "ABCDE12345.com.a")
        #expect(loaded.generated?.file.applinks?.details.first?.components?.count == 2)
    }

    @Test func wildcardQueryAndFragmentAreStillExpressible() {
        let loaded = loadSite(
            #"""
            {"universalLinks": {"apps": [{"appIDs": ["ABCDE12345.com.a"], "rules": [{"path": "/p", "query": {"x": "*"}, "fragment": "*"}]}]}}
            """#)
        #expect(loaded.diagnostics.isEmpty)
        #expect(loaded.generated?.file.applinks?.details.last?.paths == ["/p"])
    }

    @Test func explicitLegacyPathsAreEmittedVerbatim() {
        let loaded = loadSite(
            #"""
            {"universalLinks": {"apps": [{"appIDs": ["ABCDE12345.com.a"], "rules": [{"path": "/a", "query": "x=1"}], "legacyPaths": ["/a/*", "NOT /b"]}]}}
            """#)
        #expect(loaded.diagnostics.isEmpty)
        #expect(loaded.generated?.file.applinks?.details.last?.paths == ["/a/*", "NOT /b"])
    }

    @Test func fileOverTheLimitIsRefusedAndCloseToItWarns() {
        func config(rules: Int) -> String {
            let list = (0..<rules).map { #"{"path": "/section-\#($0)/with/a/fairly/long/path/*"}"# }.joined(
                separator: ",")
            return
                #"{"legacyFormat": false, "universalLinks": {"apps": [{"appIDs": ["ABCDE12345.com.a"], "rules": [\#(list)]}]}}"#
        }
        let near = loadSite(config(rules: 2200))
        #expect(near.isPublishable)
        #expect(near.diagnostics.map(\.rule) == [.fileSize])
        #expect(near.diagnostics.first?.severity == .warning)
        let over = loadSite(config(rules: 3000))
        #expect(!over.isPublishable)
        #expect(over.diagnostics.first?.severity == .error)
        #expect(over.diagnostics.first?.message.contains("Apple stops reading at 131072") == true)
    }
}
