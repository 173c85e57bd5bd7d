import Testing

@testable import AASACore

/// `usesVariable`, which the lint and the matcher ask of every pattern at every load: a pattern uses a substitution
/// variable exactly when it holds `$(` (spec §2.5), read in place from a string's bytes or a substring's.
@Suite struct PatternVariableTests {
    @Test(
        arguments: [
            ("$(lang)/*", true), ("/a/$(b)", true), ("$(", true), ("x$(", true), ("é$(v)", true), ("/*$($(", true),
            ("", false), ("$", false), ("(", false), ("$ (", false), ("($", false), ("/a/$x(b)", false),
            ("/buy/*", false), ("é$", false),
        ] as [(String, Bool)])
    func aPatternUsesAVariableExactlyWhenItHoldsDollarParenthesis(_ pattern: String, _ uses: Bool) {
        #expect(pattern.usesVariable == uses, "\(pattern)")
        // A substring, and the text behind it, read alike.
        let framed = "[" + pattern + "]"
        #expect(framed.dropFirst().dropLast().usesVariable == uses, "\(pattern) as a substring")
    }
}
