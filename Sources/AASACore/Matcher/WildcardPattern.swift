/// One compiled Apple pattern (spec §2.1): `*`, `?`, literals and `$(variable)` alternatives.
///
/// Most real patterns are literals or a literal prefix followed by `*`, so those get a direct comparison.
/// Everything else runs as a Thompson NFA: the simulation keeps the *set* of live states and advances all of
/// them by one character at a time, visiting each state at most once per character. Cost is therefore
/// O(text length × pattern states) whatever the pattern, so `*a*a*a*…b` against a long run of `a`s cannot
/// explode the way a backtracking matcher does.
///
/// Text is a sequence of Unicode scalar values (spec §2.1: matching counts characters, not bytes; we count
/// code points, so a precomposed `é` is one character and a decomposed `e`+`◌́` is two). Callers pass text
/// already case-folded when the pattern is case-insensitive, and with end slashes stripped for paths.
struct WildcardPattern: Sendable {
    /// How the pattern is matched.
    enum Shape: Sendable, Hashable {
        /// Only literals: the text must equal them.
        case exact([UInt32])
        /// Literals then only `*`s: the text must start with `prefix`, or equal `bare` (spec §2.1, `/x/*`
        /// also matches `/x`).
        case prefix([UInt32], bare: [UInt32]?)
        /// Anything else: run the NFA.
        case automaton
    }

    /// Instruction kinds of the NFA program.
    enum Kind: UInt8, Sendable {
        /// Consume one scalar equal to `operand`, go to `next`.
        case scalar
        /// Consume any one scalar (`?`, and the loop of `*`), go to `next`.
        case any
        /// Consume one scalar in `classes[operand]`, go to `next`.
        case scalarSet
        /// Without consuming, go to each of `forkTargets[operand ..< operand + next]`.
        case fork
        /// Accept.
        case accept
    }

    /// The pattern as written.
    let source: String
    /// The fast path, if any.
    let shape: Shape
    /// NFA program (struct of arrays for speed); empty unless `shape == .automaton`.
    let kinds: [Kind]
    let operands: [UInt32]
    let nexts: [Int32]
    let forkTargets: [Int32]
    let classes: [ScalarSet]
    let start: Int32

    /// Whether `text` (prepared as described on the type) matches the whole pattern.
    func matches(_ text: [UInt32]) -> Bool {
        switch shape {
        case .exact(let literal):
            return text == literal
        case .prefix(let prefix, let bare):
            if text.count >= prefix.count && text.starts(with: prefix) { return true }
            return bare.map { text == $0 } ?? false
        case .automaton:
            return simulate(text)
        }
    }

    private func simulate(_ text: [UInt32]) -> Bool {
        var marks = [Int32](repeating: -1, count: kinds.count)
        var current: [Int32] = []
        var following: [Int32] = []
        var stack: [Int32] = []
        current.reserveCapacity(kinds.count)
        following.reserveCapacity(kinds.count)
        addClosure(start, generation: 0, into: &current, marks: &marks, stack: &stack)
        var generation: Int32 = 0
        for scalar in text {
            if current.isEmpty { return false }
            generation += 1
            following.removeAll(keepingCapacity: true)
            for state in current {
                let index = Int(state)
                let advances: Bool
                switch kinds[index] {
                case .scalar: advances = operands[index] == scalar
                case .any: advances = true
                case .scalarSet: advances = classes[Int(operands[index])].contains(scalar)
                case .fork, .accept: advances = false
                }
                if advances {
                    addClosure(nexts[index], generation: generation, into: &following, marks: &marks, stack: &stack)
                }
            }
            swap(&current, &following)
        }
        return current.contains { kinds[Int($0)] == .accept }
    }

    /// Adds `state` and everything reachable from it without consuming input (iteratively: long runs of
    /// `*` would otherwise recurse deeply).
    private func addClosure(
        _ state: Int32, generation: Int32, into list: inout [Int32], marks: inout [Int32], stack: inout [Int32]
    ) {
        stack.append(state)
        while let top = stack.popLast() {
            let index = Int(top)
            if marks[index] == generation { continue }
            marks[index] = generation
            if kinds[index] == .fork {
                let first = Int(operands[index])
                // Push in reverse so targets are explored in written order (order does not affect the result).
                for target in forkTargets[first..<(first + Int(nexts[index]))].reversed() {
                    stack.append(target)
                }
            } else {
                list.append(top)
            }
        }
    }
}
