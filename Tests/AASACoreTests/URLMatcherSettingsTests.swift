import AASACore
import Testing

/// `caseSensitive`, `percentEncoded` and the other keys inherited from `defaults` (spec §1.7, §2.5, §2.6).
@Suite struct URLMatcherSettingsTests {
    struct Levels: CustomTestStringConvertible, Sendable {
        var domain: Bool?
        var app: Bool?
        var component: Bool?
        var matches: Bool
        var testDescription: String {
            "domain \(domain.map(String.init) ?? "-") app \(app.map(String.init) ?? "-") component \(component.map(String.init) ?? "-")"
        }
    }

    // Spec §1.7: the more specific level overrides the less specific; built-in default is case-sensitive.
    static let caseLevels: [Levels] = [
        Levels(domain: nil, app: nil, component: nil, matches: false),
        Levels(domain: false, app: nil, component: nil, matches: true),
        Levels(domain: nil, app: false, component: nil, matches: true),
        Levels(domain: nil, app: nil, component: false, matches: true),
        Levels(domain: false, app: true, component: nil, matches: false),
        Levels(domain: true, app: false, component: nil, matches: true),
        Levels(domain: nil, app: false, component: true, matches: false),
        Levels(domain: true, app: true, component: false, matches: true),
        Levels(domain: false, app: false, component: true, matches: false),
    ]

    @Test(arguments: caseLevels)
    func caseSensitivityMostSpecificLevelWins(_ levels: Levels) {
        let file = MatcherFixtures.file(
            [ComponentPattern(path: "/Buy/*", fragment: "Top", caseSensitive: levels.component)],
            appDefaults: levels.app.map { ComponentPattern(caseSensitive: $0) },
            domainDefaults: levels.domain.map { ComponentPattern(caseSensitive: $0) })
        let matcher = URLMatcher(file: file)
        #expect(matcher.match(MatcherFixtures.url("/bUY/shoes#tOP")).verdict == (levels.matches ? .match : .noMatch))
        #expect(matcher.match(MatcherFixtures.url("/Buy/shoes#Top")).verdict == .match)
    }

    @Test func caseInsensitiveRulesFoldQueryNamesValuesAndWholeQueries() {
        let matcher = URLMatcher(
            file: MatcherFixtures.file(
                [
                    ComponentPattern(path: "/a", query: .items([QueryItemPattern(name: "ID", pattern: "X?")])),
                    ComponentPattern(path: "/b", query: .whole("Q=1")),
                    ComponentPattern(
                        path: "/c", query: .items([QueryItemPattern(name: "ID", pattern: "X?")]), caseSensitive: true),
                ], appDefaults: ComponentPattern(caseSensitive: false)))
        #expect(matcher.match(MatcherFixtures.url("/A?id=x1")).verdict == .match)
        #expect(matcher.match(MatcherFixtures.url("/a?Id=X1")).verdict == .match)
        #expect(matcher.match(MatcherFixtures.url("/b?q=1")).verdict == .match)
        #expect(matcher.match(MatcherFixtures.url("/c?id=X1")).verdict == .noMatch)  // name case matters here
        #expect(matcher.match(MatcherFixtures.url("/c?ID=X1")).verdict == .match)
    }

    @Test func caseFoldingCoversNonASCIILetters() {
        #expect(
            MatcherFixtures.verdict(
                pattern: "/ÉTÉ/*", path: "/%C3%A9t%C3%A9/x", caseSensitive: false, percentEncoded: false)
                == .match)
        #expect(MatcherFixtures.verdict(pattern: "/ÉTÉ/*", path: "/%C3%A9t%C3%A9/x", percentEncoded: false) == .noMatch)
    }

    // Spec §2.6 and the swcutil observations it quotes.
    static let percentCases: [(pattern: String, path: String, percentEncoded: Bool?, matches: Bool)] = [
        ("/a%20b", "/a%20b", nil, true),  // default: compared in encoded form
        ("/a b", "/a%20b", nil, false),
        ("/a b", "/a%20b", false, true),  // false: URL decoded, pattern literal
        ("/a%20b", "/a%20b", false, false),  // a pattern containing %20 no longer matches
        ("/a/b", "/a%2Fb", nil, false),  // %2F is not a separator in encoded form
        ("/a/b", "/a%2Fb", false, true),  // …but is once decoded
        ("/caf%C3%A9", "/caf%C3%A9", nil, true),
        ("/caf%C3%A9", "/caf%c3%a9", nil, false),  // hex case is compared as written
        ("/café", "/caf%C3%A9", false, true),
        ("/café", "/caf%C3%A9", nil, false),  // non-ASCII pattern under the default never matches
        ("/café", "/caf%c3%a9", false, true),
        (
            "/中國哲學書電子化計劃/?*",
            "/%E4%B8%AD%E5%9C%8B%E5%93%B2%E5%AD%B8%E6%9B%B8%E9%9B%BB%E5%AD%90%E5%8C%96%E8%A8%88%E5%8A%83/x", false, true
        ),
        ("/哈哈/?*", "/哈哈/x", false, true),  // literal Unicode in the input URL is encoded first
        ("/%E5%93%88%E5%93%88/?*", "/哈哈/x", nil, true),
        ("/100%zz", "/100%zz", false, true),  // invalid escapes are kept as written
        ("/%FF", "/%FF", false, true),  // not UTF-8 once decoded: compared undecoded
    ]

    @Test(arguments: percentCases)
    func percentEncodedDecidesWhichFormIsCompared(
        _ pattern: String, _ path: String, _ percentEncoded: Bool?, _ matches: Bool
    ) {
        #expect(
            MatcherFixtures.verdict(pattern: pattern, path: path, percentEncoded: percentEncoded)
                == (matches ? .match : .noMatch))
    }

    @Test func percentEncodedInheritsAcrossLevels() {
        let file = MatcherFixtures.file(
            [ComponentPattern(path: "/a b"), ComponentPattern(path: "/c d", percentEncoded: true)],
            domainDefaults: ComponentPattern(percentEncoded: false))
        let matcher = URLMatcher(file: file)
        #expect(matcher.match(MatcherFixtures.url("/a%20b")).verdict == .match)
        #expect(matcher.match(MatcherFixtures.url("/c%20d")).verdict == .noMatch)
    }

    @Test func queryItemsAreComparedDecodedAndPlusIsNotASpace() {
        // Spec §2.6: items compared as URLQueryItem gives them, which leaves `+` alone.
        let matcher = URLMatcher(
            file: MatcherFixtures.file([
                ComponentPattern(path: "/s", query: .items([QueryItemPattern(name: "q", pattern: "a b")])),
                ComponentPattern(path: "/p", query: .items([QueryItemPattern(name: "q", pattern: "a+b")])),
                ComponentPattern(path: "/n", query: .items([QueryItemPattern(name: "a b", pattern: "1")])),
            ]))
        #expect(matcher.match(MatcherFixtures.url("/s?q=a%20b")).verdict == .match)
        #expect(matcher.match(MatcherFixtures.url("/s?q=a+b")).verdict == .noMatch)
        #expect(matcher.match(MatcherFixtures.url("/p?q=a+b")).verdict == .match)
        #expect(matcher.match(MatcherFixtures.url("/p?q=a%2Bb")).verdict == .match)
        #expect(matcher.match(MatcherFixtures.url("/n?a%20b=1")).verdict == .match)
    }

    @Test func pathQueryFragmentAndExcludeAreInheritedFromDefaults() {
        // Spec §1.7 (swcutil, observed): `/`, `?`, `exclude` in defaults apply to components lacking them.
        let file = MatcherFixtures.file(
            [
                ComponentPattern(fragment: "x"),
                ComponentPattern(path: "/private/*"),
                ComponentPattern(path: "/public/*", exclude: false),
            ],
            appDefaults: ComponentPattern(exclude: true),
            domainDefaults: ComponentPattern(
                path: "/shop/*", query: .items([QueryItemPattern(name: "ref", pattern: "?*")])))
        let matcher = URLMatcher(file: file)
        let first = matcher.match(MatcherFixtures.url("/shop/a?ref=1#x"))
        #expect(first.verdict == .excluded)
        #expect(first.componentIndex == 0)
        #expect(first.reason.contains("\"/\" from applinks.defaults"))
        #expect(matcher.match(MatcherFixtures.url("/shop/a#x")).componentIndex != 0)  // inherited `?` fails
        #expect(matcher.match(MatcherFixtures.url("/private/a?ref=1")).verdict == .excluded)
        let pub = matcher.match(MatcherFixtures.url("/public/a?ref=1"))
        #expect(pub.verdict == .match)
        #expect(pub.componentIndex == 2)
        #expect(matcher.match(MatcherFixtures.url("/public/a")).verdict == .noMatch)
    }

    @Test func fragmentIsInheritedAndTheMostSpecificPatternWins() {
        let file = MatcherFixtures.file(
            [ComponentPattern(), ComponentPattern(path: "/own", fragment: "own")],
            appDefaults: ComponentPattern(path: "/app/*"),
            domainDefaults: ComponentPattern(path: "/domain/*", fragment: "f"))
        let matcher = URLMatcher(file: file)
        #expect(matcher.match(MatcherFixtures.url("/app/x#f")).componentIndex == 0)
        #expect(matcher.match(MatcherFixtures.url("/domain/x#f")).verdict == .noMatch)
        #expect(matcher.match(MatcherFixtures.url("/app/x")).verdict == .noMatch)
        #expect(matcher.match(MatcherFixtures.url("/own#own")).componentIndex == 1)
    }
}
