/// A rule that did not match a URL, and why (reported with a no-match verdict, closest first).
public struct NearMiss: Sendable, Hashable {
    /// `applinks.details[]` index of the rule.
    public var detailsIndex: Int
    /// Index into `components`, or into `paths` for a path rule.
    public var componentIndex: Int
    /// Whether the rule is a `components` entry or a `paths` string.
    public var ruleKind: MatchResult.RuleKind
    /// The rule as written, e.g. `{"/": "/buy/*"}` or `"NOT /help/*"`.
    public var rule: String
    /// Which specified parts matched and which did not, e.g. "path matched; query item `id` was absent …".
    public var reason: String
    /// How many of the parts the rule specifies (path, query, fragment) matched; the ranking key.
    public var matchedParts: Int
    /// How many of path, query and fragment the rule specifies.
    public var specifiedParts: Int

    /// Creates a near miss.
    public init(
        detailsIndex: Int, componentIndex: Int, ruleKind: MatchResult.RuleKind, rule: String, reason: String,
        matchedParts: Int, specifiedParts: Int
    ) {
        self.detailsIndex = detailsIndex
        self.componentIndex = componentIndex
        self.ruleKind = ruleKind
        self.rule = rule
        self.reason = reason
        self.matchedParts = matchedParts
        self.specifiedParts = specifiedParts
    }

    /// The rule's place in the file, e.g. `applinks.details[0].components[3]`.
    public var location: String {
        "applinks.details[\(detailsIndex)].\(ruleKind.rawValue)[\(componentIndex)]"
    }

    /// One compact JSON object.
    public func json() -> String {
        "{\"detailsIndex\":\(detailsIndex),\"componentIndex\":\(componentIndex),"
            + "\"ruleKind\":\(JSONText.quote(ruleKind.rawValue)),\"rule\":\(JSONText.quote(rule)),"
            + "\"reason\":\(JSONText.quote(reason)),\"matchedParts\":\(matchedParts),"
            + "\"specifiedParts\":\(specifiedParts)}"
    }
}
