import AASACore

/// A second, deliberately naive implementation of Apple's matching rules (spec §2.1–§2.3, §2.7, §2.8) for the
/// files it can judge, written from the spec rather than from ``URLMatcher``: a quadratic wildcard table
/// instead of a Thompson NFA, no fast paths, no caching. The matcher fuzz target compares the two.
///
/// It judges only files without substitution variables, `defaults`, query dictionaries, `caseSensitive` or
/// `percentEncoded`: those are fuzzed for crashes and hangs but not compared.
struct ReferenceMatcher {
    /// What the reference says about one URL.
    struct Answer: Equatable, CustomStringConvertible {
        var verdict: MatchResult.Verdict
        var appIDs: [String]
        var detailsIndex: Int?
        var ruleIndex: Int?
        var ruleKind: MatchResult.RuleKind?

        var description: String {
            "\(verdict.rawValue) \(appIDs) details[\(detailsIndex.map(String.init) ?? "-")]."
                + "\(ruleKind?.rawValue ?? "-")[\(ruleIndex.map(String.init) ?? "-")]"
        }

        init(_ result: MatchResult) {
            self.init(
                verdict: result.verdict, appIDs: result.appIDs, detailsIndex: result.detailsIndex,
                ruleIndex: result.componentIndex, ruleKind: result.ruleKind)
        }

        init(
            verdict: MatchResult.Verdict, appIDs: [String] = [], detailsIndex: Int? = nil, ruleIndex: Int? = nil,
            ruleKind: MatchResult.RuleKind? = nil
        ) {
            self.verdict = verdict
            self.appIDs = appIDs
            self.detailsIndex = detailsIndex
            self.ruleIndex = ruleIndex
            self.ruleKind = ruleKind
        }
    }

    /// Longest pattern or URL part the quadratic table is run on, so one input stays fast.
    static let maximumLength = 300

    let file: AssociationFile
    let mode: MatchMode

    /// A reference for `file`, or `nil` when the file uses something the reference does not model.
    init?(file: AssociationFile, mode: MatchMode) {
        guard let applinks = file.applinks, applinks.defaults == nil else { return nil }
        for details in applinks.details {
            guard details.defaults == nil else { return nil }
            var patterns = details.paths ?? []
            for component in details.components ?? [] {
                guard component.caseSensitive != false, component.percentEncoded != false else { return nil }
                switch component.query {
                case .items: return nil
                case .whole(let pattern): patterns.append(pattern)
                case nil: break
                }
                patterns += [component.path, component.fragment].compactMap { $0 }
            }
            // Legacy clients read `$(` literally (spec §1.9); modern ones substitute, which is not modelled.
            if mode == .modern && patterns.contains(where: { $0.contains("$(") }) { return nil }
            if patterns.contains(where: { $0.unicodeScalars.count > Self.maximumLength }) { return nil }
        }
        self.file = file
        self.mode = mode
    }

    /// The answer for `text`, or `nil` when the URL is too long to judge.
    func answer(_ text: String) -> Answer? {
        guard let url = try? MatchURL(parsing: text) else { return Answer(verdict: .invalidURL) }
        let parts = [url.path, url.query ?? "", url.fragment ?? ""]
        guard parts.allSatisfy({ $0.unicodeScalars.count <= Self.maximumLength }) else { return nil }
        for (detailsIndex, details) in (file.applinks?.details ?? []).enumerated() {
            let apps: [String]
            var components: [ComponentPattern]? = nil
            switch mode {
            case .modern:
                apps = details.modernAppIDs
                // Spec §2.7: `components`, even empty, hides `paths` from modern clients.
                components = details.components
            case .legacy:
                // Spec §1.3: iOS 12 reads only `appID` and `paths`.
                apps = details.appID.map { [$0] } ?? []
            }
            // Spec §9: an entry naming no app is skipped.
            guard !apps.isEmpty else { continue }
            if let components {
                for (index, component) in components.enumerated() where Self.matches(component, url) {
                    let exclude = component.exclude ?? false
                    return Answer(
                        verdict: exclude ? .excluded : .match, appIDs: exclude ? [] : apps, detailsIndex: detailsIndex,
                        ruleIndex: index, ruleKind: .component)
                }
                continue
            }
            for (index, entry) in (details.paths ?? []).enumerated() {
                // Spec §2.8: `NOT ` (capital, one space) excludes.
                let exclude = entry.hasPrefix("NOT ")
                let pattern = exclude ? String(entry.dropFirst(4)) : entry
                guard Self.isWithinLimits(pattern), Self.pathMatches(pattern, url.path) else { continue }
                return Answer(
                    verdict: exclude ? .excluded : .match, appIDs: exclude ? [] : apps, detailsIndex: detailsIndex,
                    ruleIndex: index, ruleKind: .path)
            }
        }
        return Answer(verdict: .noMatch)
    }

    /// Spec §2.3: every part the component names must match; an absent query or fragment counts as "".
    static func matches(_ component: ComponentPattern, _ url: MatchURL) -> Bool {
        let patterns: [String?] = [
            component.path, component.query.flatMap { if case .whole(let p) = $0 { p } else { nil } },
            component.fragment,
        ]
        guard patterns.allSatisfy({ $0.map(isWithinLimits) ?? true }) else { return false }
        if let path = component.path, !pathMatches(path, url.path) { return false }
        if case .whole(let pattern) = component.query, !globMatches(pattern, url.query ?? "") { return false }
        if let fragment = component.fragment, !globMatches(fragment, url.fragment ?? "") { return false }
        return true
    }

    /// Whether the server compiles `pattern` at all: over ``PatternLimits/maximumWildcards`` wildcards (a run of
    /// `*` counts once, each `?` once) its rule is refused and matches nothing (docs/configuration.md). The other
    /// limits are out of reach of the patterns the reference judges (at most ``maximumLength`` characters, no
    /// variables).
    static func isWithinLimits(_ pattern: String) -> Bool {
        var wildcards = 0
        var previous: Unicode.Scalar? = nil
        for scalar in pattern.unicodeScalars {
            if scalar == "?" || (scalar == "*" && previous != "*") { wildcards += 1 }
            previous = scalar
        }
        return wildcards <= PatternLimits.maximumWildcards
    }

    /// Spec §2.1: slashes at both ends do not count, and a pattern ending in `/*` also matches what is before
    /// that slash, whose own end slashes do not count either.
    static func pathMatches(_ pattern: String, _ path: String) -> Bool {
        let pattern = trimmingSlashes(Array(pattern.unicodeScalars))
        let path = trimmingSlashes(Array(path.unicodeScalars))
        if glob(pattern, path) { return true }
        guard let lastNonStar = pattern.lastIndex(where: { $0 != "*" }), lastNonStar < pattern.count - 1,
            pattern[lastNonStar] == "/"
        else { return false }
        return glob(trimmingSlashes(Array(pattern[..<lastNonStar])), path)
    }

    static func globMatches(_ pattern: String, _ text: String) -> Bool {
        glob(Array(pattern.unicodeScalars), Array(text.unicodeScalars))
    }

    static func trimmingSlashes(_ scalars: [Unicode.Scalar]) -> [Unicode.Scalar] {
        guard let first = scalars.firstIndex(where: { $0 != "/" }) else { return [] }
        let last = scalars.lastIndex(where: { $0 != "/" })!
        return Array(scalars[first...last])
    }

    /// Spec §2.1: `*` is any run of characters, `?` exactly one; the whole text must match. `table[j]` says
    /// whether the pattern read so far matches `text[..<j]`.
    static func glob(_ pattern: [Unicode.Scalar], _ text: [Unicode.Scalar]) -> Bool {
        var table = [true] + Array(repeating: false, count: text.count)
        for token in pattern {
            var next = Array(repeating: false, count: text.count + 1)
            for j in 0...text.count {
                switch token {
                case "*": next[j] = table[j] || (j > 0 && next[j - 1])
                case "?": next[j] = j > 0 && table[j - 1]
                default: next[j] = j > 0 && table[j - 1] && text[j - 1] == token
                }
            }
            table = next
        }
        return table[text.count]
    }
}
