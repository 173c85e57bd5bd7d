/// Runs a domain's test URLs against the file it generates; a failing test is a load error, so the
/// server refuses to publish that domain (issue: per-domain test URLs).
public struct LinkTestChecker: Sendable {
    /// Creates a checker.
    public init() {}

    /// Every failing test, located at the test in site.json and naming the rule that decided.
    public func check(_ site: SiteContext, file: AssociationFile) -> [Diagnostic] {
        guard !site.config.tests.isEmpty else { return [] }
        let matcher = URLMatcher(file: file, mode: .modern)
        var found: [Diagnostic] = []
        for (index, test) in site.config.tests.enumerated() {
            let path = KeyPath.root.key("tests").index(index)
            guard let url = try? MatchURL(parsing: test.url), let host = url.host else {
                found.append(
                    site.diagnostic(
                        .error, rule: "test-url", "test URL '\(test.url)' is not an absolute http(s) URL",
                        at: path.key("url"), hint: "write it in full, e.g. https://\(site.domain)/path"))
                continue
            }
            guard HostName.normalized(host) == site.domain else {
                found.append(
                    site.diagnostic(
                        .error, rule: "test-url", "test URL '\(test.url)' is not on \(site.domain)",
                        at: path.key("url"), hint: "this file only decides URLs of \(site.domain)"))
                continue
            }
            let result = matcher.match(test.url, nearMissLimit: 1)
            let decided = Self.describe(result, config: site.config)
            switch test.expectation {
            case .opensApp(let app) where result.verdict == .match && result.appIDs.contains(app):
                continue
            case .opensApp(let app):
                let outcome =
                    result.verdict == .match
                    ? "opens \(result.appIDs.joined(separator: ", ")) instead" : "stays on the web"
                found.append(
                    site.diagnostic(
                        .error, rule: "test-url",
                        "test URL '\(test.url)' should open \(app) but \(outcome): \(decided)", at: path,
                        hint:
                            "fix the rules or the test; `aasa-server match \(test.url) --config …` explains the decision"
                    ))
            case .staysOnWeb where result.verdict != .match:
                continue
            case .staysOnWeb:
                found.append(
                    site.diagnostic(
                        .error, rule: "test-url",
                        "test URL '\(test.url)' should stay on the web but opens \(result.appIDs.joined(separator: ", ")): \(decided)",
                        at: path,
                        hint: "add an exclude rule above it, or fix the test"))
            }
        }
        return found
    }

    /// The deciding rule in site.json terms (`universalLinks.apps[0].rules[2]`), or the closest miss.
    static func describe(_ result: MatchResult, config: SiteConfig) -> String {
        let appCount = config.universalLinks?.apps.count ?? 0
        if let details = result.detailsIndex, let component = result.componentIndex, details < appCount,
            result.ruleKind == .component
        {
            return
                "rule universalLinks.apps[\(details)].rules[\(component)] \(result.rule ?? "") decided (\(result.reason))"
        }
        if let miss = result.nearMisses.first, miss.detailsIndex < appCount, miss.ruleKind == .component {
            return
                "no rule matched; closest is universalLinks.apps[\(miss.detailsIndex)].rules[\(miss.componentIndex)] \(miss.rule): \(miss.reason)"
        }
        return result.reason
    }
}
