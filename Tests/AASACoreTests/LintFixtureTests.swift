import AASATestSupport
import Foundation
import Testing

@testable import AASACore

/// The rules about one site.json (`Fixtures/site-lint/`) or one Apple-format file (`Fixtures/lint/`): each
/// `<rule-id>.fail.json` must produce its rule with a line, and each `<rule-id>.pass.json` no finding at all. The
/// rules that need more than one file (pages, certificates, signing, import, serve) have their fixtures in
/// `Fixtures/import/` and `Fixtures/rules/`, run by `RuleFixtureTests` (CLITests), which also fails for a rule
/// without any fixture.
@Suite struct LintFixtureTests {
    static func fixtures(_ folder: String, _ kind: String) -> [String] {
        RepositoryPaths.files(in: RepositoryPaths.fixtures + "/" + folder, endingWith: ".\(kind).json")
    }

    static func rule(of name: String) -> String { String(name.split(separator: ".").first ?? "") }

    static func checkAASA(_ name: String) throws -> [Diagnostic] {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: RepositoryPaths.fixtures + "/lint/" + name)))
        return AssociationChecker().check(SourceText(name: name, bytes: bytes))
    }

    static func checkSite(_ name: String) throws -> [Diagnostic] {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: RepositoryPaths.fixtures + "/site-lint/" + name)))
        return SiteConfigLoader().loadDomain(domain: "shop.example", source: SourceText(name: name, bytes: bytes))
            .diagnostics
    }

    @Test func everyRuleHasBothFixtures() {
        for folder in ["lint", "site-lint"] {
            #expect(Self.fixtures(folder, "fail").map(Self.rule) == Self.fixtures(folder, "pass").map(Self.rule))
            #expect(Self.fixtures(folder, "fail").count >= 15)
        }
    }

    @Test(arguments: fixtures("lint", "fail"))
    func appleFileFixtureFails(name: String) throws {
        let diagnostics = try Self.checkAASA(name)
        let found = diagnostics.first { $0.rule.id == Self.rule(of: name) }
        #expect(found != nil, "\(diagnostics)")
        #expect(found.map { $0.line > 0 && $0.file == name } == true, "\(String(describing: found))")
    }

    @Test(arguments: fixtures("lint", "pass"))
    func appleFileFixturePasses(name: String) throws {
        let diagnostics = try Self.checkAASA(name)
        #expect(diagnostics.isEmpty, "\(diagnostics)")
    }

    @Test(arguments: fixtures("site-lint", "fail"))
    func siteFixtureFails(name: String) throws {
        let diagnostics = try Self.checkSite(name)
        let found = diagnostics.first { $0.rule.id == Self.rule(of: name) }
        #expect(found != nil, "\(diagnostics)")
        #expect(found.map { $0.line > 0 } == true, "\(String(describing: found))")
    }

    @Test(arguments: fixtures("site-lint", "pass"))
    func siteFixturePasses(name: String) throws {
        let diagnostics = try Self.checkSite(name)
        #expect(diagnostics.isEmpty, "\(diagnostics)")
    }

    /// Spec §2.1: end slashes are dropped before `/*` lets a pattern match its bare prefix, so `//a/*/` also
    /// matches `/a`, which `/a/*/*` does not: not dead. `/a/*` does match `/a`, so there it is.
    @Test(arguments: [("/a/*/*", false), ("/a/*", true)])
    func aTrailingSlashAfterAStarKeepsTheBarePrefix(earlier: String, dead: Bool) {
        let file =
            #"{"applinks": {"apps": [], "details": [{"appID": "ABCDE12345.com.example.app", "paths": [""#
            + earlier + #"", "//a/*/"]}]}}"#
        let findings = AssociationChecker().check(SourceText(name: "aasa.json", bytes: Array(file.utf8)))
        #expect(
            findings.contains { $0.rule == .unreachableRule && $0.keyPath == "applinks.details[0].paths[1]" } == dead)
        let decider = URLMatcher(
            file: AssociationFile.parse(SourceText(name: "aasa.json", bytes: Array(file.utf8))).file!
        )
        .match("https://example.com/a").componentIndex
        #expect(decider == (dead ? 0 : 1))
    }

    /// Slashes at both ends are dropped scalar by scalar, as the matcher drops them: a slash followed by a
    /// combining mark is still a slash.
    @Test(arguments: [
        ("//a/b//", "a/b"), ("a", "a"), ("///", ""), ("", ""), ("/*", "*"), ("/\u{301}a/", "\u{301}a"),
        ("a//\u{301}", "a//\u{301}"),
    ])
    func slashesAreTrimmedByScalar(pattern: String, trimmed: String) {
        #expect(UnreachableRule.trimmingSlashes(pattern[...]).unicodeScalars.elementsEqual(trimmed.unicodeScalars))
        var scalars = Array(pattern.unicodeScalars.map(\.value))
        WildcardPatternCompiler.stripSlashes(&scalars)
        #expect(scalars == trimmed.unicodeScalars.map(\.value))
    }

    @Test func signedFilesAreRecognised() throws {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: RepositoryPaths.corpus + "/aasa/030.json")))
        #expect(AssociationChecker().check(SourceText(name: "030.json", bytes: bytes)).map(\.rule) == [.signedFile])
    }

    /// The issue's acceptance case: five different mistakes, five precise diagnostics, one run.
    @Test func fiveMistakesGiveFiveDiagnostics() {
        let loaded = loadSite(
            """
            {
              "legacyFormat": false,
              "universalLinks": {
                "apps": [
                  {
                    "appIDs": ["abcde12345.com.example.shop"],
                    "rules": [
                      { "path": "/*" },
                      { "path": "/admin/*", "exclude": true },
                      { "path": "/$(category)/*" }
                    ]
                  }
                ]
              },
              "webCredential": ["ABCDE12345.com.example.shop"],
              "tests": [{ "url": "https://shop.example/admin/x", "staysOnWeb": true }]
            }
            """)
        #expect(
            loaded.diagnostics.map { "\($0.line):\($0.column) \($0.severity) \($0.rule)" } == [
                "6:20 error app-id-format", "9:11 warning unreachable-rule", "10:11 warning unreachable-rule",
                "10:21 error unknown-variable", "15:3 error unknown-key", "16:13 error test-url",
            ])
        #expect(
            loaded.diagnostics[1].description
                == #"shop.example/site.json:9:11: warning: [unreachable-rule] this exclusion never applies: universalLinks.apps[0].rules[0] above it already opens the app for every URL it matches (at universalLinks.apps[0].rules[1]); fix: move the exclusion above universalLinks.apps[0].rules[0]"#
        )
        #expect(loaded.diagnostics[4].hint == #"did you mean "webCredentials"?"#)
    }
}
