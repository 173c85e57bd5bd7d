import AASACore
import Testing

/// What a result reports: the deciding rule as written, near misses, JSON, and unusable input.
@Suite struct MatchResultTests {
    static let matcher = URLMatcher(file: URLMatcherSpecVectorTests.canonical)

    @Test func matchNamesTheRuleAsWritten() {
        let result = Self.matcher.match("https://example.com/buy/shoes")
        #expect(result.rule == #"{"/": "/buy/*"}"#)
        #expect(result.ruleKind == .component)
        #expect(result.reason.contains("applinks.details[0].components[1]"))
        #expect(result.nearMisses.isEmpty)
        let excluded = Self.matcher.match("https://example.com/x#no_universal_links")
        #expect(excluded.rule == ##"{"#": "no_universal_links", "exclude": true, "comment": "..."}"##)
        #expect(excluded.reason.contains("\"exclude\": true"))
    }

    @Test func nearMissesRankTheClosestRuleFirst() {
        let result = Self.matcher.match("https://example.com/help/article")
        #expect(result.verdict == .noMatch)
        // Exclusions do not explain a miss; the two inclusion rules remain, the one whose path matched first.
        #expect(result.nearMisses.map(\.componentIndex) == [3, 1])
        let closest = result.nearMisses[0]
        #expect(closest.matchedParts == 1)
        #expect(closest.specifiedParts == 2)
        #expect(closest.reason.hasPrefix("path matched, query item `articleNumber` was absent"))
        #expect(closest.rule == #"{"/": "/help/*", "?": {"articleNumber": "????"}}"#)
        #expect(result.nearMisses[1].reason == "path did not match: pattern `/buy/*` vs `/help/article`")
    }

    static let reasons: [(String, String)] = [
        ("/help/a?articleNumber=123", "query item `articleNumber` value `123` does not match `????`"),
        (
            "/help/a?articleNumber=1234&articleNumber=1",
            "query item `articleNumber` is repeated and the instance `1` does not match `????`"
        ),
        ("/help/a?articleNumber", "query item `articleNumber` had no value"),
        ("/sell/x", "path did not match: pattern `/help/*` vs `/sell/x`"),
    ]

    @Test(arguments: reasons)
    func nearMissReasonsSayWhatFailed(_ suffix: String, _ expected: String) {
        let result = Self.matcher.match("https://example.com" + suffix)
        #expect(result.nearMisses.first { $0.componentIndex == 3 }?.reason.contains(expected) == true)
    }

    @Test func nearMissesAreLimited() {
        let result = Self.matcher.match("https://example.com/nothing", nearMissLimit: 1)
        #expect(result.nearMisses.count == 1)
        #expect(result.nearMisses[0].componentIndex == 1)  // ties keep file order
    }

    @Test func explanationListsVerdictReasonAndClosestRules() {
        let text = Self.matcher.match("https://example.com/help/article").explanation
        #expect(
            text.hasPrefix(
                "https://example.com/help/article: no-match\nno rule matched (4 rules in 1 details entry checked)"))
        #expect(text.contains("closest rules:\n  applinks.details[0].components[3] {\"/\": \"/help/*\""))
    }

    @Test func jsonIsOneCompactObjectWithStableKeys() {
        let result = Self.matcher.match("https://example.com/buy/shoes")
        #expect(
            result.json()
                == #"{"url":"https://example.com/buy/shoes","verdict":"match","appIDs":["ABCDE12345.com.example.app"],"detailsIndex":0,"componentIndex":1,"ruleKind":"components","rule":"{\"/\": \"/buy/*\"}","reason":"matched by applinks.details[0].components[1]: opens ABCDE12345.com.example.app","nearMisses":[],"notes":[]}"#
        )
        let miss = Self.matcher.match("https://example.com/o\"ther", nearMissLimit: 1).json()
        #expect(
            miss.contains(#""url":"https://example.com/o\"ther","verdict":"no-match","appIDs":[],"detailsIndex":null"#))
        #expect(
            miss.contains(
                #""nearMisses":[{"detailsIndex":0,"componentIndex":1,"ruleKind":"components","rule":"{\"/\": \"/buy/*\"}","reason":"path did not match: pattern `/buy/*` vs `/o%22ther`","matchedParts":0,"specifiedParts":1}]"#
            ))
    }

    @Test func jsonEscapesControlCharacters() {
        let result = MatchResult(url: "a\u{1}b\n\\", verdict: .invalidURL, reason: "tab\there")
        #expect(result.json().hasPrefix(#"{"url":"a\u0001b\n\\","verdict":"invalid-url""#))
        #expect(result.json().contains(#""reason":"tab\there""#))
    }

    static let invalid: [String] = [
        "", "   ", "example.com/buy", "ftp://example.com/buy", "mailto:x@example.com", "https:/example.com",
        "https://", "https:///buy", "https://example.com:99999/", "https://example.com:8a/", "buy/x",
    ]

    @Test(arguments: invalid)
    func unusableInputIsAnInvalidURLVerdict(_ input: String) {
        let result = Self.matcher.match(input)
        #expect(result.verdict == .invalidURL)
        #expect(result.json().contains("\"verdict\":\"invalid-url\""))
        #expect(throws: URLParseError.self) { try MatchURL(parsing: input) }
    }

    static let accepted: [(String, MatchResult.Verdict)] = [
        ("/buy/x", .match),  // path-only input is matched as if on this domain
        ("/buy/x#no_universal_links", .excluded),
        ("HTTPS://EXAMPLE.COM/buy/x", .match),
        ("http://example.com/buy/x", .match),
        ("https://user:pw@example.com:8443/buy/x", .match),
        ("  https://example.com/buy/x\n", .match),
        ("https://example.com", .noMatch),
        ("https://[::1]:443/buy/1", .match),
    ]

    @Test(arguments: accepted)
    func acceptedInputForms(_ input: String, _ verdict: MatchResult.Verdict) {
        #expect(Self.matcher.match(input).verdict == verdict)
    }

    @Test func urlSplitterKeepsThePathAsWritten() throws {
        let url = try MatchURL(parsing: "HTTPS://User@Example.COM:8080/a//b/../c%2f?x=1&y#frag#2")
        #expect(url.scheme == "https")
        #expect(url.host == "example.com")
        #expect(url.port == 8080)
        #expect(url.path == "/a//b/../c%2f")
        #expect(url.query == "x=1&y")
        #expect(url.fragment == "frag%232")
        let bare = try MatchURL(parsing: "https://example.com?q")
        #expect(bare.path == "")
        #expect(bare.query == "q")
        #expect(bare.fragment == nil)
        #expect(try MatchURL(parsing: "/a b/é").path == "/a%20b/%C3%A9")
    }

    @Test func urlSplitterReadsAuthoritiesAsRFC3986Says() throws {
        let zeros = try MatchURL(parsing: "https://example.com:000443/x")
        #expect(zeros.port == 443)
        let literal = try MatchURL(parsing: "https://[2001:DB8::1]:8443/x?y")
        #expect(literal.host == "[2001:db8::1]")
        #expect(literal.port == 8443)
        #expect(literal.path == "/x")
        let bracketed = try MatchURL(parsing: "https://[::1]/")
        #expect(bracketed.host == "[::1]")
        #expect(bracketed.port == nil)
        let emptyPort = try MatchURL(parsing: "https://a:b@EXAMPLE.com:/p")
        #expect(emptyPort.host == "example.com")
        #expect(emptyPort.port == nil)
        // A host outside ASCII is lowercased as Unicode text, one in ASCII byte by byte.
        #expect(try MatchURL(parsing: "https://ÉCOLE.Example/").host == "école.example")
        #expect(try MatchURL(parsing: "https://Shop.Example#top").fragment == "top")
        #expect(try MatchURL(parsing: "https://Shop.Example#top").path == "")
    }

    static let refusals: [(String, URLParseError.Code)] = [
        ("FTP://example.com/", .unsupportedScheme("ftp")),
        ("https://example.com:65536/", .invalidPort("65536")),
        ("https://example.com:0000000000000000000000080x/", .invalidPort("0000000000000000000000080x")),
        ("https://exa mple.com/", .invalidHost("exa mple.com")),
        ("https://user@:80/", .missingHost),
        ("https:", .missingHost),
        ("1http://example.com/", .missingScheme),
        (" \t\n ", .empty),
    ]

    @Test(arguments: refusals)
    func urlSplitterNamesWhatIsWrong(_ input: String, _ code: URLParseError.Code) {
        do {
            _ = try MatchURL(parsing: input)
            Issue.record("'\(input)' was accepted")
        } catch {
            #expect(error.code == code)
        }
    }
}
