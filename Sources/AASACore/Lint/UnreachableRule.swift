/// A rule that can never apply because an earlier rule already matches every URL it matches: the search
/// stops at the first match (spec §2.2), so the later rule is dead. The classic case is an exclusion
/// after a catch-all (spec §8 item 9, Apple forums thread 678345).
///
/// Judged per app: a rule of a later entry still applies on a device that has only that entry's app
/// (an App Clip listed after its parent, say), so it is dead only when, for every app of its entry,
/// an earlier rule that applies to that app covers it.
public struct UnreachableRule: AssociationRule {
    /// Creates the rule.
    public init() {}

    /// How much work one file may take, in elementary steps (a pair of rules considered, a cell of a matching
    /// table, an automaton state stepped by ``GlobInclusion``; 20–30 ns each in a debug build). The corpus and
    /// fixtures need at most 0.9 million; a hostile file could ask for 10¹² (thousands of rules that all start
    /// with `*`), so past this the check stops with a note instead of holding up a reload.
    static let workBudget = 80_000_000

    /// Whether two rules' apps share one, looking up the smaller set's apps in the larger.
    static func share(_ one: Set<String>, _ other: Set<String>) -> Bool {
        one.count <= other.count ? one.contains(where: other.contains) : other.contains(where: one.contains)
    }

    /// Warns about each dead rule, naming the rule that hides it.
    public func check(_ context: AssociationContext) -> [Diagnostic] {
        let rules = context.effectiveRules
        // The literal start of each path decides most pairs without building automata: only an earlier rule
        // whose literal start begins the later one's (or one with a variable, not modelled) can cover it.
        let prefixes = rules.indices.map {
            Self.literalPrefix(rules[$0].pattern.path ?? "*", lowercased: !rules[$0].caseSensitive)
        }
        // Built when a rule is first compared: the budget may stop the check long before the last rule, and most
        // files never compare two paths (a slot for each rule is made with the first).
        var shapes: [PathShapes?] = []
        func shape(_ index: Int) -> PathShapes {
            if shapes.isEmpty { shapes = Array(repeating: nil, count: rules.count) }
            if let known = shapes[index] { return known }
            let built = PathShapes(rules[index])
            shapes[index] = built
            return built
        }
        var caseSensitiveEarlier = PrefixIndex()
        var caseInsensitiveEarlier = PrefixIndex()
        var earlierWithVariables: [Int] = []
        var work = Self.workBudget
        var found: [Diagnostic] = []
        // One list for every rule's earlier rules, emptied for the next (a rule is read where it lies, not copied).
        var looked: [Int] = []
        for index in rules.indices {
            defer {
                if rules[index].pattern.path?.usesVariable == true {
                    earlierWithVariables.append(index)
                } else if rules[index].caseSensitive {
                    caseSensitiveEarlier.insert(prefixes[index], rule: index)
                } else {
                    caseInsensitiveEarlier.insert(prefixes[index], rule: index)
                }
            }
            looked.removeAll(keepingCapacity: true)
            caseSensitiveEarlier.collect(prefixing: prefixes[index], into: &looked)
            if !caseInsensitiveEarlier.isEmpty {
                caseInsensitiveEarlier.collect(prefixing: CaseFolding.fold(prefixes[index]), into: &looked)
            }
            looked += earlierWithVariables
            // Nothing earlier can cover it: the common case, decided without sorting or comparing apps.
            if looked.isEmpty { continue }
            let laterApps = rules[index].apps
            // Each earlier rule looked at costs steps, one for another app too (sorted, then its apps compared):
            // thousands of one-app entries with the same path must not cost their square unbounded.
            // Comparing two rules' apps costs up to the later one's app count.
            work -= looked.count * (2 + looked.count.bitWidth - looked.count.leadingZeroBitCount + laterApps.count)
            if work >= 0, looked.count > 1 { looked.sort() }
            // Rules of one entry share its apps (and its set's storage): only another entry's are compared.
            let laterEntry = rules[index].place.entry
            let candidates =
                work < 0
                ? [] : looked.filter { rules[$0].place.entry == laterEntry || Self.share(rules[$0].apps, laterApps) }
            // Considering a pair costs about as much as 256 steps, whatever the patterns.
            work -= 256 * candidates.count
            let covering = candidates.filter {
                Self.covers($0, index, of: rules, shapes: (shape($0), shape(index)), work: &work)
            }
            if work < 0 {
                let note = context.diagnostic(
                    .note, rule: .unreachableRule,
                    "stopped looking for rules that never apply: the file has too many rules that overlap; this rule and the \(rules.count - index - 1) after it were not checked",
                    at: rules[index].path, hint: "merge overlapping rules into fewer patterns")
                return found + (note.map { [$0] } ?? [])
            }
            // Hidden for every app of its entry: each covering rule takes its apps off, until none is left.
            var unhidden = laterApps
            for rule in covering where !unhidden.isEmpty {
                // Walks the apps still unhidden (`subtract` would walk the covering rule's, which may be thousands).
                work -= unhidden.count
                unhidden = unhidden.filter { !rules[rule].apps.contains($0) }
            }
            guard unhidden.isEmpty, let earlierIndex = covering.first else { continue }
            let earlier = rules[earlierIndex]
            let hider = context.name(of: earlier.path)
            let message: String
            let hint: String
            switch (earlier.exclude, rules[index].exclude) {
            case (false, true):
                message =
                    "this exclusion never applies: \(hider) above it already opens the app for every URL it matches"
                hint = "move the exclusion above \(hider)"
            case (true, _):
                message = "this rule never applies: \(hider) above it already excludes every URL it matches"
                hint = "remove it, or move it above \(hider) if it should win"
            case (false, false):
                message = "this rule never applies: \(hider) above it already matches every URL it matches"
                hint = "remove it, or move it above \(hider)"
            }
            if let diagnostic = context.diagnostic(
                .warning, rule: .unreachableRule, message, at: rules[index].path, hint: hint)
            {
                found.append(diagnostic)
            }
        }
        return found
    }

    /// A rule's path as ``GlobInclusion`` compares it, built once per rule instead of once per pair: as written,
    /// and case-folded as the matcher folds it (``CaseFolding``) for comparison with a case-insensitive rule. Variables become `*`, which over-approximates
    /// a later rule safely (an earlier rule with variables is never compared).
    struct PathShapes {
        var exact: GlobInclusion.Pattern
        var folded: GlobInclusion.Pattern

        init(_ rule: EffectiveRule) {
            let path = UnreachableRule.replacingVariables(rule.pattern.path ?? "*", with: "*")
            exact = UnreachableRule.pathPattern(path)
            folded = UnreachableRule.pathPattern(CaseFolding.fold(path))
        }
    }

    /// Whether rule `earlier` of `rules` matches every URL rule `later` matches. Conservative: `false` when unsure.
    ///
    /// The two rules are read where they lie in `rules`: most pairs differ in their fragments or queries (an exclusion
    /// by fragment above every rule is a candidate for each), and copies of both rules cost more than those checks.
    /// `shapes` are built only when the paths must be compared: building the automata is most of this check's cost at
    /// every start.
    static func covers(
        _ earlier: Int, _ later: Int, of rules: [EffectiveRule],
        shapes: @autoclosure () -> (earlier: PathShapes, later: PathShapes), work: inout Int
    ) -> Bool {
        guard partCovers(rules[earlier].pattern.fragment, rules[later].pattern.fragment),
            queryCovers(rules[earlier].pattern.query, rules[later].pattern.query)
        else { return false }
        let outer = rules[earlier].pattern.path ?? "*"
        if outer.isCatchAll { return true }
        // Variables in the earlier rule: its language is not modelled, so no claim.
        guard !outer.usesVariable else { return false }
        guard rules[earlier].percentEncoded == rules[later].percentEncoded else { return false }
        if !rules[earlier].caseSensitive {
            let shapes = shapes()
            return GlobInclusion.includes(outer: shapes.earlier.folded, inner: shapes.later.folded, work: &work)
        }
        guard rules[later].caseSensitive else { return false }
        let shapes = shapes()
        return GlobInclusion.includes(outer: shapes.earlier.exact, inner: shapes.later.exact, work: &work)
    }

    /// The normalised paths a path pattern matches (spec §2.1): slashes at both ends do not count, and a
    /// pattern ending in `/*` also matches its bare prefix, whose own end slashes do not count either
    /// (`buy//*` matches `buy`, as ``WildcardPatternCompiler`` reads it).
    static func pathPattern(_ pattern: String) -> GlobInclusion.Pattern {
        // Both ends first, as the matcher does: `/buy/*/` ends in `/*` once its end slash is gone.
        let trimmed = trimmingSlashes(pattern[...])
        var alternatives = [String(trimmed)]
        let scalars = trimmed.unicodeScalars
        if let slash = scalars.lastIndex(of: "/"), String(scalars[scalars.index(after: slash)...]).isCatchAll {
            alternatives.append(String(trimmingSlashes(Substring(scalars[..<slash]))))
        }
        return GlobInclusion.Pattern(alternatives)
    }

    /// `text` without the `/` scalars at either end, as the matcher trims patterns and paths (a slash followed
    /// by a combining mark is still a slash there). Found by index: at 10,000 domains this runs for every rule
    /// at every start.
    static func trimmingSlashes(_ text: Substring) -> Substring {
        let scalars = text.unicodeScalars
        let start = scalars.firstIndex { $0 != "/" } ?? scalars.endIndex
        let end = scalars[start...].lastIndex { $0 != "/" }.map(scalars.index(after:)) ?? start
        return Substring(scalars[start..<end])
    }

    /// The scalars before the first wildcard or variable, without leading slashes: every URL path the
    /// pattern matches starts with it (after the slash rules of spec §2.1), except a bare `/*` prefix, which
    /// is no longer than it.
    /// Found in the UTF-8 bytes, where each of these ASCII scalars is one byte of its own.
    static func literalPrefix(_ pattern: String, lowercased: Bool) -> String {
        let bytes = pattern.utf8
        let start = bytes.firstIndex { $0 != UInt8(ascii: "/") } ?? bytes.endIndex
        var end =
            bytes[start...].firstIndex { $0 == UInt8(ascii: "*") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "$") }
            ?? bytes.endIndex
        // "/buy/*" also matches "/buy": the shared start is "buy", not "buy/".
        while end > start, bytes[bytes.index(before: end)] == UInt8(ascii: "/") { end = bytes.index(before: end) }
        let prefix = String(Substring(bytes[start..<end]))
        return lowercased ? CaseFolding.fold(prefix) : prefix
    }

    /// `pattern` with every `$(name)` replaced by `replacement`.
    static func replacingVariables(_ pattern: String, with replacement: String) -> String {
        guard pattern.usesVariable else { return pattern }
        var result = ""
        var rest = pattern[...]
        while let start = rest.firstRange(of: "$("), let end = rest[start.upperBound...].firstIndex(of: ")") {
            result += rest[..<start.lowerBound] + replacement
            rest = rest[rest.index(after: end)...]
        }
        return result + rest
    }

    static func partCovers(_ earlier: String?, _ later: String?) -> Bool {
        guard let earlier, !earlier.isCatchAll else { return true }
        return earlier == later
    }

    static func queryCovers(_ earlier: QueryPattern?, _ later: QueryPattern?) -> Bool {
        switch earlier {
        case nil: return true
        case .whole(let pattern) where pattern.isCatchAll: return true
        case .items(let items) where items.allSatisfy({ $0.pattern.isCatchAll }): return true
        default: return earlier == later
        }
    }
}

/// An exclusion on a query item with `*` matches every URL its path matches, because an absent item
/// counts as `""` (spec §2.4, §8 item 10, element-call#1693).
public struct ExcludeQueryStarRule: AssociationRule {
    /// Creates the rule.
    public init() {}

    /// Warns about each such exclusion.
    public func check(_ context: AssociationContext) -> [Diagnostic] {
        context.effectiveRules.compactMap { rule in
            guard rule.exclude, case .items(let items) = rule.pattern.query,
                let item = items.first(where: { $0.pattern.isCatchAll })
            else { return nil }
            return context.diagnostic(
                .warning, rule: .excludeQueryStar,
                "this exclusion matches every URL its path matches: query item `\(item.name)` with \"\(item.pattern)\" also matches when the item is absent (it counts as \"\")",
                at: rule.path, hint: "use \"?*\" to exclude only URLs that carry `\(item.name)`")
        }
    }
}

extension Rule {
    /// Reported by `UnreachableRule`.
    public static let unreachableRule = Rule(
        "unreachable-rule", .warning,
        "A rule that can never apply: an earlier rule for the same apps already matches every URL it matches (the classic case: an exclusion below a catch-all). A note instead when a file has so many overlapping rules (hundreds starting with `*`) that comparing them all would hold up a reload: the rules after it are not checked."
    )

    /// Reported by `ExcludeQueryStarRule`.
    public static let excludeQueryStar = Rule(
        "exclude-query-star", .warning,
        "An exclusion with a query item `\"*\"`: it also matches URLs without that item (absent counts as `\"\"`), so it excludes every URL its path matches. Use `\"?*\"`."
    )
}
