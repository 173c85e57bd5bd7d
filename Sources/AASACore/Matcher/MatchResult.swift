/// What a file says about one URL: which app opens it, which rule decided, and why (spec §2.2).
public struct MatchResult: Sendable, Hashable {
    /// The outcome.
    public enum Verdict: String, Sendable, Hashable, CaseIterable {
        /// A rule matched; the URL opens `appIDs`.
        case match
        /// An `exclude` component or `NOT ` path matched first; the URL stays on the web (spec §2.2).
        case excluded
        /// No rule matched.
        case noMatch = "no-match"
        /// The input is not an http(s) URL or a path, or is longer than ``MatchURL/maximumLength`` (see
        /// ``URLParseError``); no rule is tried, and the CLI exits with 2.
        case invalidURL = "invalid-url"
    }

    /// Which array a rule lives in.
    public enum RuleKind: String, Sendable, Hashable {
        /// `details[].components[]`.
        case component = "components"
        /// `details[].paths[]`.
        case path = "paths"
    }

    /// The URL as given.
    public var url: String
    /// The outcome.
    public var verdict: Verdict
    /// The apps that open the URL; empty unless `verdict == .match`.
    public var appIDs: [String]
    /// The `details[]` entry of the deciding rule.
    public var detailsIndex: Int?
    /// The deciding rule's index in `components`, or in `paths` for a path rule.
    public var componentIndex: Int?
    /// Whether the deciding rule is a component or a path.
    public var ruleKind: RuleKind?
    /// The deciding rule as written, e.g. `{"/": "/buy/*"}` or `"NOT /help/*"`.
    public var rule: String?
    /// One sentence saying why.
    public var reason: String
    /// For `.noMatch`: the rules that came closest, most parts matched first, then file order.
    public var nearMisses: [NearMiss]
    /// Side remarks, e.g. details entries ignored because they name no app (spec §9).
    public var notes: [String]

    /// Creates a result.
    public init(
        url: String, verdict: Verdict, appIDs: [String] = [], detailsIndex: Int? = nil, componentIndex: Int? = nil,
        ruleKind: RuleKind? = nil, rule: String? = nil, reason: String, nearMisses: [NearMiss] = [],
        notes: [String] = []
    ) {
        self.url = url
        self.verdict = verdict
        self.appIDs = appIDs
        self.detailsIndex = detailsIndex
        self.componentIndex = componentIndex
        self.ruleKind = ruleKind
        self.rule = rule
        self.reason = reason
        self.nearMisses = nearMisses
        self.notes = notes
    }

    /// A human-readable, multi-line account: verdict, reason, notes, and the closest rules.
    public var explanation: String {
        var lines = ["\(url): \(verdict.rawValue)", reason]
        lines += notes.map { "note: \($0)" }
        if !nearMisses.isEmpty {
            lines.append("closest rules:")
            lines += nearMisses.map { "  \($0.location) \($0.rule): \($0.reason)" }
        }
        return lines.joined(separator: "\n")
    }

    /// One compact JSON object with keys `url`, `verdict`, `appIDs`, `detailsIndex`, `componentIndex`,
    /// `ruleKind`, `rule`, `reason`, `nearMisses`, `notes`, in that order.
    ///
    /// With `detailsSource` (the file was generated from a site.json, ``AssociationGenerator/Output/detailsSource``),
    /// a `siteRule` member follows `rule`, and each near miss has one too: the rule's place in site.json
    /// (`universalLinks.apps[0].rules[2]`), `null` when it has none there (a legacy path).
    public func json(detailsSource: [Int?]? = nil) -> String {
        var siteRule = ""
        if let detailsSource {
            siteRule =
                ",\"siteRule\":\(JSONText.string(Self.siteRule(detailsIndex, componentIndex, ruleKind, detailsSource)))"
        }
        let misses = nearMisses.map { miss in
            guard let detailsSource else { return miss.json() }
            let name = Self.siteRule(miss.detailsIndex, miss.componentIndex, miss.ruleKind, detailsSource)
            return String(miss.json().dropLast()) + ",\"siteRule\":\(JSONText.string(name))}"
        }
        return "{\"url\":\(JSONText.quote(url)),\"verdict\":\(JSONText.quote(verdict.rawValue)),"
            + "\"appIDs\":\(JSONText.array(appIDs)),\"detailsIndex\":\(JSONText.number(detailsIndex)),"
            + "\"componentIndex\":\(JSONText.number(componentIndex)),"
            + "\"ruleKind\":\(JSONText.string(ruleKind?.rawValue)),\"rule\":\(JSONText.string(rule))\(siteRule),"
            + "\"reason\":\(JSONText.quote(reason)),"
            + "\"nearMisses\":[\(misses.joined(separator: ","))],"
            + "\"notes\":\(JSONText.array(notes))}"
    }

    /// A component's place in site.json; `nil` for a legacy path or a details entry of no site.json app.
    private static func siteRule(_ details: Int?, _ component: Int?, _ kind: RuleKind?, _ detailsSource: [Int?])
        -> String?
    {
        guard let details, let component, kind == .component else { return nil }
        return LinkTestChecker.siteRuleName(details: details, component: component, detailsSource: detailsSource)
    }

    /// ``json()`` with a `findings` array last: what `check` says about the file the verdict comes from.
    public func json(findings: [String]) -> String {
        String(json().dropLast()) + ",\"findings\":\(JSONText.array(findings))}"
    }
}
