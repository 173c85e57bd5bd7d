import AASACore
import Testing

@testable import AASAFuzzHarness

@Suite struct MatchScriptTests {
    func script(_ text: String) -> MatchScript { MatchScript(Array(text.utf8)) }

    @Test func buildsEveryPartOfAFile() {
        let built = script(
            """
            var food = pizza
            var food = sushi
            defaults
            nocase
            app ABCDE12345.com.a
            defaults
            decoded
            rule
            / /buy/*
            & id = ?*
            & id = ??
            & ref = *
            # top
            exclude
            rule
            ? whole
            case
            encoded
            include
            path NOT /old/*
            appids ABCDE12345.com.b ABCDE12345.com.c
            components
            appid ABCDE12345.com.d
            / /d
            url https://x.example/buy/1
            """)
        let expected = AssociationFile(
            applinks: AppLinks(
                apps: [],
                details: [
                    AppLinkDetails(
                        appID: "ABCDE12345.com.a", appIDs: ["ABCDE12345.com.a"],
                        components: [
                            ComponentPattern(
                                path: "/buy/*",
                                query: .items([
                                    QueryItemPattern(name: "id", pattern: "??"),
                                    QueryItemPattern(name: "ref", pattern: "*"),
                                ]), fragment: "top", exclude: true),
                            ComponentPattern(
                                query: .whole("whole"), exclude: false, caseSensitive: true, percentEncoded: true),
                        ], paths: ["NOT /old/*"], defaults: ComponentPattern(percentEncoded: false)),
                    AppLinkDetails(appIDs: ["ABCDE12345.com.b", "ABCDE12345.com.c"], components: []),
                    AppLinkDetails(appID: "ABCDE12345.com.d", components: [ComponentPattern(path: "/d")]),
                ], defaults: ComponentPattern(caseSensitive: false),
                substitutionVariables: [SubstitutionVariable(name: "food", values: ["pizza", "sushi"])]))
        #expect(built.file == expected)
        #expect(built.urls == ["https://x.example/buy/1"])
    }

    @Test func aPatternBeforeAnyAppGoesToADefaultEntry() {
        let built = script("/ /a\n# f\n")
        #expect(
            built.file.applinks?.details == [
                AppLinkDetails(
                    appID: MatchScript.defaultAppID, appIDs: [MatchScript.defaultAppID],
                    components: [ComponentPattern(path: "/a", fragment: "f")])
            ])
    }

    @Test(arguments: [[0xFF, 0x00, 0x0A], Array("\n\n\r\n".utf8), Array("unknown words only".utf8)])
    func anyBytesMakeAFile(bytes: [UInt8]) {
        #expect(MatchScript(bytes).file.applinks != nil)
    }
}

@Suite struct ReferenceMatcherTests {
    /// Spec §2.1 and §10.4 vectors: the reference must get these right before it can judge the matcher.
    @Test(arguments: [
        ("/buy/*", "/buy", true), ("/buy/*", "/buy/", true), ("/buy/*", "/buy//", true), ("/buy/*", "/buy/42", true),
        ("/buy/*", "/buyer", false), ("/buy", "/buy/", true), ("abc", "/abc", true), ("//abc", "/abc", true),
        ("/", "", true), ("/a/*/c", "/a/c", false), ("/a/*/c", "/a/b/c", true), ("/201?", "/2015", true),
        ("/201?", "/201", false), ("/?*", "/", false), ("/x?*", "/x1", true),
    ])
    func pathVectors(pattern: String, path: String, matches: Bool) {
        #expect(ReferenceMatcher.pathMatches(pattern, path) == matches)
    }

    @Test func firstMatchingRuleDecidesAndExclusionsStopTheSearch() throws {
        let file = MatchScript(
            Array(
                """
                app ABCDE12345.com.a
                rule
                / /a/*
                exclude
                rule
                / /*
                app ABCDE12345.com.b
                / /b/*
                appid ABCDE12345.com.legacy
                path NOT /b/x
                path /b/*
                """.utf8)
        ).file
        let modern = try #require(ReferenceMatcher(file: file, mode: .modern))
        #expect(modern.answer("https://x.example/a/1")?.verdict == .excluded)
        #expect(
            modern.answer("https://x.example/b/1")
                == ReferenceMatcher.Answer(
                    verdict: .match, appIDs: ["ABCDE12345.com.a"], detailsIndex: 0, ruleIndex: 1, ruleKind: .component))
        let legacy = try #require(ReferenceMatcher(file: file, mode: .legacy))
        #expect(legacy.answer("https://x.example/b/x")?.verdict == .excluded)
        #expect(legacy.answer("https://x.example/b/y")?.appIDs == ["ABCDE12345.com.legacy"])
        #expect(legacy.answer("ftp://x")?.verdict == .invalidURL)
    }

    /// A rule over the wildcard limit is refused by the server and matches nothing; the reference agrees (a CI
    /// fuzz run found the two disagreeing on a path of 33 `?` against a 33-character URL).
    @Test func ruleOverTheWildcardLimitMatchesNothing() throws {
        let over = "/" + String(repeating: "?", count: PatternLimits.maximumWildcards + 1)
        let atLimit = "/" + String(repeating: "?*", count: PatternLimits.maximumWidth / 32) + "b"
        let text = "app ABCDE12345.com.example.x\nrule\n/ \(over)\nappid ABCDE12345.com.legacy\npath \(over)"
        let file = MatchScript(Array(text.utf8)).file
        let url = "https://fuzz.example/" + String(repeating: "a", count: PatternLimits.maximumWildcards) + "b"
        for mode in MatchMode.allCases {
            let reference = try #require(ReferenceMatcher(file: file, mode: mode))
            #expect(reference.answer(url)?.verdict == .noMatch, "\(mode)")
            #expect(ReferenceMatcher.Answer(URLMatcher(file: file, mode: mode).match(url)) == reference.answer(url))
        }
        #expect(ReferenceMatcher.isWithinLimits(String(repeating: "*", count: 40) + "/x"))
        #expect(!ReferenceMatcher.isWithinLimits(over))
        #expect(ReferenceMatcher.isWithinLimits(atLimit))
        try MatcherHarness.run(Array(text.utf8))
    }

    @Test func declinesFilesItDoesNotModel() {
        for text in ["defaults\nnocase\n/ /a", "/ /$(lang)/x", "& a = b", "/ /a\nnocase", "/ /a\ndecoded"] {
            #expect(ReferenceMatcher(file: MatchScript(Array(text.utf8)).file, mode: .modern) == nil, "\(text)")
        }
    }
}
