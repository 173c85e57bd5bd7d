import AASACore
import Testing

/// `$(name)` variables, user-defined and built in (spec §1.8).
@Suite struct SubstitutionVariableTests {
    static let food = SubstitutionVariable(name: "food", values: ["burrito", "pizza", "sushi", "samosa"])

    static func verdict(
        _ pattern: String, _ path: String, caseSensitive: Bool? = nil, variables: [SubstitutionVariable] = [food]
    )
        -> MatchResult.Verdict
    {
        URLMatcher(
            file: MatcherFixtures.file(
                [ComponentPattern(path: pattern, caseSensitive: caseSensitive)], variables: variables)
        ).match(MatcherFixtures.url(path)).verdict
    }

    static let cases: [(String, String, Bool)] = [
        ("/$(food)", "/pizza", true),
        ("/$(food)", "/pizzas", false),
        ("/$(food)", "/sush", false),
        ("/$(food)s", "/samosas", true),
        ("/$(alpha)", "/a", true), ("/$(alpha)", "/Z", true), ("/$(alpha)", "/1", false), ("/$(alpha)", "/ab", false),
        ("/$(upper)", "/Q", true), ("/$(upper)", "/q", false),
        ("/$(lower)", "/q", true), ("/$(lower)", "/Q", false),
        ("/$(alnum)", "/7", true), ("/$(alnum)", "/x", true), ("/$(alnum)", "/-", false),
        ("/$(digit)", "/0", true), ("/$(digit)", "/a", false), ("/$(digit)$(digit)", "/42", true),
        ("/$(xdigit)", "/f", true), ("/$(xdigit)", "/F", true), ("/$(xdigit)", "/g", false),
        ("/$(region)", "/GB", true), ("/$(region)", "/US", true), ("/$(region)", "/CA", true),
        ("/$(region)", "/UK", false),  // Apple's prose example, but not ISO 3166-1
        ("/$(region)", "/gb", false),
        ("/$(region)", "/419", true),  // Foundation also lists UN M.49 areas
        ("/$(lang)", "/en", true), ("/$(lang)", "/zh", true), ("/$(lang)", "/ar", true), ("/$(lang)", "/haw", true),
        ("/$(lang)", "/xx", false), ("/$(lang)", "/EN", false),
        // Apple's own example.
        ("/$(lang)_$(region)/$(food)/", "/en_US/pizza/", true),
        ("/$(lang)_$(region)/$(food)/", "/fr_CA/sushi", true),
        ("/$(lang)_$(region)/$(food)/", "/en_UK/pizza/", false),
        ("/$(lang)_$(region)/$(food)/", "/en_US/tacos/", false),
        ("/$(lang)_$(region)/$(food)/", "/en-US/pizza/", false),
        ("/price$", "/price$", true),  // a `$` not followed by `(` is literal
    ]

    @Test(arguments: cases)
    func variablesStandForOneOfTheirValues(_ pattern: String, _ path: String, _ matches: Bool) {
        #expect(Self.verdict(pattern, path) == (matches ? .match : .noMatch))
    }

    @Test func valuesFollowTheEffectiveCaseSensitivity() {
        #expect(Self.verdict("/$(food)", "/PIZZA") == .noMatch)
        #expect(Self.verdict("/$(food)", "/PIZZA", caseSensitive: false) == .match)
        #expect(Self.verdict("/$(upper)", "/q", caseSensitive: false) == .match)
        #expect(Self.verdict("/$(region)", "/gb", caseSensitive: false) == .match)
        #expect(Self.verdict("/$(lang)", "/EN", caseSensitive: false) == .match)
    }

    @Test func valuesMayContainWildcards() {
        let variables = [SubstitutionVariable(name: "v", values: ["pi*", "s?shi"])]
        #expect(Self.verdict("/$(v)", "/pizza/x", variables: variables) == .match)
        #expect(Self.verdict("/$(v)", "/sashi", variables: variables) == .match)
        #expect(Self.verdict("/$(v)", "/sshi", variables: variables) == .noMatch)
        #expect(Self.verdict("/x$(v)y", "/xpiy", variables: variables) == .match)
    }

    @Test func namesAreCaseSensitive() {
        let matcher = URLMatcher(
            file: MatcherFixtures.file([ComponentPattern(path: "/$(Food)")], variables: [Self.food]))
        #expect(matcher.compileDiagnostics.map(\.code) == [.unknownVariable])
        #expect(matcher.match(MatcherFixtures.url("/pizza")).verdict == .noMatch)
    }

    @Test func userVariablesShadowBuiltInsWithAWarning() {
        let variables = [SubstitutionVariable(name: "digit", values: ["x"])]
        #expect(Self.verdict("/$(digit)", "/x", variables: variables) == .match)
        #expect(Self.verdict("/$(digit)", "/1", variables: variables) == .noMatch)
        let matcher = URLMatcher(file: MatcherFixtures.file([], variables: variables))
        #expect(matcher.compileDiagnostics.map(\.code) == [.variableShadowsBuiltIn])
        #expect(matcher.compileDiagnostics.first?.severity == .warning)
    }

    @Test func unknownVariableFailsOnlyItsRuleAndIsReported() throws {
        let file = AssociationFile(
            applinks: AppLinks(details: [
                AppLinkDetails(
                    appIDs: [MatcherFixtures.app],
                    components: [
                        ComponentPattern(path: "/$(nope)/*"),
                        ComponentPattern(
                            path: "/ok", query: .items([QueryItemPattern(name: "id", pattern: "$(missing)")])),
                        ComponentPattern(path: "*"),
                    ])
            ]))
        let matcher = URLMatcher(file: file)
        #expect(matcher.match(MatcherFixtures.url("/anything/x")).componentIndex == 2)
        let diagnostics = matcher.compileDiagnostics
        #expect(diagnostics.count == 2)
        #expect(diagnostics.map(\.code) == [.unknownVariable, .unknownVariable])
        #expect(diagnostics.map(\.variable) == ["nope", "missing"])
        #expect(diagnostics.map(\.detailsIndex) == [0, 0])
        #expect(diagnostics.map(\.componentIndex) == [0, 1])
        #expect(diagnostics.map(\.key) == ["/", "?[id]"])
        #expect(diagnostics[1].path == "applinks.details[0].components[1][\"?\"][id]")
        #expect(throws: URLMatcherCompileError.self) { try URLMatcher(validating: file) }
        do {
            _ = try URLMatcher(validating: file)
        } catch {
            #expect(error.errors.count == 2)
            #expect(error.description.contains("unknown-variable"))
        }
    }

    static let badDefinitions: [(SubstitutionVariable, String, PatternDiagnostic.Code)] = [
        (SubstitutionVariable(name: "a(b", values: ["x"]), "/x", .invalidVariableName),
        (SubstitutionVariable(name: "v", values: ["$(food)"]), "/$(v)", .variableValueContainsVariable),
        (SubstitutionVariable(name: "", values: ["x"]), "/x", .invalidVariableName),
    ]

    @Test(arguments: badDefinitions)
    func invalidDefinitionsAreErrors(
        _ variable: SubstitutionVariable, _ pattern: String, _ code: PatternDiagnostic.Code
    ) {
        let matcher = URLMatcher(
            file: MatcherFixtures.file([ComponentPattern(path: pattern)], variables: [Self.food, variable]))
        #expect(matcher.compileDiagnostics.first?.code == code)
        #expect(matcher.compileDiagnostics.first?.key == "substitutionVariables")
        #expect(matcher.compileDiagnostics.first?.severity == .error)
    }

    @Test func aPatternUsingAnInvalidVariableNeverMatches() {
        let variables = [SubstitutionVariable(name: "v", values: ["x", "$(food)"])]
        let matcher = URLMatcher(file: MatcherFixtures.file([ComponentPattern(path: "/$(v)")], variables: variables))
        #expect(matcher.match(MatcherFixtures.url("/x")).verdict == .noMatch)
        #expect(matcher.compileDiagnostics.map(\.code) == [.variableValueContainsVariable, .invalidVariableUsed])
    }

    static let malformed: [(String, PatternDiagnostic.Code)] = [
        ("/$(food", .unterminatedVariable),
        ("/$()", .emptyVariableName),
    ]

    @Test(arguments: malformed)
    func malformedReferencesAreErrors(_ pattern: String, _ code: PatternDiagnostic.Code) {
        let matcher = URLMatcher(file: MatcherFixtures.file([ComponentPattern(path: pattern)], variables: [Self.food]))
        #expect(matcher.compileDiagnostics.map(\.code) == [code])
        #expect(matcher.match(MatcherFixtures.url(pattern)).verdict == .noMatch)
    }

    @Test func duplicateDefinitionsUseTheLastWithAWarning() {
        let variables = [
            SubstitutionVariable(name: "v", values: ["a"]), SubstitutionVariable(name: "v", values: ["b"]),
        ]
        #expect(Self.verdict("/$(v)", "/b", variables: variables) == .match)
        #expect(Self.verdict("/$(v)", "/a", variables: variables) == .noMatch)
        let matcher = URLMatcher(file: MatcherFixtures.file([], variables: variables))
        #expect(matcher.compileDiagnostics.map(\.code) == [.duplicateVariable])
    }

    @Test func diagnosticsPointAtDefaultsWhereThePatternIsWritten() {
        let file = MatcherFixtures.file(
            [ComponentPattern(), ComponentPattern(fragment: "x")],
            appDefaults: ComponentPattern(fragment: "$(nope)"),
            domainDefaults: ComponentPattern(path: "/$(gone)"))
        let matcher = URLMatcher(file: file)
        let found = matcher.compileDiagnostics.map { "\($0.path) \($0.variable ?? "")" }
        #expect(found == ["applinks.defaults[\"/\"] gone", "applinks.details[0].defaults[\"#\"] nope"])
        #expect(matcher.match(MatcherFixtures.url("/gone#x")).verdict == .noMatch)
    }
}
