import AASATestSupport
import Foundation
import Testing

@testable import AASACore

/// `docs/site.schema.json` and the decoder agree: what editors accept, the server accepts, and the reverse.
///
/// The schema is checked with a real JSON Schema validator (Python `jsonschema`, draft 2020-12) by
/// `scripts/validate-schemas.py`; the same fixtures then go through ``SiteConfigLoader``.
/// Invalid fixtures are named `<rule-id>--<what>.json` after the diagnostic the decoder must report.
@Suite struct SchemaTests {
    static let schemaFixtures = RepositoryPaths.fixtures + "/schema"

    /// The `.json` files in `Fixtures/schema/<kind>`, sorted.
    static func fixtureNames(_ kind: String) -> [String] {
        RepositoryPaths.files(in: schemaFixtures + "/" + kind, endingWith: ".json")
    }

    static func load(_ relativePath: String) throws -> LoadedDomain {
        let path = schemaFixtures + "/" + relativePath
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return SiteConfigLoader().loadDomain(
            domain: "shop.example", source: SourceText(name: "schema/" + relativePath, bytes: Array(data)))
    }

    @Test func theValidatorScriptPassesEveryFile() throws {
        let run = try Command.run(
            "python3", [RepositoryPaths.root + "/scripts/validate-schemas.py"], currentDirectory: RepositoryPaths.root,
            timeout: 120)
        let output = run.stdout + run.stderr
        #expect(run.status == 0, "scripts/validate-schemas.py failed:\n\(output)")
        #expect(output.contains(" passed, 0 failed"), "\(output)")
    }

    @Test func thereAreFixturesOfBothKinds() {
        #expect(Self.fixtureNames("valid").count >= 3)
        #expect(Self.fixtureNames("invalid").count >= 6)
    }

    @Test(arguments: fixtureNames("valid"))
    func aFixtureTheSchemaAcceptsLoadsWithoutErrors(name: String) throws {
        let loaded = try Self.load("valid/" + name)
        #expect(!loaded.diagnostics.hasErrors, "\(loaded.diagnostics)")
        #expect(loaded.isPublishable)
    }

    @Test(arguments: fixtureNames("invalid"))
    func aFixtureTheSchemaRefusesIsRefusedForTheRuleInItsName(name: String) throws {
        let loaded = try Self.load("invalid/" + name)
        #expect(!loaded.isPublishable)
        let rule = String(
            name.dropLast(".json".count).split(separator: "--", maxSplits: 1, omittingEmptySubsequences: false)[0])
        #expect(loaded.diagnostics.errors.map(\.rule.id).contains(rule), "expected [\(rule)] in \(loaded.diagnostics)")
    }

    /// The keys the schema documents are exactly the keys the decoder accepts, level by level.
    @Test func schemaKeysAreTheDecodersKeys() throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: RepositoryPaths.root + "/docs/site.schema.json"))
        let schema = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let defs = try #require(schema["$defs"] as? [String: Any])
        func keys(_ node: Any?) -> Set<String> {
            Set(((node as? [String: Any])?["properties"] as? [String: Any])?.keys.map { $0 } ?? [])
        }
        #expect(keys(schema) == Set(SiteConfig.topKeys))
        #expect(keys(defs["app"]) == Set(SiteConfig.appKeys))
        #expect(keys(defs["rule"]) == Set(ComponentPattern.Spelling.site.keys))
        #expect(keys(defs["matchingDefaults"]) == Set(SiteConfig.defaultsKeys))
        #expect(keys((schema["properties"] as? [String: Any])?["universalLinks"]) == ["defaults", "variables", "apps"])
        #expect(keys(defs["test"]) == ["url", "opensApp", "staysOnWeb", "comment"])
        #expect(keys(defs["signing"]) == Set(SigningConfig.keys))
        #expect(keys((schema["properties"] as? [String: Any])?["android"]) == Set(AndroidConfig.keys))
        #expect(keys(defs["androidApp"]) == Set(AndroidConfig.appKeys))
        #expect(keys(defs["smartAppBanner"]) == Set(BannerConfig.keys))
        #expect(keys(defs["pages"]) == Set(PagesConfig.keys))
        #expect(keys(defs["landingPage"]) == Set(PagesConfig.landingKeys))
        #expect(keys(defs["hsts"]) == Set(HSTSConfig.keys))
        #expect(keys(defs["passkeys"]) == Set(PasskeyEndpoints.keys))
        #expect(keys((schema["properties"] as? [String: Any])?["fallback"]) == Set(AppFallback.keys))
    }
}
