/// Apple's universal-link matcher for one `apple-app-site-association` file (spec §2).
///
/// Build it once per file: every pattern is compiled up front (spec §2.1 wildcards, §1.8 variables) and
/// every rule's settings are resolved across the `defaults` levels (spec §1.7). ``match(_:nearMissLimit:)``
/// then says which app opens a URL, which rule decided, and for a miss, which rules came closest.
///
/// Evaluation (spec §2.2): `details` entries in array order, and within an entry its rules top to bottom;
/// the first rule that matches decides for the whole file. If it is an exclusion the URL is not a universal
/// link and nothing later is tried, including other apps' entries.
public struct URLMatcher: Sendable {
    /// One evaluated `details` entry.
    struct Entry: Sendable {
        var detailsIndex: Int
        var appIDs: [String]
        var rules: [CompiledRule]
    }

    /// Which client generation's rules this matcher applies.
    public let mode: MatchMode
    /// Every problem found compiling the file's patterns and variables, in file order. Rules with an
    /// error-severity problem never match.
    public let compileDiagnostics: [PatternDiagnostic]
    /// Entries that are evaluated, in file order.
    let entries: [Entry]
    /// Why entries were skipped (spec §9: an entry naming no app is ignored).
    let notes: [String]
    /// The step widths of the file's compiled patterns together (``PatternLimits/maximumDomainWidth``): a URL
    /// costs at most this many state visits per character to match.
    let width: Int
    /// The automaton states of the file's compiled patterns together (``PatternLimits/maximumDomainStates``).
    let states: Int

    /// Compiles `file` for `mode`. Problems are collected in ``compileDiagnostics``; a rule whose pattern
    /// cannot be compiled never matches.
    public init(file: AssociationFile, mode: MatchMode = .modern) {
        self.init(file: file, mode: mode, patterns: .shared)
    }

    /// ``init(file:mode:)``, taking patterns without variables from `patterns` and keeping them there.
    init(file: AssociationFile, mode: MatchMode = .modern, patterns: SharedPatterns) {
        var compilation = Compilation(file: file, mode: mode, patterns: patterns)
        compilation.run()
        self.mode = mode
        self.compileDiagnostics = compilation.diagnostics
        self.entries = compilation.entries
        self.notes = compilation.notes
        self.width = compilation.width
        self.states = compilation.states
    }

    /// Compiles `file` for `mode`, throwing if any pattern cannot be compiled (warnings do not throw).
    public init(validating file: AssociationFile, mode: MatchMode = .modern) throws(URLMatcherCompileError) {
        self.init(file: file, mode: mode)
        if compileDiagnostics.contains(where: { $0.severity == .error }) {
            throw URLMatcherCompileError(diagnostics: compileDiagnostics)
        }
    }

    /// Matches `url`: an absolute http(s) URL, or a path starting with `/` (matched as if on this file's
    /// domain). Unparseable input, or a URL over ``MatchURL/maximumLength`` bytes, gives verdict
    /// ``MatchResult/Verdict/invalidURL`` and is matched by no rule.
    ///
    /// - Parameter nearMissLimit: how many closest rules to report on a no-match.
    public func match(_ url: String, nearMissLimit: Int = 5) -> MatchResult {
        let parsed: MatchURL
        do {
            parsed = try MatchURL(parsing: url)
        } catch {
            return MatchResult(url: url, verdict: .invalidURL, reason: error.description)
        }
        return match(parsed, displayedAs: url, nearMissLimit: nearMissLimit)
    }

    /// Matches an already split URL; `text` is what results show as the URL.
    public func match(_ url: MatchURL, displayedAs text: String, nearMissLimit: Int = 5) -> MatchResult {
        let subject = MatchSubject(url)
        for entry in entries {
            for rule in entry.rules where rule.matches(subject) {
                return decided(by: rule, in: entry, url: text)
            }
        }
        return missed(subject, url: text, nearMissLimit: nearMissLimit)
    }

    /// What ``match(_:displayedAs:nearMissLimit:)`` decides for `url`, without the words a result explains the
    /// decision in: a domain's test URLs are checked at every load, and only a failing one is explained.
    public func verdict(_ url: MatchURL) -> (verdict: MatchResult.Verdict, appIDs: [String]) {
        let subject = MatchSubject(url)
        for entry in entries {
            for rule in entry.rules where rule.matches(subject) {
                return rule.exclude ? (.excluded, []) : (.match, entry.appIDs)
            }
        }
        return (.noMatch, [])
    }

    private func decided(by rule: CompiledRule, in entry: Entry, url: String) -> MatchResult {
        let inherited = rule.inheritedKeys
        let inheritance = inherited.isEmpty ? "" : " (inheriting \(inherited.joined(separator: ", ")))"
        let reason: String
        if rule.exclude {
            let marker = rule.kind == .path ? "a NOT path" : "\"exclude\": true"
            reason =
                "excluded by \(rule.location)\(inheritance), which is \(marker): the URL is not a universal link and "
                + "later rules are not tried"
        } else {
            reason = "matched by \(rule.location)\(inheritance): opens \(entry.appIDs.joined(separator: ", "))"
        }
        return MatchResult(
            url: url, verdict: rule.exclude ? .excluded : .match, appIDs: rule.exclude ? [] : entry.appIDs,
            detailsIndex: rule.detailsIndex, componentIndex: rule.ruleIndex, ruleKind: rule.kind, rule: rule.text,
            reason: reason, notes: notes)
    }

    private func missed(_ subject: MatchSubject, url: String, nearMissLimit: Int) -> MatchResult {
        var candidates: [(rule: CompiledRule, matched: Int)] = []
        var ruleCount = 0
        for entry in entries {
            ruleCount += entry.rules.count
            // Only inclusion rules explain why a URL does not open an app; an exclusion that did not match
            // is not a reason. Without near misses asked for (serving), no rule is evaluated again.
            for rule in entry.rules where !rule.exclude && nearMissLimit > 0 {
                candidates.append((rule, rule.evaluate(subject, withReasons: false).matched.count))
            }
        }
        // Rank by how many specified parts matched; stable, so equal scores keep file order. Reasons are
        // written only for the rules reported.
        let ranked = candidates.enumerated().sorted { lhs, rhs in
            lhs.element.matched != rhs.element.matched
                ? lhs.element.matched > rhs.element.matched : lhs.offset < rhs.offset
        }.prefix(max(0, nearMissLimit))
        let misses = ranked.map { candidate -> NearMiss in
            let rule = candidate.element.rule
            let evaluation = rule.evaluate(subject)
            let matched = evaluation.matched.map { "\($0) matched" }
            return NearMiss(
                detailsIndex: rule.detailsIndex, componentIndex: rule.ruleIndex, ruleKind: rule.kind, rule: rule.text,
                reason: (matched + evaluation.failures).joined(separator: ", "),
                matchedParts: evaluation.matched.count, specifiedParts: evaluation.specified)
        }
        let reason: String
        if entries.isEmpty {
            reason =
                "no rule matched: the file has no \(mode == .legacy ? "details entry with appID and paths" : "details entry naming an app")"
        } else {
            let noun = entries.count == 1 ? "entry" : "entries"
            reason = "no rule matched (\(ruleCount) rules in \(entries.count) details \(noun) checked)"
        }
        return MatchResult(
            url: url, verdict: .noMatch, reason: reason, nearMisses: misses,
            notes: notes)
    }
}
