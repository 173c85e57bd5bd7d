/// One rule (a `components[]` entry or a `paths[]` string) with its patterns compiled and its settings
/// resolved across the three `defaults` levels (spec §1.7).
///
/// A class with only constant properties: matching walks hundreds of rules per URL, and passing a reference
/// avoids copying (and retaining) every field of every rule on the way.
final class CompiledRule: Sendable {
    /// One pattern of the rule, with where it came from.
    struct Part: Sendable {
        /// The pattern as written.
        var source: String
        /// `nil` when it failed to compile.
        var pattern: WildcardPattern?
        /// `applinks.defaults` or `applinks.details[n].defaults` when inherited (spec §1.7), else `nil`.
        var inheritedFrom: String?
    }

    /// One `"name": "pattern"` of a query dictionary.
    struct ItemPart: Sendable {
        var name: String
        /// The name folded when the rule is case-insensitive.
        var comparableName: String
        var part: Part
    }

    /// The `?` of a rule.
    enum QueryPart: Sendable {
        case whole(Part)
        case items([ItemPart])
    }

    /// A rule as the file holds it.
    enum Written: Sendable {
        /// A `components` entry.
        case component(ComponentPattern)
        /// A `paths` string.
        case path(String)
    }

    /// The outcome of evaluating every part, for near misses.
    struct Evaluation: Sendable {
        var specified = 0
        var matched: [String] = []
        var failures: [String] = []
    }

    let detailsIndex: Int
    /// Index into `components`, or into `paths` for path rules.
    let ruleIndex: Int
    let kind: MatchResult.RuleKind
    /// The rule as written, put in words (``RuleText``) only for a result that names it: a load compiles every
    /// rule of every domain to check its test URLs, and names none that passes.
    var text: String {
        switch written {
        case .component(let component): RuleText.component(component)
        case .path(let entry): RuleText.path(entry)
        }
    }
    /// The rule as the file holds it.
    let written: Written
    let exclude: Bool
    let caseSensitive: Bool
    let percentEncoded: Bool
    /// `nil` = not specified, which matches anything (spec §2.3).
    let path: Part?
    let query: QueryPart?
    let fragment: Part?
    /// Messages of errors that stopped a pattern compiling; such a rule never matches.
    let compileErrors: [String]

    init(
        detailsIndex: Int, ruleIndex: Int, kind: MatchResult.RuleKind, written: Written, exclude: Bool,
        caseSensitive: Bool, percentEncoded: Bool, path: Part?, query: QueryPart?, fragment: Part?,
        compileErrors: [String]
    ) {
        self.detailsIndex = detailsIndex
        self.ruleIndex = ruleIndex
        self.kind = kind
        self.written = written
        self.exclude = exclude
        self.caseSensitive = caseSensitive
        self.percentEncoded = percentEncoded
        self.path = path
        self.query = query
        self.fragment = fragment
        self.compileErrors = compileErrors
    }

    /// `applinks.details[0].components[1]` or `applinks.details[0].paths[1]`.
    var location: String {
        "applinks.details[\(detailsIndex)].\(kind.rawValue)[\(ruleIndex)]"
    }

    /// Keys this rule inherits from `defaults`, as `"/" from applinks.defaults`.
    var inheritedKeys: [String] {
        var keys: [String] = []
        if let from = path?.inheritedFrom { keys.append("\"/\" from \(from)") }
        switch query {
        case .whole(let part): if let from = part.inheritedFrom { keys.append("\"?\" from \(from)") }
        case .items(let items): if let from = items.first?.part.inheritedFrom { keys.append("\"?\" from \(from)") }
        case nil: break
        }
        if let from = fragment?.inheritedFrom { keys.append("\"#\" from \(from)") }
        return keys
    }

    /// Whether every specified part matches (spec §2.3). The fast path: stops at the first failure.
    func matches(_ subject: MatchSubject) -> Bool {
        guard compileErrors.isEmpty else { return false }
        if let path, !path.pattern!.matches(subject.path(percentEncoded: percentEncoded, caseSensitive: caseSensitive))
        {
            return false
        }
        if let fragment,
            !fragment.pattern!.matches(subject.fragment(percentEncoded: percentEncoded, caseSensitive: caseSensitive))
        {
            return false
        }
        switch query {
        case nil:
            return true
        case .whole(let part):
            return part.pattern!.matches(subject.query(percentEncoded: percentEncoded, caseSensitive: caseSensitive))
        case .items(let items):
            let present = subject.queryItems(caseSensitive: caseSensitive)
            return items.allSatisfy { item in itemFailure(item, present: present) == nil }
        }
    }

    /// Why `item` fails against the URL's items, or `nil` when it matches.
    ///
    /// Apple: every instance of a repeated name must match; an absent or valueless item counts as `""`
    /// (spec §2.4).
    private func itemFailure(_ item: ItemPart, present: [MatchSubject.QueryItem], withReason: Bool = false)
        -> String?
    {
        let pattern = item.part.pattern!
        let instances = present.filter { $0.name == item.comparableName }
        if instances.isEmpty {
            return pattern.matches([])
                ? nil
                : !withReason
                    ? ""
                    : "query item `\(item.name)` was absent (counts as \"\"), which does not match `\(item.part.source)`"
        }
        for candidate in instances where !pattern.matches(candidate.value) {
            if !withReason { return "" }
            if candidate.valueless {
                return
                    "query item `\(item.name)` had no value (counts as \"\"), which does not match `\(item.part.source)`"
            }
            let shown = String(String.UnicodeScalarView(candidate.value.compactMap(Unicode.Scalar.init)))
            return instances.count > 1
                ? "query item `\(item.name)` is repeated and the instance `\(shown)` does not match `\(item.part.source)` (every instance must match)"
                : "query item `\(item.name)` value `\(shown)` does not match `\(item.part.source)`"
        }
        return nil
    }

    /// Evaluates every part, for the near-miss report. Without `withReasons` only the counts are filled in
    /// (failures are empty strings), which is enough to rank rules before explaining the closest few.
    func evaluate(_ subject: MatchSubject, withReasons: Bool = true) -> Evaluation {
        var result = Evaluation()
        func fail(_ message: @autoclosure () -> String) {
            result.failures.append(withReasons ? message() : "")
        }
        if !compileErrors.isEmpty {
            result.specified = 1
            result.failures = compileErrors.map { "pattern could not be compiled: \($0)" }
            return result
        }
        let url = subject.url
        let decodedNote = percentEncoded ? "" : " (decoded)"
        if let path {
            result.specified += 1
            if path.pattern!.matches(subject.path(percentEncoded: percentEncoded, caseSensitive: caseSensitive)) {
                result.matched.append("path")
            } else {
                let shown = percentEncoded ? url.path : PercentEncoding.decode(url.path)
                fail(
                    "path did not match: pattern `\(path.source)` vs `\(shown.isEmpty ? "/" : shown)`\(decodedNote)"
                        + caseNote)
            }
        }
        switch query {
        case nil:
            break
        case .whole(let part):
            result.specified += 1
            if part.pattern!.matches(subject.query(percentEncoded: percentEncoded, caseSensitive: caseSensitive)) {
                result.matched.append("query")
            } else if let query = url.query {
                let shown = percentEncoded ? query : PercentEncoding.decode(query)
                fail(
                    "query did not match: pattern `\(part.source)` vs `\(shown)`\(decodedNote)" + caseNote)
            } else {
                fail(
                    "query did not match: the URL has no query (counts as \"\"), pattern `\(part.source)`")
            }
        case .items(let items):
            result.specified += 1
            let present = subject.queryItems(caseSensitive: caseSensitive)
            let failures = items.compactMap { itemFailure($0, present: present, withReason: withReasons) }
            if failures.isEmpty {
                result.matched.append("query")
            } else {
                result.failures.append(contentsOf: failures.map { $0 + caseNote })
            }
        }
        if let fragment {
            result.specified += 1
            if fragment.pattern!.matches(
                subject.fragment(percentEncoded: percentEncoded, caseSensitive: caseSensitive))
            {
                result.matched.append("fragment")
            } else if let value = url.fragment {
                let shown = percentEncoded ? value : PercentEncoding.decode(value)
                fail(
                    "fragment did not match: pattern `\(fragment.source)` vs `\(shown)`\(decodedNote)" + caseNote)
            } else {
                fail(
                    "fragment did not match: the URL has no fragment (counts as \"\"), pattern `\(fragment.source)`")
            }
        }
        return result
    }

    private var caseNote: String {
        caseSensitive ? "" : " (ignoring case)"
    }
}
