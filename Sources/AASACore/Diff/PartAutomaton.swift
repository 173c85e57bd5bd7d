/// One pattern of a rule as an explicit automaton over Unicode scalars: what the semantic diff walks to reason
/// about every URL at once instead of sampling some.
///
/// Built from the matcher's own compiled ``WildcardPattern`` (Apple, spec §2.1: the slash, variable and case rules
/// are already in it) or from an ``AndroidPattern`` (spec §7.1: its `*` stops at the first occurrence of the next
/// character), so the diff and the matcher cannot disagree on what a pattern means.
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

    private init(edges: [[Edge]], epsilons: [[Int]], accepting: [Bool], start: Int, folds: Bool) {
        self.edges = edges
        self.accepting = accepting
        self.start = start
        self.folds = folds
        closures = epsilons.indices.map { state in
            var seen: Set<Int> = [state]
            var stack = [state]
            while let top = stack.popLast() {
                for next in epsilons[top] where seen.insert(next).inserted { stack.append(next) }
            }
            return seen.sorted()
        }
    }

    /// The automaton of an Apple pattern as the matcher compiled it; `folds` when the rule is case-insensitive.
    init(_ pattern: WildcardPattern, folds: Bool) {
        switch pattern.shape {
        case .exact(let literals):
            self.init(chain: literals, loopAtEnd: false, alsoAccepting: nil, folds: folds)
        case .prefix(let literals, let bare):
            // `x/*` also matches the bare prefix, which is a prefix of the literals: accept where it ends.
            self.init(chain: literals, loopAtEnd: true, alsoAccepting: bare.map(\.count), folds: folds)
        case .automaton:
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
            self.init(
                edges: edges, epsilons: epsilons, accepting: accepting, start: Int(pattern.start), folds: folds)
        }
    }

    private init(chain literals: [UInt32], loopAtEnd: Bool, alsoAccepting extra: Int?, folds: Bool) {
        var edges: [[Edge]] = literals.indices.map { [Edge(label: .scalar(literals[$0]), target: $0 + 1)] }
        edges.append(loopAtEnd ? [Edge(label: .any, target: literals.count)] : [])
        var accepting = Array(repeating: false, count: literals.count + 1)
        accepting[literals.count] = true
        if let extra { accepting[extra] = true }
        self.init(
            edges: edges, epsilons: Array(repeating: [], count: edges.count), accepting: accepting, start: 0,
            folds: folds)
    }

    /// The automaton of an Android pattern (spec §7.1): `?` one scalar, `?*` one then as `*`, and `*` any run
    /// of scalars up to the first occurrence of the literal after it (the rest of the text at the end, nothing
    /// before another wildcard).
    init(android pattern: AndroidPattern) {
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
        self.init(edges: edges, epsilons: epsilons, accepting: accepting, start: 0, folds: false)
    }

    /// This automaton, which reads decoded text (Apple's `percentEncoded: false`), made to read the text as the
    /// URL carries it (spec §2.6): each scalar it reads may come as written (printable ASCII but `%`) or as the
    /// percent-escapes of its UTF-8 bytes, hex digits in either case. For comparing it with rules that read the
    /// encoded text. Two corners are read loosely: a `%` is also read as itself where it starts an escape, and
    /// escapes that decode to bytes that are not UTF-8 (which make the matcher keep the whole text as written)
    /// are read as if they did; examples are checked with the matcher, so neither shows as a false example.
    func readingEncoded() -> PartAutomaton {
        var edges: [[Edge]] = Array(repeating: [], count: stateCount)
        var epsilons = closures.enumerated().map { state, reached in reached.filter { $0 != state } }
        var accepting = self.accepting
        func newState() -> Int {
            edges.append([])
            epsilons.append([])
            accepting.append(false)
            return edges.count - 1
        }
        let hex = ScalarSet(Array("0123456789abcdefABCDEF".unicodeScalars.map(\.value)))
        func digits(_ text: String) -> ScalarSet { ScalarSet(text.unicodeScalars.map(\.value)) }
        /// `%`, then a first digit in `high`, then any second digit, from `state`; returns the state after.
        func escape(from state: Int, high: ScalarSet, to target: Int? = nil) -> Int {
            let percent = newState()
            let middle = newState()
            let end = target ?? newState()
            edges[state].append(Edge(label: .scalar(0x25), target: percent))
            edges[percent].append(Edge(label: .set(high), target: middle))
            edges[middle].append(Edge(label: .set(hex), target: end))
            return end
        }
        /// The escapes of exactly `byte`.
        func escape(from state: Int, byte: UInt8, to target: Int? = nil) -> Int {
            let (high, low) = PercentEncoding.hexDigits(of: byte)
            let percent = newState()
            let middle = newState()
            let end = target ?? newState()
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
                    _ = escape(from: state, high: digits("01234567"), to: target)
                    let continuation = digits("89abAB")
                    for (lead, count) in [("cdCD", 1), ("eE", 2), ("fF", 3)] {
                        var at = escape(from: state, high: digits(lead))
                        for index in 0..<count {
                            at = escape(from: at, high: continuation, to: index == count - 1 ? target : nil)
                        }
                    }
                    continue
                }
                if folds { decoded += decoded.flatMap(CaseFolding.preimage(of:)) }
                for value in Set(decoded) {
                    if value > 0x20, value < 0x7F {
                        edges[state].append(Edge(label: .scalar(value), target: target))
                    }
                    guard let scalar = Unicode.Scalar(value) else { continue }
                    let bytes = Array(String(scalar).utf8)
                    var at = state
                    for (index, byte) in bytes.enumerated() {
                        at = escape(from: at, byte: byte, to: index == bytes.count - 1 ? target : nil)
                    }
                }
            }
        }
        return PartAutomaton(edges: edges, epsilons: epsilons, accepting: accepting, start: start, folds: false)
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
