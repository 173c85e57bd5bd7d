/// What a platform does with a URL, as the diff compares it: it stays on the web, or opens an app.
public enum LinkAnswer: Hashable, Sendable, CustomStringConvertible {
    case web
    /// The app IDs (Apple) or package names (Android) that open it.
    case app([String])

    public var description: String {
        switch self {
        case .web: "web"
        case .app(let apps): apps.joined(separator: ", ")
        }
    }
}

/// One rule of a ``DecisionList``: the conditions a URL must meet, per part, and what it then does.
struct DecisionRule: Sendable {
    /// Condition per part; a part without one matches anything (spec §2.3).
    var conditions: [URLPart: PartAutomaton]
    var answer: LinkAnswer
    /// Where the rule is written (an Apple key path, or `dynamic_app_link_components[n]`).
    var location: String
    /// The rule as written.
    var text: String
    /// The details entry and rule index, for translating `location` to site.json terms.
    var detailsIndex: Int?
    var ruleIndex: Int
    /// `components` or `paths` for an Apple rule.
    var kind: MatchResult.RuleKind?
    /// The pattern text of each part, with the settings that change how it reads, for describing classes.
    var patterns: [URLPart: String]
    var caseSensitive = true
    var percentEncoded = true
}

/// How a platform decides: rules in search order, the first match decides (spec §2.2, §7.1), and a URL no rule
/// matches stays on the web.
struct DecisionList: Sendable {
    /// How query item conditions read repeated and absent items.
    enum ItemReading: Sendable {
        /// Apple: every instance must match; an absent item counts as `""` (spec §2.4).
        case everyInstance
        /// Android: some instance must match; an absent item fails (spec §7.1).
        case someInstance
    }

    var rules: [DecisionRule]
    var itemReading: ItemReading
    /// Whether a case-insensitive rule's query item names match in any case (Apple, spec §2.5).
    var foldsItemNames: Bool

    /// A list of `rules` read the way `itemReading` and `foldsItemNames` say.
    init(rules: [DecisionRule], itemReading: ItemReading, foldsItemNames: Bool) {
        self.rules = rules
        self.itemReading = itemReading
        self.foldsItemNames = foldsItemNames
    }

    /// The rules `matcher` evaluates (iOS 13+ or iOS 9–12, by its mode), compiled as it compiled them. Rules whose
    /// patterns do not compile never match, and are left out. Their automata are charged to `budget`.
    init(apple matcher: URLMatcher, budget: inout ComparisonBudget) throws(ComparisonBudget.Exhausted) {
        itemReading = .everyInstance
        foldsItemNames = true
        rules = []
        for entry in matcher.entries {
            for rule in entry.rules where rule.compileErrors.isEmpty {
                let folds = !rule.caseSensitive
                var conditions: [URLPart: PartAutomaton] = [:]
                var patterns: [URLPart: String] = [:]
                func add(_ part: URLPart, _ compiled: CompiledRule.Part?) throws(ComparisonBudget.Exhausted) {
                    guard let compiled, let pattern = compiled.pattern else { return }
                    try budget.charge(bytes: Self.ruleBytes + compiled.source.utf8.count)
                    conditions[part] = try PartAutomaton(pattern, folds: folds, budget: &budget)
                    patterns[part] = compiled.source
                }
                try add(.path, rule.path)
                try add(.fragment, rule.fragment)
                switch rule.query {
                case .whole(let whole): try add(.query, whole)
                case .items(let items):
                    // Keyed by the name as written; ``SemanticDiff`` spreads a case-insensitive rule's item over
                    // every spelling of its name.
                    for item in items { try add(.item(item.name), item.part) }
                case nil: break
                }
                try budget.charge(states: 1, bytes: Self.ruleBytes + rule.text.utf8.count)
                rules.append(
                    DecisionRule(
                        conditions: conditions, answer: rule.exclude ? .web : .app(entry.appIDs),
                        location: rule.location, text: rule.text, detailsIndex: rule.detailsIndex,
                        ruleIndex: rule.ruleIndex, kind: rule.kind, patterns: patterns,
                        caseSensitive: rule.caseSensitive, percentEncoded: rule.percentEncoded))
            }
        }
    }

    /// What a rule, or one condition of it, costs besides its automata and texts.
    private static let ruleBytes = 256

    /// One package's dynamic rules (spec §7.1); `nil` when Android does not use them (no block, or a block it
    /// discards): then the app's intent filters decide, which the file does not say. Their automata are charged
    /// to `budget`.
    init?(android rules: DynamicRules, budget: inout ComparisonBudget) throws(ComparisonBudget.Exhausted) {
        guard case .rules(let list) = rules.block else { return nil }
        itemReading = .someInstance
        foldsItemNames = false
        self.rules = []
        for (index, rule) in list.enumerated() {
            var conditions: [URLPart: PartAutomaton] = [:]
            var patterns: [URLPart: String] = [:]
            func add(_ part: URLPart, _ pattern: String?) throws(ComparisonBudget.Exhausted) {
                guard let pattern else { return }
                try budget.charge(bytes: Self.ruleBytes + 2 * pattern.utf8.count, steps: pattern.utf8.count)
                conditions[part] = try PartAutomaton(android: AndroidPattern(pattern), budget: &budget)
                patterns[part] = pattern
            }
            try add(.path, rule.path)
            try add(.fragment, rule.fragment)
            for item in rule.query ?? [] { try add(.item(item.name), item.pattern) }
            try budget.charge(states: 1, bytes: Self.ruleBytes + rule.text.utf8.count)
            self.rules.append(
                DecisionRule(
                    conditions: conditions, answer: rule.exclude ? .web : .app([rules.package]),
                    location: "dynamic_app_link_components[\(index)]", text: rule.text, detailsIndex: nil,
                    ruleIndex: index, kind: nil, patterns: patterns, caseSensitive: true, percentEncoded: false))
        }
    }

    /// The automaton states of every condition of every rule: what matching one scalar of a URL against the whole
    /// list costs at most, to charge the matcher's checks of example URLs.
    var stateCount: Int {
        rules.reduce(0) { total, rule in rule.conditions.values.reduce(total) { $0 + $1.stateCount } }
    }
}
