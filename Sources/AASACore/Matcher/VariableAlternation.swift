/// One substitution variable's values, read once per file and case setting (spec §1.8): every pattern that uses
/// the variable emits this prefix tree (or character set) instead of reading the values again.
struct VariableAlternation: Sendable {
    /// How the values are matched.
    enum Form: Sendable {
        /// Every value is one literal character (`$(digit)`, …): one character-set state.
        case scalarSet(ScalarSet)
        /// Values sharing a prefix share states.
        case trie(Trie)
    }

    /// Prefix tree of the values, children in insertion order.
    struct Trie: Sendable {
        struct Node: Sendable {
            var children: [(WildcardPatternCompiler.Token, Int)] = []
            var terminal = false
        }
        var nodes: [Node] = [Node()]

        mutating func insert(_ value: [WildcardPatternCompiler.Token]) {
            var node = 0
            for token in value {
                if let existing = nodes[node].children.first(where: { $0.0 == token }) {
                    node = existing.1
                } else {
                    nodes.append(Node())
                    nodes[node].children.append((token, nodes.count - 1))
                    node = nodes.count - 1
                }
            }
            nodes[node].terminal = true
        }
    }

    let form: Form
    /// The most automaton states one URL character can visit inside one use (``PatternLimits/maximumWidth``).
    let width: Int
    /// Wildcards in all values together (a run of `*` counts once), charged to each pattern per use.
    let wildcards: Int
    /// Automaton states one use adds (``PatternLimits/maximumStates``).
    let states: Int

    /// Tokenizes `values` (a run of `*` is one `*`), folded when `caseSensitive` is false.
    init(values: [String], caseSensitive: Bool) {
        var wildcards = 0
        let tokenized = values.map { value in
            var tokens: [WildcardPatternCompiler.Token] = []
            for scalar in value.unicodeScalars {
                switch scalar {
                case "*" where tokens.last == .star: continue
                case "*": tokens.append(.star)
                case "?": tokens.append(.one)
                default: tokens.append(.literal(caseSensitive ? scalar.value : CaseFolding.fold(scalar.value)))
                }
                if case .literal = tokens.last! {} else { wildcards += 1 }
            }
            return tokens
        }
        self.wildcards = wildcards
        if !tokenized.isEmpty,
            tokenized.allSatisfy({ $0.count == 1 && { if case .literal = $0[0] { true } else { false } }($0) })
        {
            form = .scalarSet(ScalarSet(tokenized.compactMap { if case .literal(let v) = $0[0] { v } else { nil } }))
            width = 1
            states = 1
            return
        }
        var trie = Trie()
        for value in tokenized { trie.insert(value) }
        form = .trie(trie)
        width = Self.width(of: trie, hasWildcards: wildcards > 0)
        // As the compiler emits it: one state per edge (two for `*`), and a fork where a node has several ways on.
        states = trie.nodes.reduce(0) { total, node in
            let targets = node.children.count + (node.terminal ? 1 : 0)
            return total + (targets > 1 ? 1 : 0) + node.children.reduce(0) { $0 + ($1.0 == .star ? 2 : 1) }
        }
    }

    /// Without wildcards the tree is deterministic: one character advances each entry into it by one level, so a
    /// step visits at most one node per depth (its fork and one state per child). With wildcards, every state and
    /// fork edge it emits.
    private static func width(of trie: Trie, hasWildcards: Bool) -> Int {
        func cost(_ node: Trie.Node) -> Int {
            let targets = node.children.count + (node.terminal ? 1 : 0)
            return node.children.count + (targets > 1 ? 1 + targets : 0)
        }
        if hasWildcards {
            return trie.nodes.reduce(0) { total, node in
                total + cost(node) + node.children.reduce(0) { $0 + ($1.0 == .star ? 3 : 0) }
            }
        }
        var widest: [Int] = []
        var level = [0]
        while !level.isEmpty {
            widest.append(level.map { cost(trie.nodes[$0]) }.max() ?? 0)
            level = level.flatMap { trie.nodes[$0].children.map(\.1) }
        }
        return widest.reduce(0, +)
    }
}
