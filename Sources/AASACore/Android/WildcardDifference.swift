/// Where an Apple rule and the Android rule made from it answer a URL differently, by what spec §7.1 records:
/// Android's `*` and `?*` stop at the first occurrence of the character after them where Apple's backtrack,
/// Android has no `caseSensitive`, and a `?` entry needs its item present where Apple counts an absent one as `""`
/// (§2.4). Where the spec is silent on Android (end slashes, percent-encoding), nothing is claimed. Candidate URLs
/// are built from the rule's own patterns, and one is reported only once both matchers disagree on it.
enum WildcardDifference {
    /// A URL on `domain` that `apple` (as iOS reads it) and `android` (its Android form) answer differently, or
    /// `nil` when none of the candidates shows a difference.
    static func witness(apple: ComponentPattern, android: ComponentPattern, domain: String) -> String? {
        var items: [(name: String, pattern: String)] = []
        if case .items(let list) = apple.query { items = list.map { ($0.name, $0.pattern) } }
        let parts: [String?] = [apple.path, apple.fragment] + items.map { Optional($0.pattern) }
        /// The URL with part `index` replaced by `replacement` (`nil`: left out), the others a plain match.
        func url(_ index: Int, _ replacement: String?) -> String {
            func text(_ position: Int) -> String? {
                guard let own = parts[position] else { return nil }
                return position == index ? replacement : plainText(own)
            }
            let path = apple.path == nil ? "/" : text(0) ?? "/"
            let query = items.indices.compactMap { index in text(index + 2).map { "\(items[index].name)=\($0)" } }
                .joined(separator: "&")
            return "https://\(domain)\(path.hasPrefix("/") ? path : "/" + path)" + (query.isEmpty ? "" : "?" + query)
                + (apple.fragment == nil ? "" : "#" + (text(1) ?? ""))
        }
        var candidates: [String] = []
        for (index, pattern) in parts.enumerated() {
            guard let pattern else { continue }
            if let splitting = splittingText(pattern) { candidates.append(url(index, splitting)) }
            let plain = plainText(pattern)
            if apple.caseSensitive == false, plain.uppercased() != plain {
                candidates.append(url(index, plain.uppercased()))
            }
            if index >= 2, pattern == "*" { candidates.append(url(index, nil)) }
        }
        return candidates.first { differs(apple: apple, android: android, url: $0) }
    }

    /// Text that `pattern` matches with Apple's `*` but not Android's: its first `*` (or `?*`) that is followed by a
    /// literal takes that literal between two other characters, so Android's star stops too early; every other
    /// wildcard takes one character.
    static func splittingText(_ pattern: String) -> String? {
        let tokens = AndroidPattern(pattern).tokens
        guard
            let star = tokens.indices.first(where: { index in
                guard tokens[index] == .star || tokens[index] == .oneOrMore, index + 1 < tokens.count,
                    case .literal = tokens[index + 1]
                else { return false }
                return true
            }), case .literal(let next) = tokens[star + 1]
        else { return nil }
        var text = ""
        for (index, token) in tokens.enumerated() {
            switch token {
            case .literal(let scalar): text.unicodeScalars.append(scalar)
            case .one: text += "x"
            case .star, .oneOrMore:
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

    /// Whether `apple` on iOS 13+ and `android` on Android 15+ match `url` differently.
    static func differs(apple: ComponentPattern, android: ComponentPattern, url: String) -> Bool {
        var apple = apple
        apple.exclude = nil
        apple.comment = nil
        let file = AssociationFile(
            applinks: AppLinks(details: [AppLinkDetails(appIDs: ["ABCDE12345.compare"], components: [apple])]))
        let ios = URLMatcher(file: file).match(url).verdict == .match
        var android = android
        android.exclude = nil
        guard case .success(let dynamic) = DynamicRule.read(android.jsonValue(spelling: .apple), index: 0) else {
            return false
        }
        guard let parsed = try? MatchURL(parsing: url) else { return false }
        return ios != AndroidMatcher.failures(dynamic, AndroidMatcher.URLParts(parsed)).isEmpty
    }
}
