import AASACore

/// The `matcher` target: a ``MatchScript`` (patterns, settings, URLs) through ``URLMatcher`` in both modes.
///
/// Properties checked beyond "no crash, no hang" (the matcher promises time linear in the URL):
/// - the file written as JSON reads back as the same file, whatever characters its patterns hold;
/// - every result is consistent (a match names apps and a rule, an exclusion names a rule and no app, …) and
///   its `--json` form is JSON;
/// - where ``ReferenceMatcher`` can judge the file, both agree on verdict, apps and deciding rule.
enum MatcherHarness {
    static func run(_ bytes: [UInt8]) throws(InvariantViolation) {
        let script = MatchScript(bytes)
        let json = script.file.compactBytes
        let (readBack, _, diagnostics) = AssociationFile.parse(SourceText(name: "script.json", bytes: json))
        guard readBack == script.file else {
            throw InvariantViolation(
                .matcher,
                "the file written as JSON reads back differently: \(diagnostics.errors.first.map(String.init(describing:)) ?? String(decoding: json, as: UTF8.self))"
            )
        }
        let urls = script.urls + SampleURLs.make(for: script.file, limit: 24)
        for mode in MatchMode.allCases {
            let matcher = URLMatcher(file: script.file, mode: mode)
            let reference = ReferenceMatcher(file: script.file, mode: mode)
            for (index, url) in urls.enumerated() {
                let result = matcher.match(url)
                // The JSON form only for the script's own URLs: parsing it for every sample halves the speed.
                try checkConsistency(result, mode: mode, json: index < script.urls.count)
                // The verdict a load checks test URLs with is the match's, without its words.
                if let parsed = try? MatchURL(parsing: url) {
                    let decision = matcher.verdict(parsed)
                    guard decision.verdict == result.verdict, decision.appIDs == result.appIDs else {
                        throw InvariantViolation(
                            .matcher,
                            "\(mode.rawValue) verdict of \(url): \(decision) where the match says \(result.verdict) \(result.appIDs)"
                        )
                    }
                }
                if let expected = reference?.answer(url), ReferenceMatcher.Answer(result) != expected {
                    throw InvariantViolation(
                        .matcher,
                        "\(mode.rawValue) match of \(url): matcher says \(ReferenceMatcher.Answer(result)) (\(result.reason)), reference says \(expected)"
                    )
                }
            }
        }
    }

    static func checkConsistency(_ result: MatchResult, mode: MatchMode, json: Bool) throws(InvariantViolation) {
        let consistent: Bool
        switch result.verdict {
        case .match: consistent = !result.appIDs.isEmpty && result.rule != nil && result.detailsIndex != nil
        case .excluded: consistent = result.appIDs.isEmpty && result.rule != nil && result.detailsIndex != nil
        case .noMatch, .invalidURL: consistent = result.appIDs.isEmpty && result.rule == nil
        }
        guard consistent, result.nearMisses.count <= 5 else {
            throw InvariantViolation(.matcher, "inconsistent \(mode.rawValue) result: \(result.explanation)")
        }
        guard json else { return }
        do {
            _ = try JSONParser().parse(SourceText(name: "match.json", bytes: Array(result.json().utf8)))
        } catch {
            throw InvariantViolation(.matcher, "match --json output is not JSON: \(error)\n\(result.json())")
        }
    }
}
