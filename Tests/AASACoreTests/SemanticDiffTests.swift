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
        #expect(change.examples.first == "https://example.com/p")
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
