import AASACore
import Testing

/// Spec §10.1–§10.4, vectors 1–38, exactly as tabulated.
@Suite struct URLMatcherSpecVectorTests {
    struct Vector: CustomTestStringConvertible, Sendable {
        var number: Int
        var url: String
        var verdict: MatchResult.Verdict
        var componentIndex: Int?
        var testDescription: String { "#\(number) \(url) → \(verdict.rawValue)" }
    }

    // MARK: §10.1 Apple's canonical components example

    static let canonical = MatcherFixtures.file([
        ComponentPattern(fragment: "no_universal_links", exclude: true, comment: "..."),
        ComponentPattern(path: "/buy/*"),
        ComponentPattern(path: "/help/website/*", exclude: true),
        ComponentPattern(path: "/help/*", query: .items([QueryItemPattern(name: "articleNumber", pattern: "????")])),
    ])

    static let canonicalVectors: [Vector] = [
        Vector(number: 1, url: "/buy/shoes", verdict: .match, componentIndex: 1),
        Vector(number: 2, url: "/buy/", verdict: .match, componentIndex: 1),
        Vector(number: 3, url: "/buy", verdict: .match, componentIndex: 1),
        Vector(number: 4, url: "/buy/shoes#no_universal_links", verdict: .excluded, componentIndex: 0),
        Vector(number: 5, url: "/buy/shoes#other", verdict: .match, componentIndex: 1),
        Vector(number: 6, url: "/help/website/faq", verdict: .excluded, componentIndex: 2),
        Vector(number: 7, url: "/help/website/faq?articleNumber=1234", verdict: .excluded, componentIndex: 2),
        Vector(number: 8, url: "/help/article?articleNumber=1234", verdict: .match, componentIndex: 3),
        Vector(number: 9, url: "/help/article?articleNumber=123", verdict: .noMatch),
        Vector(number: 10, url: "/help/article?articleNumber=12345", verdict: .noMatch),
        Vector(number: 11, url: "/help/article", verdict: .noMatch),
        Vector(number: 12, url: "/help/article?articleNumber=1234&utm_source=x", verdict: .match, componentIndex: 3),
        Vector(number: 13, url: "/BUY/shoes", verdict: .noMatch),
        Vector(number: 14, url: "/other", verdict: .noMatch),
        Vector(number: 15, url: "/buy/shoes?x=1", verdict: .match, componentIndex: 1),
    ]

    @Test(arguments: canonicalVectors)
    func canonicalExampleDecidesLikeApple(_ vector: Vector) {
        let result = URLMatcher(file: Self.canonical).match(MatcherFixtures.url(vector.url))
        #expect(result.verdict == vector.verdict)
        #expect(result.componentIndex == vector.componentIndex)
        #expect(result.detailsIndex == (vector.componentIndex == nil ? nil : 0))
        #expect(result.appIDs == (vector.verdict == .match ? [MatcherFixtures.app] : []))
    }

    // MARK: §10.2 WWDC19 query example

    static let wwdc = MatcherFixtures.file([
        ComponentPattern(
            path: "/help/*",
            query: .items([
                QueryItemPattern(name: "articleNumber", pattern: "????"),
                QueryItemPattern(name: "articleName", pattern: "?*"),
            ]))
    ])

    static let wwdcVectors: [Vector] = [
        Vector(number: 16, url: "/help/a?articleNumber=1234&articleName=foo", verdict: .match, componentIndex: 0),
        Vector(number: 17, url: "/help/a?articleNumber=1234", verdict: .noMatch),
        Vector(number: 18, url: "/help/a?articleNumber=1234&articleName=", verdict: .noMatch),
        Vector(number: 19, url: "/help/a?articleNumber=1234&articleName", verdict: .noMatch),
        Vector(number: 20, url: "/help/a?articleNumber=1234&articleName=x&articleNumber=12", verdict: .noMatch),
        Vector(
            number: 21, url: "/help/a?articleNumber=1234&articleName=x&articleNumber=5678", verdict: .match,
            componentIndex: 0),
        Vector(number: 22, url: "/help/?articleName=x&articleNumber=1234", verdict: .match, componentIndex: 0),
    ]

    @Test(arguments: wwdcVectors)
    func queryDictionaryFollowsWWDC19(_ vector: Vector) {
        let result = URLMatcher(file: Self.wwdc).match(MatcherFixtures.url(vector.url))
        #expect(result.verdict == vector.verdict)
        #expect(result.componentIndex == vector.componentIndex)
    }

    // MARK: §10.3 Absent-item pitfall

    static func pitfall(_ pattern: String) -> AssociationFile {
        MatcherFixtures.file([
            ComponentPattern(
                query: .items([QueryItemPattern(name: "no_universal_links", pattern: pattern)]), exclude: true),
            ComponentPattern(path: "/*"),
        ])
    }

    static let pitfallVectors: [(pattern: String, vector: Vector)] = [
        ("*", Vector(number: 23, url: "/room/1", verdict: .excluded, componentIndex: 0)),
        ("*", Vector(number: 24, url: "/room/1?no_universal_links=1", verdict: .excluded, componentIndex: 0)),
        ("?*", Vector(number: 25, url: "/room/1", verdict: .match, componentIndex: 1)),
        ("?*", Vector(number: 26, url: "/room/1?no_universal_links=1", verdict: .excluded, componentIndex: 0)),
        ("?*", Vector(number: 27, url: "/room/1?no_universal_links", verdict: .match, componentIndex: 1)),
    ]

    @Test(arguments: pitfallVectors)
    func absentQueryItemCountsAsEmpty(_ pattern: String, _ vector: Vector) {
        let result = URLMatcher(file: Self.pitfall(pattern)).match(MatcherFixtures.url(vector.url))
        #expect(result.verdict == vector.verdict)
        #expect(result.componentIndex == vector.componentIndex)
    }

    // MARK: §10.4 Wildcard forms

    static let wildcardVectors: [(pattern: String, vector: Vector)] = [
        ("/sourdough/?*", Vector(number: 28, url: "/sourdough/a", verdict: .match, componentIndex: 0)),
        ("/sourdough/?*", Vector(number: 29, url: "/sourdough/", verdict: .noMatch)),
        ("/sourdough/?*", Vector(number: 30, url: "/sourdough/a/b", verdict: .match, componentIndex: 0)),
        ("/books/1?", Vector(number: 31, url: "/books/12", verdict: .match, componentIndex: 0)),
        ("/books/1?", Vector(number: 32, url: "/books/123", verdict: .noMatch)),
        ("/books/1?", Vector(number: 33, url: "/books/1", verdict: .noMatch)),
        (
            "/foo/*/bar/201?/mypage",
            Vector(number: 34, url: "/foo/x/y/bar/2016/mypage", verdict: .match, componentIndex: 0)
        ),
        ("/foo/*/bar/201?/mypage", Vector(number: 35, url: "/foo/bar/2016/mypage", verdict: .noMatch)),
        ("*", Vector(number: 36, url: "/", verdict: .match, componentIndex: 0)),
        ("/", Vector(number: 37, url: "/", verdict: .match, componentIndex: 0)),
        ("/", Vector(number: 38, url: "/x", verdict: .noMatch)),
    ]

    @Test(arguments: wildcardVectors)
    func wildcardFormsMatchWholeComponent(_ pattern: String, _ vector: Vector) {
        let result = URLMatcher(file: MatcherFixtures.file([ComponentPattern(path: pattern)]))
            .match(MatcherFixtures.url(vector.url))
        #expect(result.verdict == vector.verdict)
        #expect(result.componentIndex == vector.componentIndex)
    }

    @Test func everySpecVectorIsCovered() {
        let numbers =
            Self.canonicalVectors.map(\.number) + Self.wwdcVectors.map(\.number)
            + Self.pitfallVectors.map(\.vector.number) + Self.wildcardVectors.map(\.vector.number)
        #expect(numbers.sorted() == Array(1...38))
    }
}
