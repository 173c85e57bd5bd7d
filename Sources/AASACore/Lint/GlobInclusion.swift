/// Decides whether every string one wildcard pattern matches is also matched by another (language
/// inclusion of `*`/`?` patterns), by walking both automata together over an abstract alphabet: each
/// character that appears in either pattern, plus one symbol for "any other character".
///
/// Used to find rules that can never apply. It answers `false` whenever it cannot be sure, so a
/// "never applies" warning is never wrong.
enum GlobInclusion {
    enum Token: Hashable {
        case character(Unicode.Scalar)
        case any
        case star
    }

    /// A pattern as alternatives of token sequences.
    struct Pattern {
        let alternatives: [[Token]]
        /// Strings the pattern certainly matches: each alternative with `*` as nothing, and with every wildcard
        /// as one character that appears in no pattern (`nil`). Computed once, compared with many patterns.
        let witnesses: [[Unicode.Scalar?]]

        /// Longest pattern compared, in tokens: real path patterns are far shorter, and the search below costs the
        /// product of both lengths (a hostile site.json can hold megabyte-long patterns).
        static let maximumLength = 1_000

        init(_ alternatives: [String]) {
            let alternatives = alternatives.map { text in
                var tokens: [Token] = []
                for scalar in text.unicodeScalars {
                    switch scalar {
                    case "*": if tokens.last != .star { tokens.append(.star) }
                    case "?": tokens.append(.any)
                    default: tokens.append(.character(scalar))
                    }
                }
                return tokens
            }
            self.alternatives = alternatives
            witnesses = alternatives.flatMap { tokens -> [[Unicode.Scalar?]] in
                func text(star: [Unicode.Scalar?]) -> [Unicode.Scalar?] {
                    tokens.flatMap { token -> [Unicode.Scalar?] in
                        switch token {
                        case .character(let c): [c]
                        case .any: [nil]
                        case .star: star
                        }
                    }
                }
                return [text(star: []), text(star: [nil])]
            }
        }

        var isShort: Bool { alternatives.allSatisfy { $0.count <= Self.maximumLength } }

        /// Whether the pattern matches `text` (`nil` standing for a character in no pattern). `row[j]` says
        /// whether the tokens read so far match `text[..<j]`.
        func matches(_ text: [Unicode.Scalar?]) -> Bool {
            alternatives.contains { tokens in
                var row = [true] + Array(repeating: false, count: text.count)
                for token in tokens {
                    var next = Array(repeating: false, count: text.count + 1)
                    for j in 0...text.count {
                        switch token {
                        case .star: next[j] = row[j] || (j > 0 && next[j - 1])
                        case .any: next[j] = j > 0 && row[j - 1]
                        case .character(let c): next[j] = j > 0 && row[j - 1] && text[j - 1] == c
                        }
                    }
                    row = next
                }
                return row[text.count]
            }
        }

        var characters: Set<Unicode.Scalar> {
            Set(alternatives.joined().compactMap { if case .character(let c) = $0 { c } else { nil } })
        }

        /// NFA states are (alternative, position); position == count means accepting.
        struct State: Hashable {
            var alternative: Int
            var position: Int
        }

        func closure(_ states: Set<State>) -> Set<State> {
            var result = states
            var stack = Array(states)
            while let state = stack.popLast() {
                let tokens = alternatives[state.alternative]
                if state.position < tokens.count, tokens[state.position] == .star {
                    let next = State(alternative: state.alternative, position: state.position + 1)
                    if result.insert(next).inserted { stack.append(next) }
                }
            }
            return result
        }

        var start: Set<State> {
            closure(Set(alternatives.indices.map { State(alternative: $0, position: 0) }))
        }

        /// `nil` stands for a character that appears in neither pattern.
        func step(_ states: Set<State>, _ symbol: Unicode.Scalar?) -> Set<State> {
            var next: Set<State> = []
            for state in states {
                let tokens = alternatives[state.alternative]
                guard state.position < tokens.count else { continue }
                switch tokens[state.position] {
                case .star: next.insert(state)
                case .any: next.insert(State(alternative: state.alternative, position: state.position + 1))
                case .character(let c) where c == symbol:
                    next.insert(State(alternative: state.alternative, position: state.position + 1))
                case .character: break
                }
            }
            return closure(next)
        }

        func accepts(_ states: Set<State>) -> Bool {
            states.contains { $0.position == alternatives[$0.alternative].count }
        }
    }

    /// Whether `inner` ⊆ `outer`. `false` when unsure: after `budget` states of this search, or when `work`, a
    /// budget the caller shares between many searches, runs out. `work` counts elementary steps (a table cell, a
    /// state stepped over one symbol), so it measures time whatever the shape of the patterns.
    static func includes(outer: Pattern, inner: Pattern, budget: Int = 20_000, work: inout Int) -> Bool {
        guard outer.isShort, inner.isShort else { return false }
        // A string `inner` matches that `outer` does not settles it at once; it settles most real pairs (rules
        // that differ in a literal part), which the search below would explore state by state.
        work -= inner.witnesses.reduce(0) { $0 + $1.count + 1 } * outer.alternatives.reduce(0) { $0 + $1.count + 1 }
        if work < 0 { return false }
        if inner.witnesses.contains(where: { !outer.matches($0) }) { return false }
        let alphabet: [Unicode.Scalar?] = Array(outer.characters.union(inner.characters)) + [nil]
        struct Pair: Hashable {
            var inner: Set<Pattern.State>
            var outer: Set<Pattern.State>
        }
        var seen: Set<Pair> = []
        var queue = [Pair(inner: inner.start, outer: outer.start)]
        while let pair = queue.popLast() {
            guard seen.insert(pair).inserted else { continue }
            // Both state sets step over every symbol, and each step may queue a pair: set operations, measured at
            // about 32 table cells each.
            work -= 32 * alphabet.count * (pair.inner.count + pair.outer.count + 2)
            if seen.count > budget || work < 0 { return false }
            if inner.accepts(pair.inner) && !outer.accepts(pair.outer) { return false }
            for symbol in alphabet {
                let nextInner = inner.step(pair.inner, symbol)
                guard !nextInner.isEmpty else { continue }
                queue.append(Pair(inner: nextInner, outer: outer.step(pair.outer, symbol)))
            }
        }
        return true
    }
}
