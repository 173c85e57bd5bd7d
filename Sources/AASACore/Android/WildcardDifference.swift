/// Where one rule answers differently on iOS and on Android 15+ (spec §2.1 and §7.1): a `*` followed by a
/// character makes Android stop at that character's first occurrence, where Apple's greedy `*` backtracks. The
/// witness is a URL built from the rule's own patterns, and it is checked with both matchers before it is reported.
enum WildcardDifference {
    /// A URL on `domain` that `rule` matches on one platform and not the other, or `nil` when none is found.
    static func witness(for rule: ComponentPattern, domain: String) -> String? {
        var items: [(name: String, pattern: String)] = []
        if case .items(let list) = rule.query { items = list.map { ($0.name, $0.pattern) } }
        let parts: [String?] = [rule.path, rule.fragment] + items.map { Optional($0.pattern) }
        // Try the parts one at a time: that part gets the text that splits the platforms, the others a plain match.
        for (index, pattern) in parts.enumerated() {
            guard let pattern, let splitting = splittingText(pattern) else { continue }
            func text(_ position: Int) -> String {
                guard let own = parts[position] else { return "" }
                return position == index ? splitting : plainText(own)
            }
            let path = rule.path == nil ? "/" : text(0)
            let query = items.indices.map { "\(items[$0].name)=\(text($0 + 2))" }.joined(separator: "&")
            let url =
                "https://\(domain)\(path.hasPrefix("/") ? path : "/" + path)" + (query.isEmpty ? "" : "?" + query)
                + (rule.fragment == nil ? "" : "#" + text(1))
            if differs(rule, url: url) { return url }
        }
        return nil
    }

    /// Text that `pattern` matches with Apple's `*` but not Android's: its first `*` that is followed by a literal
    /// takes that literal between two other characters, so Android's star stops too early; every other wildcard
    /// takes one character.
    static func splittingText(_ pattern: String) -> String? {
        let tokens = AndroidPattern(pattern).tokens
        guard
            let star = tokens.indices.first(where: { index in
                guard tokens[index] == .star, index + 1 < tokens.count,
                    case .literal = tokens[index + 1]
                else { return false }
                return true
            }), case .literal(let next) = tokens[star + 1]
        else { return nil }
        var text = ""
        for (index, token) in tokens.enumerated() {
            switch token {
            case .literal(let scalar): text.unicodeScalars.append(scalar)
            case .one, .oneOrMore: text += "x"
            case .star:
                text += "x"
                if index == star {
                    text.unicodeScalars.append(next)
                    text += "x"
                }
            }
        }
        return text
    }

    /// A text `pattern` matches on both platforms: its literals, and one character per wildcard.
    static func plainText(_ pattern: String) -> String {
        var text = ""
        for token in AndroidPattern(pattern).tokens {
            switch token {
            case .literal(let scalar): text.unicodeScalars.append(scalar)
            case .one, .oneOrMore, .star: text += "x"
            }
        }
        return text
    }

    /// Whether `rule` alone gives `url` different verdicts on iOS 13+ and Android 15+.
    static func differs(_ rule: ComponentPattern, url: String) -> Bool {
        var apple = rule
        apple.exclude = nil
        apple.comment = nil
        let file = AssociationFile(
            applinks: AppLinks(details: [AppLinkDetails(appIDs: ["ABCDE12345.compare"], components: [apple])]))
        let ios = URLMatcher(file: file).match(url).verdict == .match
        var android = apple
        android.caseSensitive = nil
        android.percentEncoded = nil
        guard case .success(let dynamic) = DynamicRule.read(android.jsonValue(spelling: .apple), index: 0) else {
            return false
        }
        guard let parsed = try? MatchURL(parsing: url) else { return false }
        return ios != AndroidMatcher.failures(dynamic, AndroidMatcher.URLParts(parsed)).isEmpty
    }
}
