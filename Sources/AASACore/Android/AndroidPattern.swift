/// One pattern of Android 15's dynamic App Link rules, matched the way Android matches it (spec §7.1).
///
/// `?` is one character, `?*` one or more, and `*` zero or more characters *up to the first occurrence of the
/// character that follows it in the pattern*: it never backtracks, unlike Apple's greedy `*` (spec §2.1). So
/// `/a*b/c` does not match `/axb/yb/c` on Android. A `*` that ends the pattern takes the rest of the text; one
/// followed by another wildcard matches nothing (the spec is silent there; it is how Android's `PatternMatcher`
/// reads a glob whose star is followed by a wildcard). Matching is case-sensitive, on percent-decoded text.
struct AndroidPattern: Sendable, Hashable {
    enum Token: Sendable, Hashable {
        case literal(Unicode.Scalar)
        /// `?`
        case one
        /// `?*`
        case oneOrMore
        /// `*`
        case star
    }

    /// The pattern as written.
    let source: String
    let tokens: [Token]

    init(_ source: String) {
        self.source = source
        var tokens: [Token] = []
        let scalars = Array(source.unicodeScalars)
        var index = 0
        while index < scalars.count {
            switch scalars[index] {
            case "?" where index + 1 < scalars.count && scalars[index + 1] == "*":
                tokens.append(.oneOrMore)
                index += 1
            case "?": tokens.append(.one)
            case "*": tokens.append(.star)
            default: tokens.append(.literal(scalars[index]))
            }
            index += 1
        }
        self.tokens = tokens
    }

    /// Whether the pattern matches all of `text`.
    func matches(_ text: String) -> Bool {
        let text = Array(text.unicodeScalars)
        var position = 0
        var token = 0
        while token < tokens.count {
            switch tokens[token] {
            case .literal(let scalar):
                guard position < text.count, text[position] == scalar else { return false }
                position += 1
            case .one:
                guard position < text.count else { return false }
                position += 1
            case .oneOrMore:
                guard position < text.count else { return false }
                position += 1
                guard let end = stop(after: token, in: text, from: position) else { return false }
                position = end
            case .star:
                guard let end = stop(after: token, in: text, from: position) else { return false }
                position = end
            }
            token += 1
        }
        return position == text.count
    }

    /// Where the star at `token` stops in `text`, starting at `position`: the end at the end of the pattern, the
    /// first occurrence of the next literal (`nil` when it never occurs), or `position` before another wildcard.
    private func stop(after token: Int, in text: [Unicode.Scalar], from position: Int) -> Int? {
        guard token + 1 < tokens.count else { return text.count }
        guard case .literal(let next) = tokens[token + 1] else { return position }
        return text[position...].firstIndex(of: next)
    }
}
