import AASATestSupport
import Foundation
import Testing

@testable import AASACore

/// Consecutive `*` fold into one without changing what a pattern matches, and every limit of ``PatternLimits`` is
/// checked before a pattern is compiled, so no file and no URL can make matching one request expensive.
@Suite struct PatternLimitsTests {
    static func file(_ paths: [String], variables: [SubstitutionVariable] = []) -> AssociationFile {
        AssociationFile(
            applinks: AppLinks(
                details: [
                    AppLinkDetails(
                        appIDs: ["ABCDE12345.com.example.app"], components: paths.map { ComponentPattern(path: $0) })
                ], substitutionVariables: variables))
    }

    static func verdict(_ pattern: String, _ path: String) -> MatchResult.Verdict {
        URLMatcher(file: file([pattern])).match("https://example.com" + path, nearMissLimit: 0).verdict
    }

    /// Spec §2.1: `*` matches any run, so a run of them matches what one does; `/x/**` keeps the bare prefix of
    /// `/x/*` (it ends in a `/` followed only by `*`s).
    @Test(arguments: [
        ("/x/*", ["/x", "/x/", "/x/y", "/x/y/z"], ["/xy", "/", "/y/x"]),
        ("/a*b", ["/ab", "/axxb", "/a/b/b"], ["/a", "/ba", "/abx"]),
        ("/a/*/c", ["/a/b/c", "/a//c", "/a/b/x/c"], ["/a/c", "/a/b/d"]),
        ("*", ["/", "/anything/at/all"], []),
        ("/a*?b", ["/axb", "/axxb"], ["/ab"]),
        ("/$(digit)*x", ["/1x", "/1abcx"], ["/x", "/ax"]),
        ("/buy//*", ["/buy", "/buy//42"], ["/buy/42"]),
    ])
    func runsOfStarsMatchWhatOneStarMatches(pattern: String, matching: [String], notMatching: [String]) {
        for stars in 1...4 {
            let written = pattern.replacingOccurrences(of: "*", with: String(repeating: "*", count: stars))
            for path in matching { #expect(Self.verdict(written, path) == .match, "\(written) \(path)") }
            for path in notMatching { #expect(Self.verdict(written, path) == .noMatch, "\(written) \(path)") }
        }
    }

    /// A `*` next to a variable whose value is `*` (or `**`) is two loops in a row, which match what one does.
    @Test func starsMeetingAcrossAVariableMatchWhatOneStarMatches() {
        for values in [["*"], ["**"], ["*", "a"]] {
            let matcher = URLMatcher(
                file: Self.file(["/x/*$(s)/y"], variables: [SubstitutionVariable(name: "s", values: values)]))
            for path in ["/x//y", "/x/a/y", "/x/a/b/y"] {
                #expect(matcher.match("https://example.com" + path).verdict == .match, "\(values) \(path)")
            }
            for path in ["/x/y", "/x/a/z"] {
                #expect(matcher.match("https://example.com" + path).verdict == .noMatch, "\(values) \(path)")
            }
            let ending = URLMatcher(
                file: Self.file(["/x/*$(s)"], variables: [SubstitutionVariable(name: "s", values: values)]))
            for path in ["/x/a", "/x/a/b"] {
                #expect(ending.match("https://example.com" + path).verdict == .match, "\(values) \(path)")
            }
        }
    }

    /// Folded runs compile to the same automaton as one `*`: the cost of a pattern is what it means, not how
    /// many stars it spells. 100,000 stars before a literal compile to the states of `/*a`.
    @Test func aRunOfStarsCompilesToOneStar() throws {
        let compiler = WildcardPatternCompiler(variables: SubstitutionTable(variables: []))
        let one = try #require(
            compiler.compile("/*a", caseSensitive: true, percentEncoded: true, target: .path).pattern)
        let many = try #require(
            compiler.compile(
                "/" + String(repeating: "*", count: 1_000) + "a", caseSensitive: true,
                percentEncoded: true, target: .path
            ).pattern)
        #expect(many.kinds == one.kinds && many.nexts == one.nexts && many.forkTargets == one.forkTargets)
        let refused = compiler.compile(
            "/" + String(repeating: "*", count: 100_000) + "a", caseSensitive: true, percentEncoded: true, target: .path
        )
        #expect(refused.pattern == nil && refused.problems.map(\.code) == [.patternTooLong])
    }

    /// Each limit refuses the pattern (or variable) one past it, with an error naming the limit, and accepts the
    /// one at it.
    static let limitCases: [(String, PatternDiagnostic.Code?)] = {
        let (length, wildcards, uses, width) = (
            PatternLimits.maximumLength, PatternLimits.maximumWildcards, PatternLimits.maximumVariableUses,
            PatternLimits.maximumWidth
        )
        return [
            ("/" + String(repeating: "a", count: length - 1), nil),
            ("/" + String(repeating: "a", count: length), .patternTooLong),
            ("/" + String(repeating: "*a", count: wildcards), nil),
            ("/" + String(repeating: "*a", count: wildcards + 1), .patternTooComplex),
            ("/" + String(repeating: "$(digit)", count: uses), nil),
            ("/" + String(repeating: "$(digit)", count: uses + 1), .patternTooComplex),
            ("/*" + String(repeating: "a", count: width - 5), nil),
            ("/*" + String(repeating: "a", count: width - 4), .patternTooComplex),
        ]
    }()

    @Test(arguments: limitCases)
    func eachPatternLimitRefusesOnePast(pattern: String, code: PatternDiagnostic.Code?) {
        let matcher = URLMatcher(file: Self.file([pattern]))
        let errors = matcher.compileDiagnostics.filter { $0.severity == .error }
        #expect(errors.map(\.code) == (code.map { [$0] } ?? []), "\(errors)")
        if code != nil {
            let first = errors.first
            #expect(first?.path == "applinks.details[0].components[0][\"/\"]")
            #expect(first?.message.contains("the limit is") == true)
        }
    }

    /// A variable over its values or bytes is refused where it is defined, and patterns using it never match.
    static let variableCases: [(Int, Int, Bool)] = [
        (PatternLimits.maximumVariableValues, 1, false), (PatternLimits.maximumVariableValues + 1, 1, true),
        (1_024, PatternLimits.maximumVariableBytes / 1_024, false),
        (1_024, PatternLimits.maximumVariableBytes / 1_024 + 1, true),
    ]

    @Test(arguments: variableCases)
    func aVariableOverItsLimitIsRefused(count: Int, length: Int, refused: Bool) {
        let values = (0..<count).map { String(format: "%0\(length)d", $0) }
        let matcher = URLMatcher(
            file: Self.file(["/v/$(v)"], variables: [SubstitutionVariable(name: "v", values: values)]))
        let codes = matcher.compileDiagnostics.map(\.code)
        #expect(codes == (refused ? [.variableTooLarge, .invalidVariableUsed] : []), "\(codes)")
        #expect((matcher.match("https://example.com/v/" + values[1]).verdict == .match) == !refused)
    }

    /// The file's patterns together: a URL no rule matches is tried against all of them.
    @Test func theFilesPatternsTogetherAreBounded() {
        let pattern = { (index: Int) in "/*x" + String(format: "%03d", index) + String(repeating: "a", count: 200) }
        let width = URLMatcher(file: Self.file([pattern(0)])).width
        let fitting = PatternLimits.maximumDomainWidth / width
        let full = URLMatcher(file: Self.file((0...fitting).map(pattern)))
        #expect(full.compileDiagnostics.map(\.code) == [.rulesTooComplex])
        #expect(full.compileDiagnostics.first?.componentIndex == fitting)
        #expect(full.width == fitting * width)
        #expect(URLMatcher(file: Self.file((0..<fitting).map(pattern))).compileDiagnostics.isEmpty)
    }

    /// A variable of long values without wildcards is narrow (cheap per URL character) but large: its states are
    /// bounded per pattern and per file, so neither compiling nor comparing the file in a review can grow.
    @Test func statesAreBoundedPerPatternAndPerFile() throws {
        func variable(_ count: Int) -> SubstitutionVariable {
            SubstitutionVariable(name: "v", values: (0..<count).map { String(format: "%015d", $0 * 7_919) })
        }
        let large = URLMatcher(file: Self.file(["/p/$(v)"], variables: [variable(1_024)]))
        #expect(large.compileDiagnostics.map(\.code) == [.patternTooComplex])
        #expect(large.compileDiagnostics.first?.message.contains("automaton states; the limit is 4096") == true)

        let pattern = { (index: Int) in "/p" + String(format: "%03d", index) + "/$(v)" }
        let one = URLMatcher(file: Self.file([pattern(0)], variables: [variable(256)]))
        #expect(one.compileDiagnostics.isEmpty && one.states > 1_000 && one.width < 512)
        let fitting = PatternLimits.maximumDomainStates / one.states
        let full = URLMatcher(file: Self.file((0...fitting).map(pattern), variables: [variable(256)]))
        #expect(full.compileDiagnostics.map(\.code) == [.rulesTooComplex])
        #expect(full.compileDiagnostics.first?.componentIndex == fitting)
        #expect(full.states == fitting * one.states)
    }

    /// The issue's file: 8,000 values used 400 times. Refused at its definition before any value is read, so
    /// `check` answers at once (it took 5-6 s in a release build when every use read the values again).
    @Test func eightThousandValuesUsedFourHundredTimesAreRefusedFast() throws {
        let values = (0..<8_000).map { "\"v\($0)\"" }.joined(separator: ",")
        let rules = (0..<400).map { "{\"path\": \"/r\($0)/$(v)\"}" }.joined(separator: ",")
        let json =
            "{\"legacyFormat\": false, \"universalLinks\": {\"variables\": {\"v\": [\(values)]}, \"apps\": "
            + "[{\"appIDs\": [\"ABCDE12345.com.example.app\"], \"rules\": [\(rules)]}]}}"
        let clock = ContinuousClock()
        var loaded: LoadedDomain?
        let elapsed = clock.measure { loaded = loadSite(json) }
        let found = try #require(loaded).diagnostics.filter { $0.rule == .variableTooLarge }
        #expect(found.count == 1)
        #expect(found.first?.keyPath == "universalLinks.variables.v")
        #expect(found.first?.message.contains("the limit is 1024") == true)
        // A debug build on a shared machine: 20x above what it takes, far below the minutes of reading the values
        // once per use.
        #expect(elapsed < .seconds(10), "\(elapsed)")
    }

    /// The built-ins fit in one pattern with room to spare: `/$(lang)_$(region)/*`, Apple's own example, takes
    /// half the width limit.
    @Test func builtInVariablesFitWellWithinTheWidth() {
        let table = SubstitutionTable(variables: [])
        let lang = table.alternation("lang", caseSensitive: true)?.width ?? 0
        let region = table.alternation("region", caseSensitive: true)?.width ?? 0
        print("step width: $(lang) \(lang), $(region) \(region)")
        #expect((lang + region + 10) * 2 <= PatternLimits.maximumWidth)
        #expect(URLMatcher(file: Self.file(["/$(lang)_$(region)/*"])).compileDiagnostics.isEmpty)
    }

    /// No real file comes near a limit: every corpus file and fixture compiles without a limit finding, and the
    /// widest file is far below the file's width.
    @Test func realFilesAreFarFromEveryLimit() throws {
        let limits: Set<PatternDiagnostic.Code> = [
            .patternTooLong, .patternTooComplex, .variableTooLarge, .rulesTooComplex,
        ]
        var widest = (width: 0, name: "")
        var largest = (states: 0, name: "")
        let files = RepositoryPaths.files(in: RepositoryPaths.corpus + "/aasa", endingWith: ".json")
        #expect(files.count > 100)
        for name in files {
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: RepositoryPaths.corpus + "/aasa/" + name)))
            guard let root = try? JSONParser().parse(SourceText(name: name, bytes: bytes)).root.value else { continue }
            let matcher = URLMatcher(file: AssociationFile.readAsDevice(root).file)
            #expect(!matcher.compileDiagnostics.contains { limits.contains($0.code) }, "\(name)")
            if matcher.width > widest.width { widest = (matcher.width, name) }
            if matcher.states > largest.states { largest = (matcher.states, name) }
        }
        print(
            "widest corpus file: \(widest.name), step width \(widest.width); largest: \(largest.name), \(largest.states) states"
        )
        #expect(widest.width * 8 < PatternLimits.maximumDomainWidth)
        #expect(largest.states * 8 < PatternLimits.maximumDomainStates)
    }

    /// Android's dynamic rules in site.json keep the same length and wildcard limits.
    static let androidCases: [(String, Rule?)] = [
        ("/" + String(repeating: "a", count: 1_023), nil),
        ("/" + String(repeating: "a", count: 1_024), Rule.patternTooLong),
        ("/" + String(repeating: "*a", count: 32), nil),
        ("/" + String(repeating: "**a", count: 33), Rule.patternTooComplex),
    ]

    @Test(arguments: androidCases)
    func androidRulesKeepTheLimits(pattern: String, rule: Rule?) {
        let loaded = loadSite(
            """
            {"legacyFormat": false, "android": {"apps": [{"package": "com.example.app", "fingerprints":
              ["14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5"],
              "rules": [{"path": "/x"}, {"query": {"q": "\(pattern)"}}]}]}}
            """)
        let errors: [Diagnostic] = loaded.diagnostics.filter { $0.severity == .error }
        let expected: [Rule] = rule.map { [$0] } ?? []
        #expect(errors.map(\.rule) == expected, "\(errors)")
        if rule != nil {
            let keyPath = errors.first?.keyPath
            #expect(keyPath == "android.apps[0].rules[1].query.q")
        }
    }

    /// The banner's exclusions: each keeps the length limit, and all of them 4,096 characters together.
    @Test(
        arguments: [
            ([String(repeating: "a", count: 1_023)], nil),
            ([String(repeating: "a", count: 1_024)], Rule.patternTooLong),
            (Array(repeating: "/" + String(repeating: "a", count: 1_023), count: 4), nil),
            (Array(repeating: "/" + String(repeating: "a", count: 1_023), count: 4) + ["/b"], Rule.patternTooComplex),
        ] as [([String], Rule?)])
    func bannerExclusionsAreBounded(exclude: [String], rule: Rule?) throws {
        let list = exclude.map { "\"/\($0.drop { $0 == "/" })\"" }.joined(separator: ", ")
        let loaded = loadSite(
            """
            {"legacyFormat": false, "universalLinks": {"apps": [{"appIDs": ["ABCDE12345.com.example.app"],
              "rules": [{"path": "/*"}]}]}, "smartAppBanner": {"appStoreID": "640199958", "exclude": [\(list)]}}
            """)
        let errors: [Diagnostic] = loaded.diagnostics.filter { $0.severity == .error }
        let expected: [Rule] = rule.map { [$0] } ?? []
        #expect(errors.map(\.rule) == expected, "\(errors)")
    }

    /// A URL over the limit is refused before it is read: no rule is tried, and the reason says so.
    @Test func aURLOverTheLimitIsMatchedByNoRule() {
        let matcher = URLMatcher(file: Self.file(["/*"]))
        let prefix = "https://example.com/"
        let fitting = prefix + String(repeating: "a", count: MatchURL.maximumLength - prefix.utf8.count)
        #expect(matcher.match(fitting).verdict == .match)
        let result = matcher.match(fitting + "a")
        #expect(result.verdict == .invalidURL)
        #expect(result.reason.contains("over the limit of \(MatchURL.maximumLength)"), "\(result.reason)")
        #expect(AndroidMatcher(assetLinks: .array([])).match(fitting + "a").verdict == .invalidURL)
    }

    /// The admin `/match` says 414 and why.
    @Test func theAdminMatchAnswers414ForAURLOverTheLimit() throws {
        let published = PublishedDomain(
            domain: "example.com", associationFile: Array(#"{"applinks":{"details":[]}}"#.utf8), cacheControl: "")
        let matchers = DomainMatchers(published: [published])
        let url = "https://example.com/" + String(repeating: "a", count: MatchURL.maximumLength)
        let answer = matchers.answer(rawQuery: "url=" + url)
        #expect(answer.status == 414)
        #expect(String(decoding: answer.body, as: UTF8.self).contains("over the limit of 2048"))
    }
}
