import Foundation
import Testing

@testable import AASACore

/// A reload keeps a domain's previous load only when nothing it was made from can have changed.
@Suite struct SiteConfigReuseTests {
    static let config =
        #"{"universalLinks": {"apps": [{"appIDs": ["ABCDE12345.com.example.shop"], "rules": [{"path": "/buy/*"}]}]}}"#

    /// A domain folder holding only site.json, in a fresh temporary folder; the caller removes `root`.
    private func domainFolder(_ text: String = config) throws -> (root: String, file: String) {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("reuse-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root + "/shop.example", withIntermediateDirectories: true)
        let file = root + "/shop.example/site.json"
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        return (root, file)
    }

    /// The previous load with a marker only a reused result can carry.
    private func marked(_ loaded: LoadedDomain) -> LoadedDomain {
        var marked = loaded
        marked.diagnostics.append(Diagnostic(.note, rule: .unreachableRule, "marker: reused"))
        return marked
    }

    private func reused(_ loaded: LoadedDomain) -> Bool {
        loaded.diagnostics.contains { $0.message == "marker: reused" }
    }

    @Test func theSameFileKeepsThePreviousLoad() throws {
        let (root, file) = try domainFolder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let loader = SiteConfigLoader()
        let first = marked(loader.loadDomain(domain: "shop.example", file: file))
        #expect(first.isPublishable)
        #expect(reused(loader.loadDomain(DomainFolder(domain: "shop.example", file: file), reusing: first)))
    }

    /// What a server keeps of a load publishes exactly what the full load does, and is reused the same way.
    @Test func theResultKeptBetweenLoadsPublishesWhatTheFullOneDoes() throws {
        let text = #"""
            {"cacheControl": "public, max-age=60", "hsts": {"maxAge": 600},
             "universalLinks": {"apps": [{"appIDs": ["ABCDE12345.com.example.shop"], "rules": [{"path": "/buy/*"}]}]},
             "webCredentials": ["ABCDE12345.com.example.shop"],
             "android": {"apps": [{"package": "com.example.shop", "fingerprints": ["\#(
                Array(repeating: "AB", count: 32).joined(separator: ":"))"]}]},
             "tests": [{"url": "https://shop.example/buy/1", "opensApp": "ABCDE12345.com.example.shop"}]}
            """#
        let (root, file) = try domainFolder(text)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let loader = SiteConfigLoader()
        let full = loader.loadDomain(domain: "shop.example", file: file)
        #expect(full.config?.tests.count == 1 && full.diagnostics.errors.isEmpty, "\(full.diagnostics)")
        let kept = full.keptBetweenLoads()
        // The decoded rules, apps and tests, and the generated document, are not kept.
        #expect(kept.config?.universalLinks == nil && kept.config?.android == nil && kept.config?.tests == [])
        #expect(kept.config?.webCredentials == [] && kept.generated?.file == AssociationFile())
        let (fromFull, fromKept) = (try #require(full.published), try #require(kept.published))
        #expect(fromKept.associationFile == fromFull.associationFile && fromKept.assetLinks == fromFull.assetLinks)
        #expect(fromKept.cacheControl == "public, max-age=60" && fromKept.hsts == fromFull.hsts && fromKept.hsts != nil)
        // The served file reads back as the document it was generated from (what `/match` and banners use).
        #expect(fromKept.file == full.generated?.file)
        #expect(reused(loader.loadDomain(DomainFolder(domain: "shop.example", file: file), reusing: marked(kept))))
    }

    @Test func changedBytesLoadAgain() throws {
        let (root, file) = try domainFolder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let loader = SiteConfigLoader()
        let first = marked(loader.loadDomain(domain: "shop.example", file: file))
        try Self.config.replacingOccurrences(of: "/buy/*", with: "/sell/*").write(
            toFile: file, atomically: true, encoding: .utf8)
        let second = loader.loadDomain(DomainFolder(domain: "shop.example", file: file), reusing: first)
        #expect(!reused(second))
        #expect(second.generated.map { String(decoding: $0.bytes, as: UTF8.self).contains("/sell/*") } == true)
    }

    @Test func anotherModificationTimeLoadsAgain() throws {
        let (root, file) = try domainFolder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let loader = SiteConfigLoader()
        let first = marked(loader.loadDomain(domain: "shop.example", file: file))
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: -3600)], ofItemAtPath: file)
        #expect(!reused(loader.loadDomain(DomainFolder(domain: "shop.example", file: file), reusing: first)))
    }

    @Test(arguments: ["pages", "landing.html", ".hidden"])
    func anythingElseInTheFolderLoadsAgain(entry: String) throws {
        let (root, file) = try domainFolder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let loader = SiteConfigLoader()
        let first = marked(loader.loadDomain(domain: "shop.example", file: file))
        try FileManager.default.createDirectory(
            atPath: root + "/shop.example/" + entry, withIntermediateDirectories: true)
        #expect(!reused(loader.loadDomain(DomainFolder(domain: "shop.example", file: file), reusing: first)))
    }

    @Test func aSigningDomainLoadsAgain() throws {
        let signing = Self.config.dropLast() + #", "signing": true}"#
        let (root, file) = try domainFolder(String(signing))
        defer { try? FileManager.default.removeItem(atPath: root) }
        let loader = SiteConfigLoader()
        let first = marked(loader.loadDomain(domain: "shop.example", file: file))
        #expect(first.config?.signing?.enabled == true)
        #expect(!reused(loader.loadDomain(DomainFolder(domain: "shop.example", file: file), reusing: first)))
    }
}
