/// The android section's dynamic rules keep the pattern limits of ``PatternLimits`` (length and wildcards): Android
/// matches them in linear time (spec §7.1), but the change review compares them as automata, and nothing a tenant
/// writes may grow that without bound.
public struct AndroidPatternLimitRule: SiteRule {
    /// Creates the rule.
    public init() {}

    /// Reports each pattern over ``PatternLimits/maximumLength`` characters or ``PatternLimits/maximumWildcards``
    /// wildcards (a run of `*` counts once, as on Apple's side).
    public func check(_ site: SiteContext) -> [Diagnostic] {
        guard let android = site.config.android else { return [] }
        var found: [Diagnostic] = []
        for (appIndex, app) in android.apps.enumerated() {
            for (ruleIndex, rule) in (app.rules ?? []).enumerated() {
                let path = KeyPath.root.key("android").key("apps").index(appIndex).key("rules").index(ruleIndex)
                var patterns: [(String, KeyPath)] = []
                if let pattern = rule.path { patterns.append((pattern, path.key("path"))) }
                if let pattern = rule.fragment { patterns.append((pattern, path.key("fragment"))) }
                switch rule.query {
                case .whole(let pattern): patterns.append((pattern, path.key("query")))
                case .items(let items): patterns += items.map { ($0.pattern, path.key("query").key($0.name)) }
                case nil: break
                }
                for (pattern, keyPath) in patterns {
                    if let diagnostic = Self.problem(pattern, at: keyPath, in: site) { found.append(diagnostic) }
                }
            }
        }
        return found
    }

    private static func problem(_ pattern: String, at keyPath: KeyPath, in site: SiteContext) -> Diagnostic? {
        let length = pattern.unicodeScalars.count
        if length > PatternLimits.maximumLength {
            return site.diagnostic(
                .error, rule: .patternTooLong,
                "the pattern has \(length) characters; the limit is \(PatternLimits.maximumLength)", at: keyPath,
                hint: "match the varying part with a wildcard such as '*' instead of spelling it out")
        }
        var wildcards = 0
        var previous: Unicode.Scalar?
        for scalar in pattern.unicodeScalars {
            if scalar == "?" || (scalar == "*" && previous != "*") { wildcards += 1 }
            previous = scalar
        }
        guard wildcards > PatternLimits.maximumWildcards else { return nil }
        return site.diagnostic(
            .error, rule: .patternTooComplex,
            "the pattern has \(wildcards) wildcards; the limit is \(PatternLimits.maximumWildcards)", at: keyPath,
            hint: "one '*' matches any run, so fewer usually say the same")
    }
}
