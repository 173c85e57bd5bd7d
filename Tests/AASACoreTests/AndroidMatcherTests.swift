import AASATestSupport
import Foundation
import Testing

@testable import AASACore

/// Android 15+'s dynamic rules, matched as spec §7.1 describes: Google's documented examples, the wildcard that
/// does not backtrack, and what makes Android discard a block.
@Suite struct AndroidMatcherTests {
    /// An assetlinks.json verifying `com.example.app` with `rules` as its dynamic components.
    static func file(_ rules: String, package: String = "com.example.app") -> JSONValue {
        let text = """
            [{"relation": ["delegate_permission/common.handle_all_urls"],
              "target": {"namespace": "android_app", "package_name": "\(package)",
                         "sha256_cert_fingerprints": ["14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5"]},
              "relation_extensions": {"delegate_permission/common.handle_all_urls": {"dynamic_app_link_components": \(rules)}}}]
            """
        return try! JSONParser().parse(SourceText(name: "assetlinks.json", bytes: Array(text.utf8))).root.value
    }

    static func verdict(_ rules: String, _ url: String) -> AndroidMatchResult.Verdict {
        AndroidMatcher(assetLinks: file(rules)).match(url).verdict
    }

    /// Spec §7.1, Google's `?` example: every entry must find its item, order does not matter, others are ignored.
    @Test(arguments: [
        ("https://example.com/?in_app=true&dl=abc", AndroidMatchResult.Verdict.match),
        ("https://example.com/?lang=en&in_app=true&tz=pst&dl=abc", .match),
        ("https://example.com/?lang=en&tz=pst&dl=abc", .noMatch),
    ])
    func aQueryDictionaryNeedsEveryEntryAndIgnoresOtherItems(url: String, expected: AndroidMatchResult.Verdict) {
        #expect(Self.verdict(#"[{"?": {"dl": "*", "in_app": "true"}}]"#, url) == expected)
    }

    /// Spec §7.1, Google's three ordering examples: first match wins, `exclude` stops, no match stays on the web.
    @Test(arguments: [
        (
            #"[{"/": "*", "exclude": true}, {"/": "/path1"}]"#, "https://example.com/path1",
            AndroidMatchResult.Verdict.excluded
        ),
        (#"[{"/": "/path1"}, {"/": "*", "exclude": true}]"#, "https://example.com/path1", .match),
        (#"[{"/": "/path1"}, {"/": "*", "exclude": true}]"#, "https://example.com/path2", .excluded),
        (#"[{"/": "/path1"}, {"/": "/path2"}]"#, "https://example.com/path3", .noMatch),
    ])
    func rulesAreEvaluatedInOrder(rules: String, url: String, expected: AndroidMatchResult.Verdict) {
        #expect(Self.verdict(rules, url) == expected)
    }

    /// A five-rule list in the shape of Google's example: a fragment, a query, a path family, a path with a
    /// query, then everything else excluded.
    @Test(arguments: [
        ("https://example.com/anything#app", AndroidMatchResult.Verdict.match, 0),
        ("https://example.com/x?dl=promo", .match, 1),
        ("https://example.com/products/123", .match, 2),
        ("https://example.com/shoes?in_app=true", .match, 3),
        ("https://example.com/shoes", .excluded, 4),
        ("https://example.com/about", .excluded, 4),
    ])
    func aFiveRuleList(url: String, expected: AndroidMatchResult.Verdict, index: Int) {
        let rules = #"""
            [{"#": "app"}, {"?": {"dl": "*"}}, {"/": "/products/*"}, {"/": "/shoes", "?": {"in_app": "true"}},
             {"/": "*", "exclude": true}]
            """#
        let result = AndroidMatcher(assetLinks: Self.file(rules)).match(url)
        #expect(result.verdict == expected)
        #expect(result.ruleIndex == index)
        #expect(result.packages == (expected == .match ? ["com.example.app"] : []))
    }

    /// Spec §7.1: `*` stops at the first occurrence of the character after it and does not backtrack; Apple's
    /// greedy `*` (§2.1) matches where the next character recurs.
    @Test(arguments: [
        ("/a*b/c", "/axb/c", true, true),
        ("/a*b/c", "/axb/yb/c", false, true),
        ("/*/edit", "/docs/edit", true, true),
        ("/*/edit", "/docs/v2/edit", false, true),
        ("/p/*", "/p/any/thing", true, true),
        ("/p/?", "/p/x", true, true),
        ("*.html", "/a.b.html", false, true),
    ])
    func theStarStopsAtTheNextCharacterWhereApplesBacktracks(pattern: String, path: String, android: Bool, apple: Bool)
        throws
    {
        #expect(AndroidPattern(pattern).matches(path) == android, "Android \(pattern) vs \(path)")
        let file = try #require(
            readAssociation(
                #"{"applinks": {"details": [{"appIDs": ["ABCDE12345.a.b"], "components": [{"/": "\#(pattern)"}]}]}}"#))
        #expect((URLMatcher(file: file).match(path).verdict == .match) == apple, "Apple \(pattern) vs \(path)")
    }

    /// Spec §7.1: a malformed or empty block is discarded whole; the app's intent filters decide (`manifest`).
    @Test(arguments: [
        (#"[]"#, "is empty"),
        (#"{"/": "*"}"#, "not an array"),
        (#"[{"?": "dl=*"}]"#, "is a string"),
        (#"[{"/": "/a", "comment": "x"}]"#, "not a key Android knows"),
        (#"[{"/": 5}]"#, "not a string"),
        (#"[{"exclude": "yes"}]"#, "not a boolean"),
        (#"[{"?": {"a": 1}}]"#, "not a string pattern"),
    ])
    func aBlockAndroidWouldDiscardLeavesTheManifest(rules: String, reason: String) {
        let result = AndroidMatcher(assetLinks: Self.file(rules)).match("https://example.com/a")
        #expect(result.verdict == .manifest)
        #expect(result.reason.contains(reason), "\(result.reason)")
        #expect(result.packages == ["com.example.app"])
    }

    @Test func noBlockMeansTheManifestAndAnUnverifiedPackageNoApp() throws {
        let plain = try JSONParser().parse(
            SourceText(
                name: "a",
                bytes: Array(
                    #"[{"relation": ["delegate_permission/common.handle_all_urls"], "target": {"namespace": "android_app", "package_name": "com.a", "sha256_cert_fingerprints": []}}]"#
                        .utf8))
        ).root.value
        #expect(AndroidMatcher(assetLinks: plain).match("https://x.example/a").verdict == .manifest)
        let other = AndroidMatcher(assetLinks: plain, packages: ["com.b"]).match("https://x.example/a")
        #expect(other.verdict == .noMatch && other.reason.contains("no handle_all_urls statement"))
        // A miss says which rules came closest and why.
        let miss = AndroidMatcher(assetLinks: Self.file(#"[{"/": "/buy/*", "?": {"id": "?*"}}]"#))
            .match("https://example.com/buy/1?id=")
        #expect(miss.verdict == .noMatch)
        #expect(
            miss.nearMisses.first?.reason.contains("query item id= does not match ?*") == true, "\(miss.nearMisses)")
    }

    /// Every assetlinks file of the corpus evaluates without error.
    @Test func everyCorpusFileEvaluates() throws {
        let folder = RepositoryPaths.corpus + "/assetlinks"
        var evaluated = 0
        var decidedByRules: [String] = []
        for name in RepositoryPaths.files(in: folder, endingWith: ".json") {
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: folder + "/" + name)))
            guard let root = try? JSONParser().parse(SourceText(name: name, bytes: bytes)).root.value else { continue }
            let matcher = AndroidMatcher(assetLinks: root)
            for url in ["https://example.com/", "https://example.com/a/terms/x?c=d#e"] {
                let result = matcher.match(url)
                #expect([.match, .excluded, .noMatch, .manifest].contains(result.verdict), "\(name)")
                if result.ruleIndex != nil { decidedByRules.append(name) }
            }
            evaluated += 1
        }
        // 37 of the 40 are JSON; the one file with dynamic rules decides by them (`*/terms/*` read as Android does).
        #expect(evaluated == 37, "\(evaluated) of the corpus files are JSON")
        #expect(Set(decidedByRules) == ["039.json"], "\(decidedByRules)")
    }

    /// Property: for patterns in which no `*` is followed by a character that recurs in the path, Apple's and
    /// Android's verdicts agree (spec §7.1).
    @Test func withoutARecurringCharacterAfterAStarBothPlatformsAgree() throws {
        var random = SeededRandomNumberGenerator(seed: 20)
        let alphabet: [Character] = ["a", "b", "/", "x"]
        var compared = 0
        for _ in 0..<6000 {
            let pattern =
                "/"
                + String(
                    (0..<Int.random(in: 1...6, using: &random)).map { _ in
                        Bool.random(using: &random) ? "*" : alphabet.randomElement(using: &random)!
                    })
            let path =
                "/"
                + String(
                    (0..<Int.random(in: 0...8, using: &random)).map { _ in alphabet.randomElement(using: &random)! })
            // Skip patterns where a star is followed by a character that occurs more than once after that point.
            let scalars = Array(pattern)
            var ambiguous = false
            for (index, character) in scalars.enumerated() where character == "*" && index + 1 < scalars.count {
                let next = scalars[index + 1]
                if next == "*" || path.filter({ $0 == next }).count > 1 { ambiguous = true }
            }
            // End slashes are insignificant to Apple only (spec §2.1: `/x/*` also matches `/x`); leave those out.
            // `//` starts an authority in a URL, and repeated slashes are a path question of their own.
            if ambiguous || path.hasSuffix("/") || pattern.hasSuffix("/") || pattern.hasSuffix("/*")
                || path.contains("//") || pattern.contains("//")
            {
                continue
            }
            let file = try #require(
                readAssociation(
                    #"{"applinks": {"details": [{"appIDs": ["ABCDE12345.a.b"], "components": [{"/": "\#(pattern)"}]}]}}"#
                ))
            let apple = URLMatcher(file: file).match(path).verdict == .match
            #expect(AndroidPattern(pattern).matches(path) == apple, "\(pattern) vs \(path)")
            compared += 1
        }
        #expect(compared > 500)
    }
}

/// `android-wildcard-differs`: `check` names a URL that an Apple rule and the Android rule generated from it
/// answer differently (spec §2 against §7.1), and stays quiet where they agree.
@Suite struct WildcardDifferenceTests {
    static func warning(_ rule: String) -> String? {
        let site = loadSite(
            #"""
            {"universalLinks": {"apps": [{"appIDs": ["ABCDE12345.com.example.app"], "rules": [\#(rule)]}]},
             "android": {"apps": [{"package": "com.example.app",
               "fingerprints": ["14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5"],
               "rulesFrom": "ABCDE12345.com.example.app"}]}}
            """#)
        return site.diagnostics.first { $0.rule == .androidWildcardDiffers }?.message
    }

    @Test(arguments: [
        (#"{"path": "/*/edit"}"#, "https://shop.example/x/x/edit"),
        (#"{"path": "/a?*b/c"}"#, "https://shop.example/axbxb/c"),
        (#"{"path": "/Buy/*", "caseSensitive": false}"#, "https://shop.example/BUY/X"),
        (#"{"path": "/s", "query": {"ref": "*"}}"#, "https://shop.example/s"),
    ])
    func aDifferenceIsNamedByAURLThatShowsIt(rule: String, url: String) throws {
        let message = try #require(Self.warning(rule), "no warning for \(rule)")
        #expect(message.contains("answer \(url) differently"), "\(message)")
    }

    /// Including where the spec records no Android behaviour: end slashes (`/buy/*` against `/buy`), percent-encoding.
    @Test(arguments: [
        #"{"path": "/buy/*"}"#, #"{"path": "/p/?"}"#, #"{"fragment": "top"}"#, #"{"path": "/caf%C3%A9/*"}"#,
        #"{"path": "/s", "query": {"ref": "?*"}}"#,
    ])
    func rulesBothPlatformsReadAlikeGetNoWarning(rule: String) {
        #expect(Self.warning(rule) == nil, "\(rule)")
    }

    /// An app's own `rules` are written for Android: no Apple rule reads them, so there is nothing to differ from.
    @Test func anAppsOwnRulesGetNoWarning() {
        let site = loadSite(
            #"""
            {"android": {"apps": [{"package": "com.example.app",
               "fingerprints": ["14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5"],
               "rules": [{"path": "*/terms/*", "exclude": true}, {"path": "/*/edit"}]}]}}
            """#)
        #expect(!site.diagnostics.contains { $0.rule == .androidWildcardDiffers }, "\(site.diagnostics)")
    }
}
