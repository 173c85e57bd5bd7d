import AASACore
import Testing

/// How one source's findings are cut for the log: the first few in full, the rest counted per rule.
@Suite struct CappedFindingsTests {
    static func finding(_ rule: Rule, _ severity: Diagnostic.Severity = .warning) -> Diagnostic {
        Diagnostic(severity, rule: rule, "x")
    }

    @Test func theFirstFewAreShownAndTheRestCountedByRuleInOrder() {
        let findings =
            Array(repeating: Self.finding(.pageName), count: 7) + [Self.finding(.pageSymlink, .error)]
            + [Self.finding(.pageName), Self.finding(.pageSymlink)]
        let capped = CappedFindings(findings, shown: 5)
        #expect(capped.shown == Array(findings.prefix(5)))
        #expect(
            capped.more == [
                .init(rule: .pageName, severity: .warning, count: 3),
                .init(rule: .pageSymlink, severity: .error, count: 2),
            ])
        #expect(CappedFindings.summary(of: capped.more[0]) == "and 3 more like it ([page-name])")
    }

    @Test(arguments: [0, 1, 5])
    func fewFindingsAreAllShown(count: Int) {
        let findings = Array(repeating: Self.finding(.pageName), count: count)
        let capped = CappedFindings(findings)
        #expect(capped.shown == findings)
        #expect(capped.more.isEmpty)
    }
}
