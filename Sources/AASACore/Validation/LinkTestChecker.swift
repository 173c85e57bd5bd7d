/// Runs a domain's test URLs against the file it generates; a failing test is a load error, so the
/// server refuses to publish that domain (issue: per-domain test URLs).
public struct LinkTestChecker: Sendable {
    /// Creates a checker.
    public init() {}

    /// Every failing test, located at the test in site.json and naming the rule that decided; `matcher` is
    /// `generated`'s file compiled for modern clients (the loader compiles it once, for its pattern findings too).
    public func check(_ site: SiteContext, generated: AssociationGenerator.Output, matcher: URLMatcher)
        -> [Diagnostic]
    {
        guard !site.config.tests.isEmpty else { return [] }
        var found: [Diagnostic] = []
        for (index, test) in site.config.tests.enumerated() {
            // Made only for a finding.
            var path: KeyPath { KeyPath.tests.index(index) }
            guard let url = try? MatchURL(parsing: test.url), let host = url.host else {
                found.append(
                    site.diagnostic(
                        .error, rule: .testURL, "test URL '\(test.url)' is not an absolute http(s) URL",
                        at: path.key("url"), hint: "write it in full, e.g. https://\(site.domain)/path"))
                continue
            }
            guard HostName.normalized(host) == site.domain else {
                found.append(
                    site.diagnostic(
                        .error, rule: .testURL, "test URL '\(test.url)' is not on \(site.domain)",
                        at: path.key("url"), hint: "this file only decides URLs of \(site.domain)"))
                continue
            }
            // The URL parsed above, not parsed again (parsing is a third of this check at thousands of domains), and
            // only a failing test's decision explained in words.
            let decision = matcher.verdict(url)
            switch test.expectation {
            case .opensApp(let app) where decision.verdict == .match && decision.appIDs.contains(app): continue
            case .staysOnWeb where decision.verdict != .match: continue
            default: break
            }
            let result = matcher.match(url, displayedAs: test.url, nearMissLimit: 1)
            // Only a failing test is explained: describing every passing one would be most of this check's cost.
            var decided: String { Self.describe(result, detailsSource: generated.detailsSource) }
            switch test.expectation {
            case .opensApp(let app) where result.verdict == .match && result.appIDs.contains(app):
                continue
            case .opensApp(let app):
                let outcome =
                    result.verdict == .match
                    ? "opens \(result.appIDs.joined(separator: ", ")) instead" : "stays on the web"
                found.append(
                    site.diagnostic(
                        .error, rule: .testURL,
                        "test URL '\(test.url)' should open \(app) but \(outcome): \(decided)", at: path,
                        hint:
                            "fix the rules or the test; `aasa-server match \(test.url) --config …` explains the decision"
                    ))
            case .staysOnWeb where result.verdict != .match:
                continue
            case .staysOnWeb:
                found.append(
                    site.diagnostic(
                        .error, rule: .testURL,
                        "test URL '\(test.url)' should stay on the web but opens \(result.appIDs.joined(separator: ", ")): \(decided)",
                        at: path,
                        hint: "add an exclude rule above it, or fix the test"))
            }
        }
        return found
    }

    /// The deciding rule in site.json terms (`universalLinks.apps[0].rules[2]`), or the closest miss.
    static func describe(_ result: MatchResult, detailsSource: [Int?]) -> String {
        if let details = result.detailsIndex, let component = result.componentIndex, result.ruleKind == .component,
            let name = siteRuleName(details: details, component: component, detailsSource: detailsSource)
        {
            return "rule \(name) \(result.rule ?? "") decided (\(result.reason))"
        }
        if let miss = result.nearMisses.first, miss.ruleKind == .component,
            let name = siteRuleName(
                details: miss.detailsIndex, component: miss.componentIndex, detailsSource: detailsSource)
        {
            return "no rule matched; closest is \(name) \(miss.rule): \(miss.reason)"
        }
        return result.reason
    }

    /// `universalLinks.apps[a].rules[r]` for a rule of the generated file, or `nil` for a generated repeat.
    public static func siteRuleName(details: Int, component: Int, detailsSource: [Int?]) -> String? {
        guard detailsSource.indices.contains(details), let app = detailsSource[details] else { return nil }
        return "universalLinks.apps[\(app)].rules[\(component)]"
    }
}

extension Rule {
    /// Reported by `LinkTestChecker`.
    public static let testURL = Rule(
        "test-url", .error, "A test URL does something else than expected, or is not on the domain.")

    /// The rules of what URLs the generated file opens: tests and lint (stage 5), in the order of the docs table: their
    /// part of `Rule.all`.
    package static let linkRules: [Rule] = [
        .testURL,
        .unreachableRule,
        .excludeQueryStar,
        .appClipParent,
    ]
}
