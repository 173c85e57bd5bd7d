import AASACore
import Testing

/// Several `details` entries, legacy `paths`, and how modern and legacy clients choose between `paths` and
/// `components` (spec §1.3, §2.2, §2.7, §2.8, §9).
@Suite struct URLMatcherEntriesTests {
    static let wwdcLegacy = AssociationFile(
        applinks: AppLinks(
            apps: [],
            details: [
                AppLinkDetails(
                    appID: "9JA89QQLNQ.com.apple.wwdc",
                    paths: ["/wwdc/news/", "NOT /videos/wwdc/2010/*", "/videos/wwdc/*", "NOT /videos/*"]),
                AppLinkDetails(appID: "ABCD1234.com.apple.wwdc", paths: ["*"]),
            ]))

    static let legacyCases: [(String, MatchResult.Verdict, Int?, Int?)] = [
        ("/wwdc/news/", .match, 0, 0),
        ("/wwdc/news", .match, 0, 0),
        ("/videos/wwdc/2010/keynote", .excluded, 0, 1),  // NOT stops before the broader include
        ("/videos/wwdc/2015/keynote", .match, 0, 2),
        ("/videos/other", .excluded, 0, 3),  // an exclusion in the first entry stops the search
        ("/somewhere/else", .match, 1, 0),
        ("/wwdc/news/?q=1#frag", .match, 0, 0),  // paths ignore query and fragment
        ("/WWDC/news/", .match, 1, 0),  // case-sensitive: falls through to the catch-all
    ]

    @Test(arguments: legacyCases, MatchMode.allCases)
    func legacyPathsStopAtTheFirstPositiveOrNegativeMatch(
        _ testCase: (String, MatchResult.Verdict, Int?, Int?), _ mode: MatchMode
    ) {
        // An entry with only `paths` reads the same in both modes.
        let result = URLMatcher(file: Self.wwdcLegacy, mode: mode).match(MatcherFixtures.url(testCase.0))
        #expect(result.verdict == testCase.1)
        #expect(result.detailsIndex == testCase.2)
        #expect(result.componentIndex == testCase.3)
        #expect(result.ruleKind == .path)
    }

    @Test func legacyResultNamesTheAppAndTheNotRule() {
        let matcher = URLMatcher(file: Self.wwdcLegacy, mode: .legacy)
        let matched = matcher.match(MatcherFixtures.url("/wwdc/news/"))
        #expect(matched.appIDs == ["9JA89QQLNQ.com.apple.wwdc"])
        #expect(matched.rule == "\"/wwdc/news/\"")
        let excluded = matcher.match(MatcherFixtures.url("/videos/wwdc/2010/x"))
        #expect(excluded.rule == "\"NOT /videos/wwdc/2010/*\"")
        #expect(excluded.appIDs.isEmpty)
    }

    static let dual = AssociationFile(
        applinks: AppLinks(
            details: [
                AppLinkDetails(
                    appID: MatcherFixtures.app, appIDs: [MatcherFixtures.app],
                    components: [ComponentPattern(path: "/new/*")], paths: ["/old/*"]),
                AppLinkDetails(appIDs: [MatcherFixtures.otherApp], components: [ComponentPattern(path: "*")]),
            ],
            defaults: ComponentPattern(caseSensitive: false)))

    @Test func modernClientsIgnorePathsWhenComponentsArePresent() {
        let matcher = URLMatcher(file: Self.dual)
        #expect(matcher.match(MatcherFixtures.url("/new/x")).appIDs == [MatcherFixtures.app])
        let old = matcher.match(MatcherFixtures.url("/old/x"))
        #expect(old.appIDs == [MatcherFixtures.otherApp])
        #expect(old.detailsIndex == 1)
    }

    @Test func legacyClientsIgnoreComponentsAppIDsAndDefaults() {
        let matcher = URLMatcher(file: Self.dual, mode: .legacy)
        #expect(matcher.match(MatcherFixtures.url("/old/x")).verdict == .match)
        #expect(matcher.match(MatcherFixtures.url("/new/x")).verdict == .noMatch)
        #expect(matcher.match(MatcherFixtures.url("/OLD/x")).verdict == .noMatch)  // defaults are iOS 13.5+
        let result = matcher.match(MatcherFixtures.url("/anything"))
        #expect(result.notes.contains { $0.contains("details[1] has no appID") })
    }

    @Test func legacyClientsTreatVariablesAsLiteralText() {
        let file = AssociationFile(
            applinks: AppLinks(details: [AppLinkDetails(appID: MatcherFixtures.app, paths: ["/$(lang)/*"])]))
        #expect(URLMatcher(file: file, mode: .legacy).match(MatcherFixtures.url("/$(lang)/x")).verdict == .match)
        #expect(URLMatcher(file: file, mode: .legacy).match(MatcherFixtures.url("/en/x")).verdict == .noMatch)
        #expect(URLMatcher(file: file, mode: .modern).match(MatcherFixtures.url("/en/x")).verdict == .match)
    }

    @Test func anEmptyComponentsArrayHidesPaths() {
        let file = AssociationFile(
            applinks: AppLinks(details: [
                AppLinkDetails(appID: MatcherFixtures.app, appIDs: [MatcherFixtures.app], components: [], paths: ["*"])
            ]))
        #expect(URLMatcher(file: file).match(MatcherFixtures.url("/x")).verdict == .noMatch)
        #expect(URLMatcher(file: file, mode: .legacy).match(MatcherFixtures.url("/x")).verdict == .match)
    }

    @Test func modernEntryWithoutComponentsIsReadByItsPaths() {
        let file = AssociationFile(
            applinks: AppLinks(
                details: [AppLinkDetails(appIDs: [MatcherFixtures.app], paths: ["NOT /admin/*", "/$(lang)/*"])],
                defaults: ComponentPattern(caseSensitive: false)))
        let matcher = URLMatcher(file: file)
        #expect(matcher.match(MatcherFixtures.url("/admin/x")).verdict == .excluded)
        #expect(matcher.match(MatcherFixtures.url("/EN/x")).verdict == .match)  // modern defaults apply
        #expect(matcher.match(MatcherFixtures.url("/en/x?q#f")).componentIndex == 1)
    }

    @Test func severalAppsAreTriedInArrayOrder() {
        let file = AssociationFile(
            applinks: AppLinks(details: [
                AppLinkDetails(
                    appIDs: [MatcherFixtures.app, "ABCDE12345.com.example.app2"],
                    components: [
                        ComponentPattern(path: "/private/*", exclude: true), ComponentPattern(path: "/a/*"),
                    ]),
                AppLinkDetails(appID: MatcherFixtures.otherApp, components: [ComponentPattern(path: "*")]),
            ]))
        let matcher = URLMatcher(file: file)
        let first = matcher.match(MatcherFixtures.url("/a/1"))
        #expect(first.appIDs == [MatcherFixtures.app, "ABCDE12345.com.example.app2"])
        #expect(first.detailsIndex == 0)
        let second = matcher.match(MatcherFixtures.url("/b"))
        #expect(second.appIDs == [MatcherFixtures.otherApp])  // modern clients read `appID` too
        #expect(second.detailsIndex == 1)
        #expect(matcher.match(MatcherFixtures.url("/private/x")).verdict == .excluded)
    }

    @Test func entriesNamingNoAppAreIgnored() {
        let file = AssociationFile(
            applinks: AppLinks(details: [
                AppLinkDetails(components: [ComponentPattern(path: "*")]),
                AppLinkDetails(appIDs: [], components: [ComponentPattern(path: "*", exclude: true)]),
                AppLinkDetails(appIDs: [MatcherFixtures.app], components: [ComponentPattern(path: "/x")]),
            ]))
        let matcher = URLMatcher(file: file)
        let miss = matcher.match(MatcherFixtures.url("/y"))
        #expect(miss.verdict == .noMatch)
        #expect(miss.notes.count == 2)
        #expect(miss.notes[0].contains("details[0] names no app"))
        let hit = matcher.match(MatcherFixtures.url("/x"))
        #expect(hit.detailsIndex == 2)
        #expect(hit.componentIndex == 0)
    }

    @Test func aFileWithoutApplinksMatchesNothing() {
        let result = URLMatcher(file: AssociationFile(webCredentials: [MatcherFixtures.app])).match("https://e.com/")
        #expect(result.verdict == .noMatch)
        #expect(result.nearMisses.isEmpty)
    }
}
