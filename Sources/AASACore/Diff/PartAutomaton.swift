/// One pattern of a rule as an explicit automaton over Unicode scalars: what the semantic diff walks to reason
/// about every URL at once instead of sampling some.
///
/// Built from the matcher's own compiled ``WildcardPattern`` (Apple, spec §2.1: the slash, variable and case rules
/// are already in it) or from an ``AndroidPattern`` (spec §7.1: its `*` stops at the first occurrence of the next
/// character), so the diff and the matcher cannot disagree on what a pattern means.
///
/// Every state, edge and ε-closure entry is charged to the comparison's ``ComparisonBudget`` before it is made:
/// a pattern whose closures would outgrow the budget (a long run of `*`, a variable with many values used many
/// times) stops the comparison instead of the server.
struct PartAutomaton: Hashable, Sendable {
    /// What one edge reads.
    enum Label: Hashable, Sendable {
        case scalar(UInt32)
        case any
        case set(ScalarSet)
        /// Any scalar but this one (Android's `*` before a literal).
        case anyBut(UInt32)

        func reads(_ value: UInt32) -> Bool {
            switch self {
            case .scalar(let scalar): scalar == value
            case .any: true
            case .set(let set): set.contains(value)
            case .anyBut(let scalar): scalar != value
            }
        }
    }

    struct Edge: Hashable, Sendable {
        var label: Label
        var target: Int
    }

    /// The edges leaving each state.
    private(set) var edges: [[Edge]]
    /// Each state and what it reaches without reading (its ε-closure), computed once.
    private(set) var closures: [[Int]]
    private(set) var accepting: [Bool]
    let start: Int
    /// Whether text is case-folded (``CaseFolding``) before it is read: a case-insensitive Apple pattern is
    /// compiled folded and compared with folded text.
    let folds: Bool

    var stateCount: Int { edges.count }

    /// Whether the empty text is accepted.
    var acceptsEmpty: Bool { closures[start].contains { accepting[$0] } }

    /// The automaton of these states; their states and edges are charged, the closures are charged here as each
    /// is made (one closure holds at most every state, which are charged already).
    private init(
        edges: [[Edge]], epsilons: [[Int]], accepting: [Bool], start: Int, folds: Bool,
        budget: inout ComparisonBudget
    ) throws(ComparisonBudget.Exhausted) {
        self.edges = edges
        self.accepting = accepting
        self.start = start
        self.folds = folds
        var closures: [[Int]] = []
        closures.reserveCapacity(epsilons.count)
        for state in epsilons.indices {
            var seen: Set<Int> = [state]
            var stack = [state]
            var followed = 0
            while let top = stack.popLast() {
                followed += epsilons[top].count
                for next in epsilons[top] where seen.insert(next).inserted { stack.append(next) }
            }
            try budget.charge(
                edges: seen.count, bytes: ComparisonBudget.bytes(seen.count, of: Int.self), steps: followed + 1)
            closures.append(seen.sorted())
        }
        self.closures = closures
    }

    /// What a state with `edges` edges and `epsilons` ε-edges costs before its closure: its edge and ε-edge arrays
    /// and the closure's array header.
    private static func stateBytes(edges: Int, epsilons: Int) -> Int {
        ComparisonBudget.bytes(edges, of: Edge.self) + ComparisonBudget.bytes(epsilons, of: Int.self)
            + ComparisonBudget.arrayHeader + 1
    }

    /// The automaton of an Apple pattern as the matcher compiled it; `folds` when the rule is case-insensitive.
    init(_ pattern: WildcardPattern, folds: Bool, budget: inout ComparisonBudget) throws(ComparisonBudget.Exhausted) {
        switch pattern.shape {
        case .exact(let literals):
            try self.init(chain: literals, loopAtEnd: false, alsoAccepting: nil, folds: folds, budget: &budget)
        case .prefix(let literals, let bare):
            // `x/*` also matches the bare prefix, which is a prefix of the literals: accept where it ends.
            try self.init(
                chain: literals, loopAtEnd: true, alsoAccepting: bare.map(\.count), folds: folds, budget: &budget)
        case .automaton:
            // One state per instruction, one edge or a fork's ε-edges each: charged before they are made.
            let count = pattern.kinds.count
            try budget.charge(
                states: count, edges: count + pattern.forkTargets.count,
                bytes: count * Self.stateBytes(edges: 1, epsilons: 0)
                    + ComparisonBudget.bytes(pattern.forkTargets.count, of: Int.self),
                steps: count)
            var edges: [[Edge]] = Array(repeating: [], count: pattern.kinds.count)
            var epsilons: [[Int]] = Array(repeating: [], count: pattern.kinds.count)
            var accepting = Array(repeating: false, count: pattern.kinds.count)
            for state in pattern.kinds.indices {
                let next = Int(pattern.nexts[state])
                let operand = pattern.operands[state]
                switch pattern.kinds[state] {
                case .scalar: edges[state] = [Edge(label: .scalar(operand), target: next)]
                case .any: edges[state] = [Edge(label: .any, target: next)]
                case .scalarSet: edges[state] = [Edge(label: .set(pattern.classes[Int(operand)]), target: next)]
                case .fork:
                    let first = Int(operand)
                    epsilons[state] = pattern.forkTargets[first..<(first + next)].map { Int($0) }
                case .accept: accepting[state] = true
                }
            }
            try self.init(
                edges: edges, epsilons: epsilons, accepting: accepting, start: Int(pattern.start), folds: folds,
                budget: &budget)
        }
    }

    private init(
        chain literals: [UInt32], loopAtEnd: Bool, alsoAccepting extra: Int?, folds: Bool,
        budget: inout ComparisonBudget
    ) throws(ComparisonBudget.Exhausted) {
        let count = literals.count + 1
        try budget.charge(
            states: count, edges: count, bytes: count * Self.stateBytes(edges: 1, epsilons: 0), steps: count)
        var edges: [[Edge]] = literals.indices.map { [Edge(label: .scalar(literals[$0]), target: $0 + 1)] }
        edges.append(loopAtEnd ? [Edge(label: .any, target: literals.count)] : [])
        var accepting = Array(repeating: false, count: literals.count + 1)
        accepting[literals.count] = true
        if let extra { accepting[extra] = true }
        try self.init(
            edges: edges, epsilons: Array(repeating: [], count: edges.count), accepting: accepting, start: 0,
            folds: folds, budget: &budget)
    }

    /// The automaton of an Android pattern (spec §7.1): `?` one scalar, `?*` one then as `*`, and `*` any run
    /// of scalars up to the first occurrence of the literal after it (the rest of the text at the end, nothing
    /// before another wildcard).
    init(android pattern: AndroidPattern, budget: inout ComparisonBudget) throws(ComparisonBudget.Exhausted) {
        // At most a state and two edges per token, and the start.
        let count = pattern.tokens.count + 1
        try budget.charge(
            states: count, edges: 2 * count, bytes: count * Self.stateBytes(edges: 2, epsilons: 0), steps: count)
        var edges: [[Edge]] = []
        var epsilons: [[Int]] = []
        func newState() -> Int {
            edges.append([])
            epsilons.append([])
            return edges.count - 1
        }
        var current = newState()
        let tokens = pattern.tokens
        for (index, token) in tokens.enumerated() {
            func star() {
                guard index + 1 < tokens.count else {
                    edges[current].append(Edge(label: .any, target: current))
                    return
                }
                // Before a literal: any run without it; the literal token then reads its first occurrence.
                // Before another wildcard: nothing.
                if case .literal(let next) = tokens[index + 1] {
                    edges[current].append(Edge(label: .anyBut(next.value), target: current))
                }
            }
            switch token {
            case .literal(let scalar):
                let next = newState()
                edges[current].append(Edge(label: .scalar(scalar.value), target: next))
                current = next
            case .one:
                let next = newState()
                edges[current].append(Edge(label: .any, target: next))
                current = next
            case .oneOrMore:
                let next = newState()
                edges[current].append(Edge(label: .any, target: next))
                current = next
                star()
            case .star:
                star()
            }
        }
        var accepting = Array(repeating: false, count: edges.count)
        accepting[current] = true
        try self.init(
            edges: edges, epsilons: epsilons, accepting: accepting, start: 0, folds: false, budget: &budget)
    }

    /// This automaton, which reads decoded text (Apple's `percentEncoded: false`), made to read the text as the
    /// URL carries it (spec §2.6): each scalar it reads may come as written (printable ASCII but `%`) or as the
    /// percent-escapes of its UTF-8 bytes, hex digits in either case. For comparing it with rules that read the
    /// encoded text. Two corners are read loosely: a `%` is also read as itself where it starts an escape, and
    /// escapes that decode to bytes that are not UTF-8 (which make the matcher keep the whole text as written)
    /// are read as if they did; examples are checked with the matcher, so neither shows as a false example.
    ///
    /// Each state and edge it adds is charged to `budget` before it is made.
    func readingEncoded(budget: inout ComparisonBudget) throws(ComparisonBudget.Exhausted) -> PartAutomaton {
        // This automaton's states again, each closure as its ε-edges.
        let reached = closures.reduce(0) { $0 + $1.count }
        try budget.charge(
            states: stateCount, edges: reached,
            bytes: stateCount * Self.stateBytes(edges: 1, epsilons: 0) + ComparisonBudget.bytes(reached, of: Int.self),
            steps: reached)
        var edges: [[Edge]] = Array(repeating: [], count: stateCount)
        var epsilons = closures.enumerated().map { state, reached in reached.filter { $0 != state } }
        var accepting = self.accepting
        func newState() throws(ComparisonBudget.Exhausted) -> Int {
            try budget.charge(states: 1, edges: 1, bytes: Self.stateBytes(edges: 1, epsilons: 0), steps: 1)
            edges.append([])
            epsilons.append([])
            accepting.append(false)
            return edges.count - 1
        }
        let hex = ScalarSet(Array("0123456789abcdefABCDEF".unicodeScalars.map(\.value)))
        func digits(_ text: String) -> ScalarSet { ScalarSet(text.unicodeScalars.map(\.value)) }
        /// `%`, then a first digit in `high`, then any second digit, from `state`; returns the state after.
        func escape(from state: Int, high: ScalarSet, to target: Int? = nil) throws(ComparisonBudget.Exhausted) -> Int {
            let percent = try newState()
            let middle = try newState()
            var end = target ?? 0
            if target == nil { end = try newState() }
            edges[state].append(Edge(label: .scalar(0x25), target: percent))
            edges[percent].append(Edge(label: .set(high), target: middle))
            edges[middle].append(Edge(label: .set(hex), target: end))
            return end
        }
        /// The escapes of exactly `byte`.
        func escape(from state: Int, byte: UInt8, to target: Int? = nil) throws(ComparisonBudget.Exhausted) -> Int {
            let (high, low) = PercentEncoding.hexDigits(of: byte)
            let percent = try newState()
            let middle = try newState()
            var end = target ?? 0
            if target == nil { end = try newState() }
            edges[state].append(Edge(label: .scalar(0x25), target: percent))
            edges[percent].append(Edge(label: .set(digits(String(high) + String(high).lowercased())), target: middle))
            edges[middle].append(Edge(label: .set(digits(String(low) + String(low).lowercased())), target: end))
            return end
        }
        for state in 0..<stateCount {
            for edge in self.edges[state] {
                let target = edge.target
                var decoded: [UInt32]
                switch edge.label {
                case .scalar(let value): decoded = [value]
                case .set(let set): decoded = set.members
                case .anyBut, .any:
                    // Any scalar: as written (a `%` that starts no escape stays a `%`), or escaped (one to four
                    // UTF-8 bytes).
                    edges[state].append(Edge(label: .any, target: target))
                    _ = try escape(from: state, high: digits("01234567"), to: target)
                    let continuation = digits("89abAB")
                    for (lead, count) in [("cdCD", 1), ("eE", 2), ("fF", 3)] {
                        var at = try escape(from: state, high: digits(lead))
                        for index in 0..<count {
                            at = try escape(from: at, high: continuation, to: index == count - 1 ? target : nil)
                        }
                    }
                    continue
                }
                try budget.charge(steps: decoded.count)
                if folds { decoded += decoded.flatMap(CaseFolding.preimage(of:)) }
                for value in Set(decoded) {
                    if value > 0x20, value < 0x7F {
                        try budget.charge(edges: 1, bytes: MemoryLayout<Edge>.stride, steps: 1)
                        edges[state].append(Edge(label: .scalar(value), target: target))
                    }
                    guard let scalar = Unicode.Scalar(value) else { continue }
                    let bytes = Array(String(scalar).utf8)
                    var at = state
                    for (index, byte) in bytes.enumerated() {
                        at = try escape(from: at, byte: byte, to: index == bytes.count - 1 ? target : nil)
                    }
                }
            }
        }
        return try PartAutomaton(
            edges: edges, epsilons: epsilons, accepting: accepting, start: start, folds: false, budget: &budget)
    }

    /// The scalars this automaton tells apart: every literal it reads, with (when it folds) every scalar that
    /// folds to one. All other scalars behave alike, so one stands for them all.
    var distinguishedScalars: Set<UInt32> {
        var result: Set<UInt32> = []
        for state in edges {
            for edge in state {
                switch edge.label {
                case .scalar(let value), .anyBut(let value): result.insert(value)
                case .set(let set): result.formUnion(set.members)
                case .any: break
                }
            }
        }
        guard folds else { return result }
        return result.union(result.flatMap(CaseFolding.preimage(of:)))
    }
}
