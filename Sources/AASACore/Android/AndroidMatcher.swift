/// Android 15+'s verdict on URLs for the packages of one assetlinks.json (spec §7.1): for each package, its
/// `dynamic_app_link_components` in order, the first matching rule decides (`exclude` keeps the URL on the web),
/// and no match keeps it on the web; a missing, malformed or empty block leaves the decision to the app's intent
/// filters (`manifest`). Android 14 and earlier always leave it to them.
public struct AndroidMatcher: Sendable {
    /// Each package's rules, in file order.
    public let packages: [DynamicRules]

    /// The matcher for `packages` (default: every package the file delegates `handle_all_urls` to) of `root`, an
    /// assetlinks.json document.
    public init(assetLinks root: JSONValue, packages: [String]? = nil) {
        self.packages = (packages ?? DynamicRules.packages(in: root)).map { DynamicRules(package: $0, in: root) }
    }

    /// The verdict for `url`: an absolute http(s) URL or a path.
    public func match(_ url: String) -> AndroidMatchResult {
        let parsed: MatchURL
        do {
            parsed = try MatchURL(parsing: url)
        } catch {
            return AndroidMatchResult(
                url: url, verdict: .invalidURL, packages: [], reason: error.description, nearMisses: [], notes: [])
        }
        let parts = URLParts(parsed)
        let results = packages.map { evaluate($0, parts, url: url) }
        guard !results.isEmpty else {
            return AndroidMatchResult(
                url: url, verdict: .noMatch, packages: [],
                reason: "the file delegates handle_all_urls to no Android app: no app is verified for this host",
                nearMisses: [], notes: [])
        }
        // One verdict for the URL: an app that opens it wins, then intent filters that may, then the web.
        let order: [AndroidMatchResult.Verdict] = [.match, .manifest, .excluded, .noMatch]
        let best = order.first { verdict in results.contains { $0.verdict == verdict } } ?? .noMatch
        let deciding = results.filter { $0.verdict == best }
        var result = deciding[0]
        result.packages = deciding.flatMap(\.packages)
        if deciding.count > 1 { result.reason = deciding.map(\.reason).joined(separator: "; ") }
        result.notes =
            results.flatMap(\.notes)
            + results.filter { $0.verdict != best }.map {
                "\($0.packages.first ?? "?"): \($0.verdict.rawValue), \($0.reason)"
            }
        return result
    }

    private func evaluate(_ rules: DynamicRules, _ parts: URLParts, url: String) -> AndroidMatchResult {
        let package = rules.package
        func result(_ verdict: AndroidMatchResult.Verdict, _ reason: String) -> AndroidMatchResult {
            AndroidMatchResult(
                url: url, verdict: verdict, packages: [package], reason: reason, nearMisses: [], notes: rules.notes)
        }
        switch rules.block {
        case .notDelegated:
            return result(
                .noMatch, "\(package) has no handle_all_urls statement: Android does not verify it for this host")
        case .absent:
            return result(
                .manifest, "\(package) has no dynamic_app_link_components: its intent filters decide (as on Android 14)"
            )
        case .discarded(let discarded):
            return result(
                .manifest,
                "Android discards all of \(package)'s dynamic rules (\(discarded.reason)): its intent filters decide")
        case .rules(let list):
            for (index, rule) in list.enumerated() where Self.failures(rule, parts).isEmpty {
                var decided = result(
                    rule.exclude ? .excluded : .match,
                    rule.exclude
                        ? "excluded by dynamic_app_link_components[\(index)] of \(package): the URL stays on the web"
                        : "matched by dynamic_app_link_components[\(index)] of \(package): opens it")
                if rule.exclude { decided.packages = [] }
                decided.rule = rule.text
                decided.ruleIndex = index
                return decided
            }
            var missed = result(
                .noMatch,
                "no dynamic rule of \(package) matched (\(list.count) checked): on Android 15+ the URL stays on the web"
            )
            missed.packages = []
            missed.nearMisses = list.enumerated().filter { !$0.element.exclude }.prefix(5).map {
                ($0.offset, $0.element.text, Self.failures($0.element, parts).joined(separator: ", "))
            }
            return missed
        }
    }

    /// What of `rule` fails on `parts`; empty when it matches.
    static func failures(_ rule: DynamicRule, _ parts: URLParts) -> [String] {
        var failures: [String] = []
        if let path = rule.path, !AndroidPattern(path).matches(parts.path) {
            failures.append("path \(parts.path) does not match \(path)")
        }
        for (name, pattern) in rule.query ?? [] {
            let values = parts.query.filter { $0.name == name }.map(\.value)
            if values.isEmpty {
                failures.append("query item \(name) is absent")
            } else if !values.contains(where: AndroidPattern(pattern).matches) {
                failures.append("query item \(name)=\(values[0]) does not match \(pattern)")
            }
        }
        if let fragment = rule.fragment, !AndroidPattern(fragment).matches(parts.fragment) {
            failures.append("fragment \"\(parts.fragment)\" does not match \(fragment)")
        }
        return failures
    }

    /// The decoded parts of a URL Android matches: the path (`/` when empty), the query items, the fragment.
    struct URLParts {
        var path: String
        var query: [(name: String, value: String)]
        var fragment: String

        init(_ url: MatchURL) {
            path = url.path.isEmpty ? "/" : PercentEncoding.decode(url.path)
            query = (url.query ?? "").split(separator: "&", omittingEmptySubsequences: true).map { item in
                let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                // Android's Uri.getQueryParameter reads `+` as a space.
                func decoded(_ text: Substring) -> String {
                    PercentEncoding.decode(String(text.map { $0 == "+" ? " " : $0 }))
                }
                return (decoded(pair[0]), pair.count > 1 ? decoded(pair[1]) : "")
            }
            fragment = PercentEncoding.decode(url.fragment ?? "")
        }
    }
}
