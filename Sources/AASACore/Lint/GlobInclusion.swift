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

        /// Every (alternative, position) pair numbered in one range: alternative `a` at position `p` is
        /// `stateOffsets[a] + p`, and its last state (past its last token) accepts. The token read in each state,
        /// `nil` for accepting states.
        var stateTokens: [Token?] {
            alternatives.flatMap { $0.map(Optional.some) + [nil] }
        }
    }

    /// A set of automaton states as bits: stepping and comparing sets allocates one small array, where a
    /// `Set` of states allocated and hashed per state (a search explores thousands of sets).
    struct StateSet: Hashable {
        var words: [UInt64]

        init(capacity: Int) {
            words = Array(repeating: 0, count: (capacity + 63) / 64)
        }

        var isEmpty: Bool { words.allSatisfy { $0 == 0 } }
        var count: Int { words.reduce(0) { $0 + $1.nonzeroBitCount } }

        func contains(_ state: Int) -> Bool { words[state >> 6] & (1 << UInt64(state & 63)) != 0 }

        mutating func insert(_ state: Int) { words[state >> 6] |= 1 << UInt64(state & 63) }

        /// Calls `body` with each state.
        func forEach(_ body: (Int) -> Void) {
            for (index, word) in words.enumerated() {
                var bits = word
                while bits != 0 {
                    body(index << 6 | bits.trailingZeroBitCount)
                    bits &= bits - 1
                }
            }
        }
    }

    /// A pattern's automaton over ``StateSet``s.
    struct Automaton {
        let tokens: [Token?]
        let accepting: [Int]
        /// The states reading a `*`, in increasing order.
        let stars: [Int]
        let start: StateSet

        init(_ pattern: Pattern) {
            let tokens = pattern.stateTokens
            let accepting = tokens.indices.filter { tokens[$0] == nil }
            var start = StateSet(capacity: tokens.count)
            // Each alternative's first state follows the previous alternative's accepting state.
            for first in [0] + accepting.dropLast().map({ $0 + 1 }) { start.insert(first) }
            let stars = tokens.indices.filter { tokens[$0] == .star }
            self.tokens = tokens
            self.accepting = accepting
            self.stars = stars
            self.start = Self.closure(start, stars: stars)
        }

        /// `states` plus what each `*` reaches by matching nothing. States only point forward, so one pass in
        /// increasing order sees the states it adds.
        static func closure(_ states: StateSet, stars: [Int]) -> StateSet {
            var result = states
            for state in stars where result.contains(state) { result.insert(state + 1) }
            return result
        }

        /// The states after reading `symbol` (`nil`: a character in neither pattern).
        func step(_ states: StateSet, _ symbol: Unicode.Scalar?) -> StateSet {
            var next = StateSet(capacity: tokens.count)
            states.forEach { state in
                switch tokens[state] {
                case .star: next.insert(state)
                case .any: next.insert(state + 1)
                case .character(let c) where c == symbol: next.insert(state + 1)
                case .character, nil: break
                }
            }
            return Self.closure(next, stars: stars)
        }

        func accepts(_ states: StateSet) -> Bool {
            accepting.contains { states.contains($0) }
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
        let innerAutomaton = Automaton(inner)
        let outerAutomaton = Automaton(outer)
        struct Pair: Hashable {
            var inner: StateSet
            var outer: StateSet
        }
        var seen: Set<Pair> = []
        var queue = [Pair(inner: innerAutomaton.start, outer: outerAutomaton.start)]
        while let pair = queue.popLast() {
            guard seen.insert(pair).inserted else { continue }
            // Both state sets step over every symbol (each of their states, each `*`), and each step may queue a
            // pair; a state step costs about six table cells.
            work -=
                6 * alphabet.count
                * (pair.inner.count + pair.outer.count + innerAutomaton.stars.count + outerAutomaton.stars.count + 4)
            if seen.count > budget || work < 0 { return false }
            if innerAutomaton.accepts(pair.inner) && !outerAutomaton.accepts(pair.outer) { return false }
            for symbol in alphabet {
                let nextInner = innerAutomaton.step(pair.inner, symbol)
                guard !nextInner.isEmpty else { continue }
                queue.append(Pair(inner: nextInner, outer: outerAutomaton.step(pair.outer, symbol)))
            }
        }
        return true
    }
}
