import AASACore
import Testing

@testable import AASAFuzzHarness

/// Each property the fuzz targets check must be able to fail: fed a deliberately wrong finding or result, it
/// throws. (The fuzzers' inputs should never get here; these show the checks are not vacuous.)
@Suite struct HarnessPropertyTests {
    @Test func aDeadRuleThatDecidesAURLIsAViolation() {
        let text = #"""
            {"applinks": {"details": [{"appIDs": ["ABCDE12345.com.example.a"], "components": [{"/": "/a/*"}]}]}}
            """#
        let source = SourceText(name: "aasa.json", bytes: Array(text.utf8))
        let wrong = Diagnostic(
            .warning, rule: .unreachableRule, "this rule never applies", file: source.name, line: 1, column: 1,
            keyPath: "applinks.details[0].components[0]")
        #expect(throws: InvariantViolation.self) { try AssociationHarness.checkDeadRules([wrong], source: source) }
        #expect(throws: Never.self) { try AssociationHarness.checkDeadRules([], source: source) }
    }

    @Test func anInconsistentMatchResultIsAViolation() {
        let noApps = MatchResult(url: "https://x.example/", verdict: .match, rule: "{}", reason: "matched")
        #expect(throws: InvariantViolation.self) {
            try MatcherHarness.checkConsistency(noApps, mode: .modern, json: false)
        }
        let excludedWithApps = MatchResult(
            url: "https://x.example/", verdict: .excluded, appIDs: ["ABCDE12345.com.example.a"], detailsIndex: 0,
            rule: "{}", reason: "excluded")
        #expect(throws: InvariantViolation.self) {
            try MatcherHarness.checkConsistency(excludedWithApps, mode: .modern, json: false)
        }
    }

    @Test func aFindingPastTheEndOfTheFileIsAViolation() {
        let source = SourceText(name: "site.json", bytes: Array("{}\n".utf8))
        let outside = Diagnostic(.error, rule: .invalidJSON, "x", file: "site.json", line: 3, column: 1)
        #expect(throws: InvariantViolation.self) {
            try DiagnosticLocations.check([outside], in: source, target: .siteConfig)
        }
        let inside = Diagnostic(.error, rule: .invalidJSON, "x", file: "site.json", line: 2, column: 1)
        #expect(throws: Never.self) { try DiagnosticLocations.check([inside], in: source, target: .siteConfig) }
    }
}
