/// Puts a class of URLs into words from the patterns of the rules that decide it: the path, then each query
/// condition, then the fragment (`/help/* with query item articleNumber of exactly 4 characters`).
enum ChangeDescription {
    /// The URLs both `rules` match (one rule when the other side has none), as a phrase.
    static func describe(_ rules: [DecisionRule], android: Bool) -> String {
        func patterns(_ part: URLPart) -> [(String, DecisionRule)] {
            var seen: Set<String> = []
            return rules.compactMap { rule in
                guard let pattern = rule.patterns[part], seen.insert(pattern).inserted else { return nil }
                return (pattern, rule)
            }
        }
        func settings(_ rule: DecisionRule) -> String {
            var notes: [String] = []
            if !rule.caseSensitive { notes.append("any case") }
            if !android && !rule.percentEncoded { notes.append("decoded") }
            return notes.isEmpty ? "" : " (\(notes.joined(separator: ", ")))"
        }
        let paths = patterns(.path).filter { !$0.0.isCatchAll }
        var text: String
        switch paths.count {
        case 0: text = "any path"
        case 1: text = "`\(shownPath(paths[0].0))`" + settings(paths[0].1)
        default:
            text =
                "paths matching both "
                + paths.map { "`\(shownPath($0.0))`" + settings($0.1) }.joined(separator: " and ")
        }
        var conditions: [String] = []
        for (pattern, rule) in patterns(.query) where !pattern.isCatchAll {
            conditions.append("query matching `\(pattern)`" + settings(rule))
        }
        let itemNames = Set(
            rules.flatMap(\.patterns.keys).compactMap { if case .item(let name) = $0 { name } else { nil } })
        for name in itemNames.sorted() {
            for (pattern, rule) in patterns(.item(name)) {
                guard let phrase = itemPhrase(pattern, android: android) else { continue }
                conditions.append("query item \(name) \(phrase)" + settings(rule))
            }
        }
        for (pattern, rule) in patterns(.fragment) where !pattern.isCatchAll {
            let literal = !pattern.contains("*") && !pattern.contains("?")
            conditions.append((literal ? "fragment `\(pattern)`" : "fragment matching `\(pattern)`") + settings(rule))
        }
        if !conditions.isEmpty { text += " with " + conditions.joined(separator: " and ") }
        return text
    }

    /// An Apple path pattern as a path: with its leading slash (`abc` matches `/abc`, spec §2.1).
    private static func shownPath(_ pattern: String) -> String {
        pattern.hasPrefix("/") ? pattern : "/" + pattern
    }

    /// What an item pattern asks of the item's value, or `nil` when it asks nothing (Apple's `*`).
    private static func itemPhrase(_ pattern: String, android: Bool) -> String? {
        if pattern.isCatchAll { return android ? "present" : nil }
        if pattern == "?*" { return "present and not empty" }
        if !pattern.isEmpty, pattern.allSatisfy({ $0 == "?" }) {
            return "of exactly \(pattern.count) character\(pattern.count == 1 ? "" : "s")"
        }
        if pattern.isEmpty { return android ? "present and empty" : "empty or absent" }
        if !pattern.contains("*") && !pattern.contains("?") && !pattern.contains("$(") { return "= `\(pattern)`" }
        return "matching `\(pattern)`"
    }
}
