import Testing

@testable import AASACore

/// Table-driven pairs of association files: each kind of change, each refactor that must compare equal, and
/// the spec §2 rules that decide what a pattern matches.
@Suite struct SemanticDiffTests {
    static func file(_ components: String, extra: String = "") -> AssociationFile {
        let text = """
            {"applinks": {\(extra)"details": [{"appIDs": ["ABCDE12345.com.example.app"], "components": [\(components)]}]}}
            """
        return AssociationFile.parse(SourceText(name: "aasa.json", bytes: Array(text.utf8))).file!
    }

    static func diff(_ old: AssociationFile, _ new: AssociationFile, legacy: Bool = false) -> DomainDiff {
        DomainDiff(
            domain: "example.com", old: DiffSide(appleFile: old), new: DiffSide(appleFile: new), legacy: legacy)
    }

    static func diff(_ old: String, _ new: String) -> DomainDiff {
        diff(file(old), file(new))
    }

    /// Refactors that change no URL's answer.
    @Test(arguments: [
        // Rules that cannot overlap, reordered.
        (#"{"/": "/a/*"}, {"/": "/b/*", "exclude": true}"#, #"{"/": "/b/*", "exclude": true}, {"/": "/a/*"}"#),
        // One pattern split into two.
        (#"{"/": "/shop/*"}"#, #"{"/": "/shop"}, {"/": "/shop/*"}"#),
        (#"{"/": "/p/?*"}"#, #"{"/": "/p/?"}, {"/": "/p/??*"}"#),
        // End slashes do not count (spec §2.1).
        (#"{"/": "/buy/"}"#, #"{"/": "buy"}"#),
        // `*` catches an absent query item (spec §2.4); `?` absent and `*` are the same.
        (#"{"/": "/x", "?": {"q": "*"}}"#, #"{"/": "/x"}"#),
        // A rule hidden by an earlier one, removed.
        (#"{"/": "/a/*"}, {"/": "/a/b"}"#, #"{"/": "/a/*"}"#),
        // Case-insensitive rule spelled in another case.
        (#"{"/": "/Help/*", "caseSensitive": false}"#, #"{"/": "/help/*", "caseSensitive": false}"#),
    ])
    func refactorsChangeNothing(old: String, new: String) {
        let result = Self.diff(old, new)
        #expect(result.changes.isEmpty, "\(result.changes.map(\.description))")
        #expect(result.notes.isEmpty)
    }

    @Test func settingMovedIntoDefaultsChangesNothing() {
        let old = Self.file(#"{"/": "/Help/*", "caseSensitive": false}, {"/": "/Other/*", "caseSensitive": false}"#)
        let new = Self.file(#"{"/": "/Help/*"}, {"/": "/Other/*"}"#, extra: #""defaults": {"caseSensitive": false}, "#)
        #expect(Self.diff(old, new).changes.isEmpty)
    }

    @Test func exclusionMovedBelowAnIncludeSendsItsURLsToTheApp() throws {
        let result = Self.diff(
            ##"{"#": "no_universal_links", "exclude": true}, {"/": "/buy/*"}"##,
            ##"{"/": "/buy/*"}, {"#": "no_universal_links", "exclude": true}"##)
        let change = try #require(result.changes.first)
        #expect(result.changes.count == 1)
        #expect(change.kind == .webToApp)
        #expect(change.to == ["ABCDE12345.com.example.app"])
        #expect(change.description == "`/buy/*` with fragment `no_universal_links`")
        #expect(change.oldRule?.location == "applinks.details[0].components[0]")
        #expect(change.newRule?.location == "applinks.details[0].components[0]")
        #expect(change.examples.count >= 2)
        #expect(
            change.examples.allSatisfy {
                $0.hasPrefix("https://example.com/buy") && $0.hasSuffix("#no_universal_links")
            })
    }

    @Test func starBecomingQuestionStarLosesTheBarePrefix() throws {
        let result = Self.diff(#"{"/": "/p/*"}"#, #"{"/": "/p/?*"}"#)
        let change = try #require(result.changes.first)
        #expect(result.changes.count == 1)
        #expect(change.kind == .appToWeb)
        // One path, varied where no rule looks, each variant confirmed with the matchers.
        #expect(
            change.examples == [
                "https://example.com/p", "https://example.com/p?utm_source=review", "https://example.com/p#top",
            ])
    }

    @Test func queryItemConditionsAreDescribed() throws {
        let result = Self.diff(#"{"/": "/help/*"}"#, #"{"/": "/help/*", "?": {"articleNumber": "????"}}"#)
        let change = try #require(result.changes.first)
        #expect(change.kind == .appToWeb)
        #expect(change.description == "`/help/*`, which no rule matches now")
        for example in change.examples {
            let matcher = URLMatcher(file: Self.file(#"{"/": "/help/*", "?": {"articleNumber": "????"}}"#))
            #expect(matcher.match(example).verdict != .match)
        }
        let narrowed = Self.diff(#"{"/": "/help/*", "?": {"articleNumber": "????"}}"#, #"{"/": "/help/*"}"#)
        #expect(narrowed.changes.first?.kind == .webToApp)
    }

    /// A comparison cut short by its budget says so instead of claiming there is nothing more.
    @Test func aComparisonOverItsBudgetSaysSo() {
        let old = Self.file(#"{"/": "/a/*"}, {"/": "/b/*", "exclude": true}, {"/": "*c*d*e*"}"#)
        let new = Self.file(#"{"/": "/b/*", "exclude": true}, {"/": "*c*d*"}"#)
        let cut = DomainDiff(
            domain: "example.com", old: DiffSide(appleFile: old), new: DiffSide(appleFile: new),
            limits: ComparisonBudget.Limits(states: 1_000, edges: 10_000, bytes: 1 << 20, steps: 50))
        #expect(cut.notes.contains { $0.contains("iOS 13+: not compared: too complex") })
        #expect(!cut.isComplete && cut.summary.hasPrefix("not compared: too complex"))
        let whole = DomainDiff(domain: "example.com", old: DiffSide(appleFile: old), new: DiffSide(appleFile: new))
        #expect(whole.notes.isEmpty)
        #expect(!whole.changes.isEmpty)
    }

    @Test func servicesAndAFileWithoutApplinks() throws {
        let old = AssociationFile(webCredentials: ["ABCDE12345.a", "ABCDE12345.b"], authSrv: ["ABCDE12345.a"])
        let new = AssociationFile(webCredentials: ["ABCDE12345.b", "ABCDE12345.c"], appClips: ["ABCDE12345.a.Clip"])
        let diff = DomainDiff(domain: "example.com", old: DiffSide(appleFile: old), new: DiffSide(appleFile: new))
        #expect(diff.changes.isEmpty)
        #expect(
            diff.services == [
                ServiceChange(
                    service: "webcredentials", old: ["ABCDE12345.a", "ABCDE12345.b"],
                    new: ["ABCDE12345.b", "ABCDE12345.c"]),
                ServiceChange(service: "appclips", old: [], new: ["ABCDE12345.a.Clip"]),
                ServiceChange(service: "authsrv", old: ["ABCDE12345.a"], new: []),
            ])
        #expect(
            diff.summary
                == "no URL changes its answer; webcredentials +ABCDE12345.c -ABCDE12345.a; appclips +ABCDE12345.a.Clip; authsrv -ABCDE12345.a"
        )
    }

    @Test func anotherAppTakingOverIsAppToApp() throws {
        let old = AssociationFile.parse(
            SourceText(
                name: "a",
                bytes: Array(
                    #"{"applinks": {"details": [{"appIDs": ["ABCDE12345.a"], "components": [{"/": "/a/*"}]}, {"appIDs": ["ABCDE12345.b"], "components": [{"/": "*"}]}]}}"#
                        .utf8))
        ).file!
        let new = AssociationFile.parse(
            SourceText(
                name: "b",
                bytes: Array(
                    #"{"applinks": {"details": [{"appIDs": ["ABCDE12345.b"], "components": [{"/": "*"}]}, {"appIDs": ["ABCDE12345.a"], "components": [{"/": "/a/*"}]}]}}"#
                        .utf8))
        ).file!
        let result = Self.diff(old, new)
        let change = try #require(result.changes.first)
        #expect(result.changes.count == 1)
        #expect(change.kind == .appToApp)
        #expect(change.from == ["ABCDE12345.a"])
        #expect(change.to == ["ABCDE12345.b"])
    }
}

/// The same comparison for iOS 9-12's `paths`, Android 15's dynamic rules, variables, percent-encoding, case and
/// query dictionaries.
@Suite struct SemanticDiffPlatformTests {
    static func parse(_ text: String) -> AssociationFile {
        AssociationFile.parse(SourceText(name: "aasa.json", bytes: Array(text.utf8))).file!
    }

    static func change(_ old: String, _ new: String, legacy: Bool = false) -> [URLChange] {
        DomainDiff(
            domain: "example.com", old: DiffSide(appleFile: parse(old)), new: DiffSide(appleFile: parse(new)),
            legacy: legacy
        ).changes
    }

    static func legacyFile(_ paths: String) -> String {
        #"{"applinks": {"apps": [], "details": [{"appID": "ABCDE12345.com.example.app", "paths": [\#(paths)]}]}}"#
    }

    @Test func legacyPathsAreComparedForIOS9To12WhenAsked() throws {
        let old = Self.legacyFile(#""/a/*", "NOT /a/b""#)
        let new = Self.legacyFile(#""NOT /a/b", "/a/*""#)
        let modernOnly = Self.change(old, new)
        #expect(modernOnly.map(\.platform) == ["iOS 13+"])
        let both = Self.change(old, new, legacy: true)
        #expect(both.map(\.platform) == ["iOS 13+", "iOS 9-12"])
        let legacy = try #require(both.last)
        #expect(legacy.kind == .appToWeb)
        #expect(legacy.examples.first == "https://example.com/a/b")
        #expect(legacy.examples.count == 3)
        #expect(legacy.oldRule?.location == "applinks.details[0].paths[0]")
        #expect(legacy.newRule?.location == "applinks.details[0].paths[0]")
    }

    @Test func aVariableGainingAValueOpensItsURLs() throws {
        func file(_ values: String) -> String {
            #"{"applinks": {"substitutionVariables": {"category": [\#(values)]}, "details": [{"appIDs": ["ABCDE12345.com.example.app"], "components": [{"/": "/$(category)/*"}]}]}}"#
        }
        let changes = Self.change(file(#""shoes", "bags""#), file(#""shoes", "bags", "hats""#))
        let change = try #require(changes.first)
        #expect(changes.count == 1)
        #expect(change.kind == .webToApp)
        #expect(change.examples.first == "https://example.com/hats")
        #expect(change.examples.allSatisfy { $0.hasPrefix("https://example.com/hats") })
    }

    @Test func percentEncodedAndDecodedPatternsGiveEncodedExamples() throws {
        func file(_ component: String) -> String {
            #"{"applinks": {"details": [{"appIDs": ["ABCDE12345.com.example.app"], "components": [\#(component)]}]}}"#
        }
        let encoded = Self.change(file(#"{"/": "/caf%C3%A9/*"}"#), file(#"{"/": "/caf%C3%A9"}"#))
        #expect(encoded.count == 1)
        #expect(encoded.first?.examples.first?.hasPrefix("https://example.com/caf%C3%A9/") == true)
        let decoded = Self.change(
            file(#"{"/": "/café/*", "percentEncoded": false}"#), file(#"{"/": "/café", "percentEncoded": false}"#))
        #expect(decoded.count == 1)
        #expect(decoded.first?.kind == .appToWeb)
        #expect(decoded.first?.examples.first?.hasPrefix("https://example.com/caf%C3%A9/") == true)
        #expect(decoded.first?.description == "`/café/*` (decoded), which no rule matches now")
    }

    /// A pattern rewritten from its percent-encoded form to its decoded one (`percentEncoded: false`) matches the
    /// same URLs: rules that disagree about percentEncoded are compared on the text as the URL carries it.
    @Test func encodedAndDecodedSpellingsOfOnePattern() throws {
        func file(_ component: String) -> String {
            #"{"applinks": {"details": [{"appIDs": ["ABCDE12345.com.example.app"], "components": [\#(component)]}]}}"#
        }
        // The same URLs, but for escapes in lower-case hex, which only the decoded pattern matches.
        let encoded = file(#"{"/": "/caf%C3%A9/*"}"#)
        let rewritten = Self.change(encoded, file(#"{"/": "/café/*", "percentEncoded": false}"#))
        #expect(rewritten.count == 1, "\(rewritten)")
        #expect(rewritten.first?.kind == .webToApp)
        #expect(rewritten.first?.examples.first == "https://example.com/caf%C3%a9")
        // A decoded `?` is one character, which the URL may carry as two escapes.
        let one = Self.change(file(#"{"/": "/p/%C3%A9"}"#), file(#"{"/": "/p/?", "percentEncoded": false}"#))
        #expect(one.count == 1)
        #expect(one.first?.kind == .webToApp)
        #expect(one.first?.examples.allSatisfy { !$0.contains("%C3%A9") } == true)
        // Decoded `A` matches the URL's `%41` too; the encoded pattern `A` does not.
        let escaped = try #require(
            Self.change(file(#"{"/": "/A"}"#), file(#"{"/": "/A", "percentEncoded": false}"#)).first)
        #expect(escaped.kind == .webToApp)
        #expect(escaped.examples.first == "https://example.com/%41")
    }

    @Test func caseAndQueryDictionaries() throws {
        func file(_ component: String) -> String {
            #"{"applinks": {"details": [{"appIDs": ["ABCDE12345.com.example.app"], "components": [\#(component)]}]}}"#
        }
        let cased = try #require(
            Self.change(file(#"{"/": "/Help/*", "caseSensitive": false}"#), file(#"{"/": "/help/*"}"#)).first)
        #expect(cased.kind == .appToWeb)
        #expect(
            cased.examples.allSatisfy {
                $0.contains("/H") || $0.contains("/hE") || $0.contains("/heL") || $0.contains("/helP")
            })
        // `?*` needs the item; `*` takes its absence too (spec §2.4).
        let item = try #require(
            Self.change(file(#"{"/": "/s", "?": {"q": "?*"}}"#), file(#"{"/": "/s", "?": {"q": "*"}}"#)).first)
        #expect(item.kind == .webToApp)
        #expect(item.examples.first == "https://example.com/s")
        #expect(item.description == "`/s`, which no rule matched before")
        #expect(item.oldRule == nil)
        // Every instance of a repeated item must match (spec §2.4): `q=1&q=22` leaves the app.
        let repeated = Self.change(file(#"{"?": {"q": "*"}}"#), file(#"{"?": {"q": "?"}}"#))
        #expect(repeated.count == 1)
    }

    @Test func androidDynamicRulesPerPackage() throws {
        func links(_ rules: String) -> JSONValue {
            let text = #"""
                [{"relation": ["delegate_permission/common.handle_all_urls"], "target": {"namespace": "android_app",
                  "package_name": "com.example.app", "sha256_cert_fingerprints": ["14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5"]},
                  "relation_extensions": {"delegate_permission/common.handle_all_urls": {"dynamic_app_link_components": [\#(rules)]}}}]
                """#
            return try! JSONParser().parse(SourceText(name: "assetlinks.json", bytes: Array(text.utf8))).root.value
        }
        let file = AssociationFile()
        func diff(_ old: String, _ new: String) -> DomainDiff {
            DomainDiff(
                domain: "example.com", old: DiffSide(file: file, assetLinks: links(old)),
                new: DiffSide(file: file, assetLinks: links(new)))
        }
        let moved = diff(
            ##"{"#": "nav", "exclude": true}, {"/": "/p/*"}"##, ##"{"/": "/p/*"}, {"#": "nav", "exclude": true}"##)
        let change = try #require(moved.changes.first)
        #expect(moved.changes.count == 1)
        #expect(change.platform == "Android 15+ (com.example.app)")
        #expect(change.kind == .webToApp)
        #expect(change.examples.first == "https://example.com/p/#nav")
        #expect(change.oldRule?.location == "dynamic_app_link_components[0]")
        // Android needs the query item present (spec §7.1): `*` does not take its absence.
        let item = diff(#"{"/": "/s"}"#, #"{"/": "/s", "?": {"q": "*"}}"#)
        #expect(item.changes.first?.kind == .appToWeb)
        #expect(item.changes.first?.examples.first == "https://example.com/s")
        // Android's `*` stops at the first occurrence of the next character: `/a*b` misses `/abxb`.
        let star = diff(#"{"/": "/a*"}"#, #"{"/": "/a*b"}"#)
        #expect(star.changes.count == 1)
        #expect(star.changes.first?.examples.contains("https://example.com/abxb") == false)
        #expect(diff(#"{"/": "/p/*"}"#, #"{"/": "/p/*"}, {"/": "/p/*"}"#).changes.isEmpty)
    }
}
