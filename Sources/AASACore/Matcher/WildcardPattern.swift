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
///
/// A class with constant properties so rules share one compiled pattern without copying its arrays.
final class WildcardPattern: Sendable {
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
    /// Literals every match starts with (those before the first wildcard or variable): a cheap pre-check
    /// that rejects most texts before the NFA runs.
    let requiredPrefix: [UInt32]

    init(
        source: String, shape: Shape, kinds: [Kind], operands: [UInt32], nexts: [Int32], forkTargets: [Int32],
        classes: [ScalarSet], start: Int32, requiredPrefix: [UInt32]
    ) {
        self.source = source
        self.shape = shape
        self.kinds = kinds
        self.operands = operands
        self.nexts = nexts
        self.forkTargets = forkTargets
        self.classes = classes
        self.start = start
        self.requiredPrefix = requiredPrefix
    }

    /// Whether `text` (prepared as described on the type) matches the whole pattern.
    func matches(_ text: [UInt32]) -> Bool {
        switch shape {
        case .exact(let literal):
            return text == literal
        case .prefix(let prefix, let bare):
            if text.count >= prefix.count && text.starts(with: prefix) { return true }
            return bare.map { text == $0 } ?? false
        case .automaton:
            guard text.count >= requiredPrefix.count, text.starts(with: requiredPrefix) else { return false }
            return simulate(text)
        }
    }

    private func simulate(_ text: [UInt32]) -> Bool {
        let stateCount = kinds.count
        // Scratch space on the stack: this runs once per rule per URL, so heap allocations would dominate.
        // Within one closure every state is expanded at most once, so the stack never holds more than the
        // start state plus every fork target.
        let stackCapacity = forkTargets.count + 1
        return withUnsafeTemporaryAllocation(of: Int32.self, capacity: stateCount * 3 + stackCapacity) { scratch in
            let marks = UnsafeMutableBufferPointer(rebasing: scratch[0..<stateCount])
            marks.initialize(repeating: -1)
            var current = StateList(UnsafeMutableBufferPointer(rebasing: scratch[stateCount..<(2 * stateCount)]))
            var following = StateList(
                UnsafeMutableBufferPointer(rebasing: scratch[(2 * stateCount)..<(3 * stateCount)]))
            var stack = StateList(UnsafeMutableBufferPointer(rebasing: scratch[(3 * stateCount)...]))
            addClosure(start, generation: 0, into: &current, marks: marks, stack: &stack)
            var generation: Int32 = 0
            for scalar in text {
                if current.count == 0 { return false }
                generation += 1
                following.count = 0
                for position in 0..<current.count {
                    let state = current.storage[position]
                    let index = Int(state)
                    let advances: Bool
                    switch kinds[index] {
                    case .scalar: advances = operands[index] == scalar
                    case .any: advances = true
                    case .scalarSet: advances = classes[Int(operands[index])].contains(scalar)
                    case .fork, .accept: advances = false
                    }
                    if advances {
                        addClosure(nexts[index], generation: generation, into: &following, marks: marks, stack: &stack)
                    }
                }
                swap(&current, &following)
            }
            for position in 0..<current.count where kinds[Int(current.storage[position])] == .accept {
                return true
            }
            return false
        }
    }

    /// A list (or stack) of states in caller-provided storage. A state list gets each state at most once per
    /// step (`marks`), so `stateCount` slots always suffice.
    private struct StateList {
        let storage: UnsafeMutableBufferPointer<Int32>
        var count = 0

        init(_ storage: UnsafeMutableBufferPointer<Int32>) {
            self.storage = storage
        }

        mutating func append(_ state: Int32) {
            storage[count] = state
            count += 1
        }
    }

    /// Adds `state` and everything reachable from it without consuming input (iteratively: long runs of
    /// `*` would otherwise recurse deeply).
    private func addClosure(
        _ state: Int32, generation: Int32, into list: inout StateList, marks: UnsafeMutableBufferPointer<Int32>,
        stack: inout StateList
    ) {
        stack.append(state)
        while stack.count > 0 {
            stack.count -= 1
            let top = stack.storage[stack.count]
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
