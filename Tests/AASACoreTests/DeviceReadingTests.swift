import AASATestSupport
import Foundation
import Testing

@testable import AASACore

/// `match --aasa` reads any JSON file the way iOS does (spec §1, §2, §9): what it ignores, what it discards,
/// and where it says that iOS's behaviour is not documented.
@Suite struct DeviceReadingTests {
    static func match(_ json: String, _ url: String, mode: MatchMode = .modern) throws -> (MatchResult, [String]) {
        let root = try JSONParser().parse(SourceText(name: "aasa", bytes: Array(json.utf8))).root.value
        let (file, notes) = AssociationFile.readAsDevice(root)
        return (URLMatcher(file: file, mode: mode).match(url), notes)
    }

    static let app = #""appIDs": ["ABCDE12345.com.example.app"]"#

    /// Spec §9: unknown keys are ignored at every level; a misspelled key is an unknown key.
    @Test(arguments: [
        // A component with no known key matches every URL.
        (#"[{"note": "everything"}]"#, "/anything", MatchResult.Verdict.match),
        // `casesensitive` is not `caseSensitive`: matching stays case-sensitive.
        (#"[{"/": "/Buy/*", "casesensitive": false}]"#, "/buy/1", .noMatch),
        (#"[{"/": "/Buy/*", "casesensitive": false}]"#, "/Buy/1", .match),
        (#"[{"/": "/help/*", "exclude": true, "why": "legacy"}, {"/": "*"}]"#, "/help/x", .excluded),
    ])
    func unknownKeysAreIgnored(components: String, url: String, expected: MatchResult.Verdict) throws {
        let json =
            #"{"applinks": {"extra": 1, "details": [{"# + Self.app + #", "components": "# + components
            + #", "comment2": "x"}]}, "note": "leftover"}"#
        #expect(try Self.match(json, url).0.verdict == expected)
    }

    @Test func anEntryWithoutAnAppIsSkippedAndAFileWithoutApplinksMatchesNothing() throws {
        let (skipped, _) = try Self.match(
            #"{"applinks": {"details": [{"components": [{"/": "*"}]}, {"# + Self.app
                + #", "components": [{"/": "/b/*"}]}]}}"#,
            "/b/1")
        #expect(skipped.verdict == .match && skipped.detailsIndex == 1)
        let (none, notes) = try Self.match(#"{"webcredentials": {"apps": ["ABCDE12345.com.example.app"]}}"#, "/x")
        #expect(none.verdict == .noMatch)
        #expect(notes.contains { $0.contains("no usable \"applinks\"") })
        let (array, arrayNotes) = try Self.match(#"[1, 2]"#, "/x")
        #expect(array.verdict == .noMatch && arrayNotes.first?.contains("not an object") == true)
        // No services at all is still a file iOS reads.
        #expect(try Self.match("{}", "/x").0.verdict == .noMatch)
    }

    /// Spec §9 (swcutil): a `?` dictionary with a value that is not a string is discarded whole, so the component
    /// matches any query.
    @Test func aQueryDictionaryWithANonStringValueMatchesAnyQuery() throws {
        let json =
            #"{"applinks": {"details": [{"# + Self.app
            + #", "components": [{"/": "/s", "?": {"a": "1", "flag": true}}]}]}}"#
        let (result, notes) = try Self.match(json, "/s?a=2")
        #expect(result.verdict == .match)
        #expect(notes.contains { $0.contains("discards the whole dictionary") && $0.contains("§9") })
    }

    /// A known key with a type whose effect the spec does not record: the component is skipped, and the note says
    /// so instead of guessing.
    @Test(arguments: [
        #"{"/": 5}"#, #"{"/": "/a", "exclude": "yes"}"#, #"{"?": 3}"#, ##"{"#": ["x"]}"##, #"{"caseSensitive": 0}"#,
    ])
    func aKnownKeyOfAnUndocumentedTypeSkipsItsComponent(component: String) throws {
        let json =
            #"{"applinks": {"details": [{"# + Self.app + #", "components": ["# + component + #", {"/": "/b/*"}]}]}}"#
        let (skipped, notes) = try Self.match(json, "/a")
        #expect(skipped.verdict == .noMatch)
        #expect(notes.contains { $0.contains("components[0]") && $0.contains("not documented") }, "\(notes)")
        #expect(try Self.match(json, "/b/1").0.verdict == .match)
    }

    /// Every AASA file of the corpus that is valid JSON gets a verdict; none is refused.
    @Test func everyCorpusFileThatIsJSONGetsAVerdict() throws {
        let folder = RepositoryPaths.corpus + "/aasa"
        var answered = 0
        for name in RepositoryPaths.files(in: folder, endingWith: ".json") {
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: folder + "/" + name)))
            guard let parsed = try? JSONParser().parse(SourceText(name: name, bytes: bytes)) else { continue }
            let (file, _) = AssociationFile.readAsDevice(parsed.root.value)
            for mode in [MatchMode.modern, .legacy] {
                let result = URLMatcher(file: file, mode: mode).match("https://example.com/some/path?q=1#f")
                #expect([.match, .excluded, .noMatch].contains(result.verdict), "\(name)")
            }
            answered += 1
        }
        // 111 of the 150 are JSON; the others are refused by iOS too (HTML, RTF, signed blobs, comments).
        #expect(answered == 111, "\(answered) corpus files are JSON")
    }
}

/// `authsrv` (Platform SSO; spec §9) goes from site.json into the served file, is linted like webcredentials, and is
/// read back by import.
@Suite struct AuthSrvTests {
    @Test func authsrvIsGeneratedLintedAndImported() throws {
        let site = loadSite(#"{"authsrv": ["ABCDE12345.com.example.sso", "ABCDE12345.com.example.sso"]}"#)
        let file = try #require(site.generated?.file)
        #expect(file.authSrv == ["ABCDE12345.com.example.sso", "ABCDE12345.com.example.sso"])
        #expect(file.services == ["authsrv"])
        #expect(String(decoding: try #require(site.generated).bytes, as: UTF8.self).contains(#""authsrv":{"apps":["#))
        #expect(
            site.diagnostics.contains { $0.rule.id.hasPrefix("duplicate") && $0.keyPath?.hasPrefix("authsrv") == true },
            "\(site.diagnostics)")
        let imported = AssociationImporter().importFile(file).config
        #expect(imported.authsrv == file.authSrv)
    }
}
