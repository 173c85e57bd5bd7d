/// The findings of one source (a domain folder, a certificate folder) in one load, as they are logged: the first
/// ``shownPerSource`` in full, the rest counted by rule. A tenant decides how many findings its folder has
/// (30,000 unservable page names are 30,000 warnings), so what one load logs for one source is bounded by the
/// rule catalogue, not by the tenant.
public struct CappedFindings: Sendable, Hashable {
    /// How many findings of one source are logged in full per load.
    public static let shownPerSource = 5

    /// One rule's findings past the first few.
    public struct More: Sendable, Hashable {
        /// The rule.
        public var rule: Rule
        /// The worst severity among them.
        public var severity: Diagnostic.Severity
        /// How many.
        public var count: Int

        /// Creates an entry.
        public init(rule: Rule, severity: Diagnostic.Severity, count: Int) {
            self.rule = rule
            self.severity = severity
            self.count = count
        }
    }

    /// The findings logged in full, in order.
    public var shown: [Diagnostic]
    /// The rest, one entry per rule in the order each rule first appears among them.
    public var more: [More]

    /// Splits `diagnostics` (one source's, in order) after the first `limit`.
    public init(_ diagnostics: [Diagnostic], shown limit: Int = CappedFindings.shownPerSource) {
        shown = Array(diagnostics.prefix(limit))
        more = []
        var index: [Rule: Int] = [:]
        for diagnostic in diagnostics.dropFirst(limit) {
            if let at = index[diagnostic.rule] {
                more[at].count += 1
                more[at].severity = max(more[at].severity, diagnostic.severity)
            } else {
                index[diagnostic.rule] = more.count
                more.append(More(rule: diagnostic.rule, severity: diagnostic.severity, count: 1))
            }
        }
    }

    /// The line that stands for one rule's findings past the first few: `and 29995 more like it ([page-name])`.
    public static func summary(of more: More) -> String {
        "and \(more.count) more like it ([\(more.rule)])"
    }
}
