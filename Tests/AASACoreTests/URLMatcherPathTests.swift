import AASACore
import Testing

/// Path patterns: wildcards, the slash rules of spec §2.1, characters vs bytes, linear time.
@Suite struct URLMatcherPathTests {
    // Each (pattern, URL path, matches?) follows a sentence of spec §2.1 or a decision documented in code.
    static let slashRules: [(String, String, Bool)] = [
        ("/buy/*", "/buy", true),  // a pattern ending in `/*` also matches its bare prefix
        ("/buy/*", "/buy/", true),
        ("/buy/*", "/buy//", true),
        ("/buy/*", "/buy/42", true),
        ("/buy/*", "/buy/42/", true),
        ("/buy/*", "/buyer", false),
        ("/buy/*", "/bu", false),
        ("/buy", "/buy", true),  // trailing slashes are insignificant on both sides
        ("/buy", "/buy/", true),
        ("/buy/", "/buy", true),
        ("/buy/", "/buy//", true),
        ("abc", "/abc", true),  // bare pattern, Apple's own example
        ("abc", "/abcd", false),
        ("abc", "/xabc", false),
        ("//abc", "/abc", true),
        ("buy/*", "/buy/42", true),
        ("abc/*", "/abc", true),
        ("*abc", "/xabc", true),
        ("/", "", true),  // `/` matches the empty path
        ("/", "/", true),
        ("/", "//", true),
        ("/a/*/c", "/a/c", false),  // a mid-pattern `*` still needs its slashes
        ("/a/*/c", "/a//c", true),
        ("/a/*/c", "/a/b/c", true),
        ("/a/b", "/a//b", false),  // inner slashes are compared as written
        ("/id/????", "/id/481", false),  // no slash is *added* to the path
        ("/id/????", "/id/481/", false),
        ("/buy/**", "/buy", true),  // our reading: `/` followed only by stars
        ("/buy/?*", "/buy", false),
        ("/buy/?*", "/buy/", false),
        ("/a/b/*", "/a/b", true),
        ("/buy*", "/buy", true),
        ("/$(lang)/*", "/en", true),  // the bare-prefix rule also holds for patterns run as an automaton
        ("/$(lang)/*", "/en/x", true),
        ("/$(lang)/*", "/english", false),
        ("/buy//*", "/buy", true),  // the bare prefix is a path pattern: its end slashes do not count either
        ("/buy//*", "/buy//42", true),
        ("/buy//*", "/buy/42", false),
        ("/buy//?*", "/buy", false),
        ("/$(lang)//*", "/en", true),
        ("*", "", true),
        ("*", "/anything/at/all", true),
        ("?", "/", false),
        ("", "/", true),
        ("", "/x", false),
    ]

    @Test(arguments: slashRules)
    func slashesAtTheEndsAreInsignificant(_ pattern: String, _ path: String, _ matches: Bool) {
        #expect(MatcherFixtures.verdict(pattern: pattern, path: path) == (matches ? .match : .noMatch))
    }

    static let wildcards: [(String, String, Bool)] = [
        ("/a*c", "/abbbc", true),
        ("/a*c", "/ac", true),
        ("/a*c", "/abcd", false),
        ("/a?c", "/abc", true),
        ("/a?c", "/ac", false),
        ("/a?c", "/a/c", true),  // `?` is any one character, `/` included
        ("/a?*c", "/ac", false),
        ("/a?*c", "/abc", true),
        ("/*/*", "/x/y/z", true),  // `*` crosses `/`
        ("/*.html", "/dir/page.html", true),
        ("/*.html", "/dir/page.htm", false),
        ("/x*y*z", "/xyz", true),
        ("/x*y*z", "/xzy", false),
    ]

    @Test(arguments: wildcards)
    func wildcardsMatchTheWholePath(_ pattern: String, _ path: String, _ matches: Bool) {
        #expect(MatcherFixtures.verdict(pattern: pattern, path: path) == (matches ? .match : .noMatch))
    }

    // Spec §2.1: `?` counts characters, not bytes. Decoded text only exists under percentEncoded false.
    static let characters: [(String, String, Bool?, Bool)] = [
        ("/?", "/%C3%A9", false, true),  // é is two UTF-8 bytes, one character
        ("/??", "/%C3%A9", false, false),
        ("/?", "/%F0%9F%98%80", false, true),  // 😀: four bytes
        ("/x?y", "/x%E4%B8%AD%E5%9C%8B", false, false),
        ("/??", "/%E4%B8%AD%E5%9C%8B", false, true),  // 中國
        ("/??????", "/%C3%A9", nil, true),  // encoded form: `%C3%A9` is six characters
        ("/?", "/%C3%A9", nil, false),
        ("/?", "/é", false, true),  // a literal é in the input URL is encoded, then decoded again
    ]

    @Test(arguments: characters)
    func questionMarkCountsCharactersNotBytes(
        _ pattern: String, _ path: String, _ percentEncoded: Bool?, _ matches: Bool
    ) {
        #expect(
            MatcherFixtures.verdict(pattern: pattern, path: path, percentEncoded: percentEncoded)
                == (matches ? .match : .noMatch))
    }

    /// At the longest URL that is matched (``MatchURL/maximumLength``).
    @Test func starsDoNotBacktrackExponentially() {
        let text = "/" + String(repeating: "a", count: 2_000)
        let pattern = "*a*a*a*a*a*a*a*a*a*a*a*b"
        #expect(MatcherFixtures.verdict(pattern: pattern, path: text) == .noMatch)
        #expect(MatcherFixtures.verdict(pattern: pattern, path: text + "b") == .match)
        #expect(
            MatcherFixtures.verdict(pattern: "/" + String(repeating: "*a", count: 30) + "?*b", path: text) == .noMatch)
    }

    @Test func variableAndQueryPatternsAreLinearToo() {
        let long = String(repeating: "a", count: 2_000)
        let file = MatcherFixtures.file(
            [
                ComponentPattern(path: "/$(v)$(v)$(v)b"),
                ComponentPattern(path: "/x", query: .items([QueryItemPattern(name: "q", pattern: "*a*a*a*a*a*a*a*b")])),
                ComponentPattern(path: "/y", fragment: "*a*a*a*a*a*a*a*a*a*b"),
            ],
            variables: [SubstitutionVariable(name: "v", values: ["*a*a*", "a*a", "*"])])
        let matcher = URLMatcher(file: file)
        #expect(matcher.match(MatcherFixtures.url("/" + long)).verdict == .noMatch)
        #expect(matcher.match(MatcherFixtures.url("/" + long + "b")).componentIndex == 0)
        #expect(matcher.match(MatcherFixtures.url("/x?q=" + long)).verdict == .noMatch)
        #expect(matcher.match(MatcherFixtures.url("/y#" + long)).verdict == .noMatch)
        #expect(matcher.match(MatcherFixtures.url("/y#" + long + "b")).componentIndex == 2)
    }

    @Test func fragmentPatterns() {
        let matcher = URLMatcher(
            file: MatcherFixtures.file([
                ComponentPattern(path: "/a", fragment: "?*"),
                ComponentPattern(path: "/b", fragment: ""),
                ComponentPattern(path: "/c", fragment: "sec-??"),
            ]))
        #expect(matcher.match(MatcherFixtures.url("/a")).verdict == .noMatch)  // absent fragment = ""
        #expect(matcher.match(MatcherFixtures.url("/a#x")).verdict == .match)
        #expect(matcher.match(MatcherFixtures.url("/b")).verdict == .match)
        #expect(matcher.match(MatcherFixtures.url("/b#")).verdict == .match)
        #expect(matcher.match(MatcherFixtures.url("/b#x")).verdict == .noMatch)
        #expect(matcher.match(MatcherFixtures.url("/c#sec-12")).verdict == .match)
        #expect(matcher.match(MatcherFixtures.url("/c#sec-1")).verdict == .noMatch)
    }

    @Test func queryStringFormMatchesTheWholeRawQuery() {
        let matcher = URLMatcher(
            file: MatcherFixtures.file([
                ComponentPattern(path: "/a", query: .whole("a=1")),
                ComponentPattern(path: "/b", query: .whole("?*")),
                ComponentPattern(path: "/c", query: .whole("*")),
                ComponentPattern(path: "/d", query: .whole("q=a%20b")),
            ]))
        #expect(matcher.match(MatcherFixtures.url("/a?a=1")).verdict == .match)
        #expect(matcher.match(MatcherFixtures.url("/a?a=1&b=2")).verdict == .noMatch)
        #expect(matcher.match(MatcherFixtures.url("/a")).verdict == .noMatch)
        #expect(matcher.match(MatcherFixtures.url("/b")).verdict == .noMatch)
        #expect(matcher.match(MatcherFixtures.url("/b?x")).verdict == .match)
        #expect(matcher.match(MatcherFixtures.url("/c")).verdict == .match)
        #expect(matcher.match(MatcherFixtures.url("/d?q=a%20b")).verdict == .match)  // raw, still encoded
        #expect(matcher.match(MatcherFixtures.url("/d?q=a b")).verdict == .match)  // typed space is encoded
        #expect(matcher.match(MatcherFixtures.url("/d?q=a+b")).verdict == .noMatch)
    }

    @Test func keysARuleLeavesOutMatchAnything() {
        let matcher = URLMatcher(file: MatcherFixtures.file([ComponentPattern(comment: "everything")]))
        for suffix in ["", "/", "/x/y?z=1#f", "?q", "#frag"] {
            #expect(matcher.match(MatcherFixtures.url(suffix)).verdict == .match)
        }
    }
}
