import AASACore

/// The `association` target: the bytes of someone's `apple-app-site-association`, linted as
/// `aasa-server check --aasa` does and imported as `aasa-server import` does.
///
/// Properties checked beyond "no crash, no hang":
/// - every finding points at a line and column of the file;
/// - a rule `unreachable-rule` calls dead decides no URL (the lint promises its warnings are never wrong);
/// - an import that succeeds serves the same answer as the original file (README: "serves the same answer
///   for every URL"), on URLs made from the file's own patterns, as iOS 13+ evaluates them; and the semantic
///   diff, which compares every URL, finds none that the matcher confirms answered differently.
enum AssociationHarness {
    static func run(_ bytes: [UInt8]) throws(InvariantViolation) {
        let source = SourceText(name: "apple-app-site-association", bytes: bytes)
        let findings = AssociationChecker().check(source)
        try DiagnosticLocations.check(findings, in: source, target: .association)
        try checkDeadRules(findings, source: source)
        let output = ImportPipeline().run(source, domain: SiteConfigHarness.domain)
        try DiagnosticLocations.check(output.diagnostics, in: source, target: .association)
        guard output.config != nil, let original = output.original, let generated = output.generated else { return }
        let before = URLMatcher(file: original)
        let after = URLMatcher(file: generated.file)
        for url in SampleURLs.make(for: original) {
            let expected = before.match(url)
            let actual = after.match(url)
            guard expected.verdict == actual.verdict, Set(expected.appIDs) == Set(actual.appIDs) else {
                throw InvariantViolation(
                    .association,
                    "the imported config answers differently for \(url): original \(expected.verdict.rawValue) \(expected.appIDs) by \(expected.rule ?? "-"), imported \(actual.verdict.rawValue) \(actual.appIDs) by \(actual.rule ?? "-")"
                )
            }
        }
        // Every example the diff prints was confirmed with the matcher on both files, so one is a real URL the
        // import answers differently. The server's budget with a hundredth of its steps keeps each input quick; a
        // cut-short comparison only finds less.
        var limits = ComparisonBudget.Limits.standard
        limits.steps /= 100
        let diff = DomainDiff(
            domain: SampleURLs.host, old: DiffSide(appleFile: original), new: DiffSide(appleFile: generated.file),
            limits: limits)
        if let change = diff.changes.first(where: { !$0.examples.isEmpty }) {
            throw InvariantViolation(
                .association,
                "the semantic diff finds URLs the imported config answers differently: \(change.kind.rawValue) \(change.description), e.g. \(change.examples[0]) (\(change.oldRule?.description ?? "no rule") before, \(change.newRule?.description ?? "no rule") after)"
            )
        }
    }

    /// No URL made from the file's patterns is decided by a rule reported as never applying.
    static func checkDeadRules(_ findings: [Diagnostic], source: SourceText) throws(InvariantViolation) {
        let dead = Set(
            findings.filter { $0.rule == .unreachableRule && $0.severity == .warning }.compactMap(\.keyPath))
        guard !dead.isEmpty, let file = AssociationFile.parse(source).file else { return }
        let matcher = URLMatcher(file: file)
        for url in SampleURLs.make(for: file) {
            let result = matcher.match(url)
            guard let details = result.detailsIndex, let index = result.componentIndex, let kind = result.ruleKind
            else { continue }
            let decider = "applinks.details[\(details)].\(kind.rawValue)[\(index)]"
            if dead.contains(decider) {
                throw InvariantViolation(
                    .association, "\(decider) is reported as never applying, but it decides \(url) (\(result.reason))")
            }
        }
    }
}
