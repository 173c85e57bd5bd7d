/// The URLs whose answer differs between two versions of a platform's rules, found exactly from the patterns
/// (never by sampling URLs), grouped by the pair of rules that decides them before and after.
///
/// The space of URLs is split one part at a time (path, fragment, whole query, then each query item): walking
/// the product of every live rule's automaton for that part over an alphabet in which all other scalars behave
/// alike yields each combination of rules a text of that part can satisfy, with the shortest texts that do.
/// Each combination narrows the rules still alive for the next part; at the end, the first live rule of each
/// version decides (spec §2.2, §7.1). Branches in which no answer can differ (one answer on both sides, or the
/// same live rules in the same order) are cut early, so an unchanged file costs one walk per part.
///
/// Everything it builds and every step it takes is charged to a ``ComparisonBudget`` first; when the budget runs
/// out the comparison stops there, keeping the classes found so far (each one real).
struct SemanticDiff {
    /// One class of URLs: those decided by `oldRule` before and `newRule` after (`nil`: no rule matched).
    struct Found {
        var oldRule: Int?
        var newRule: Int?
        var from: LinkAnswer
        var to: LinkAnswer
        /// Up to three URLs of the class: each part's text (one for path, query and fragment; an item's values,
        /// none when absent).
        var examples: [[URLPart: [[UInt32]]]] = []
    }

    let old: DecisionList
    let new: DecisionList
    /// What the comparison may still build and do; it holds what it used when ``run()`` returns.
    private(set) var budget: ComparisonBudget
    /// Whether the search stopped early (its budget ran out, or a query item's combinations passed their cap): the
    /// classes found are then not all there are.
    private(set) var incomplete = false
    /// The limit the budget reached, if it did.
    var exhausted: ComparisonBudget.Exhausted? { budget.exhausted }
    /// Parts on which rules disagree about `percentEncoded`: compared as the URL carries the text, the decoded
    /// rules reading it through ``PartAutomaton/readingEncoded()``, which leaves out malformed escapes.
    private var mixedParts: [URLPart] = []

    /// Whether some rules read the whole query and others (or the same) query items: the two are compared as
    /// independent conditions, though both read the one query.
    var readsQueryBothWays: Bool {
        parts.contains(.query) && parts.contains { if case .item = $0 { true } else { false } }
    }

    private var automata: [PartAutomaton] = []
    private var automatonIDs: [PartAutomaton: Int] = [:]
    /// Per rule (old ones first, then new ones), the automata each part must accept.
    private var conditions: [[URLPart: [Int]]] = []
    private var parts: [URLPart] = []
    /// Item parts whose name some case-insensitive rule reads in every spelling: there an absent item is a case of
    /// its own (the rule reads the items of all spellings together, spec §2.4, §2.5).
    private(set) var spelledParts: Set<URLPart> = []
    /// Per rule, for each folded item name it reads in every spelling, its automata there (checked on `""` when
    /// no spelling is present).
    private var spelledConditions: [[String: [Int]]] = []
    private(set) var spaces: [URLPart: PartSpace] = [:]
    private var visited: Set<Visit> = []
    private var found: [ClassKey: Found] = [:]
    private var order: [ClassKey] = []

    private struct ClassKey: Hashable {
        var old: Int?
        var new: Int?
    }

    private struct Visit: Hashable {
        var part: Int
        var alive: [Bool]
    }

    /// A branch of the split still to take: the part it splits next, the rules still alive, the texts chosen for
    /// the parts before.
    private struct Branch {
        var partIndex: Int
        var alive: [Bool]
        var chosen: [URLPart: [[[UInt32]]]]
    }

    init(old: DecisionList, new: DecisionList, budget: ComparisonBudget = ComparisonBudget()) {
        self.old = old
        self.new = new
        self.budget = budget
    }

    /// Every class, in the order found (path by path, shortest first); those found before the budget ran out when
    /// it did (``incomplete``).
    mutating func run() -> [Found] {
        do {
            try prepare()
            let all = Array(repeating: true, count: old.rules.count + new.rules.count)
            // Depth first, part by part, with a stack of its own rather than the thread's: a file with thousands
            // of query item names makes as many levels.
            var stack = [Branch(partIndex: 0, alive: all, chosen: [:])]
            while !incomplete, let branch = stack.popLast() {
                stack += try split(branch).reversed()
            }
        } catch {
            incomplete = true
        }
        return order.compactMap { found[$0] }
    }

    // MARK: Setting up

    private var isApple: Bool { old.itemReading == .everyInstance }

    private mutating func intern(_ automaton: PartAutomaton) throws(ComparisonBudget.Exhausted) -> Int {
        // Hashing reads the whole automaton.
        try budget.charge(bytes: 2 * ComparisonBudget.arrayHeader, steps: automaton.stateCount)
        if let id = automatonIDs[automaton] { return id }
        automata.append(automaton)
        automatonIDs[automaton] = automata.count - 1
        return automata.count - 1
    }

    private mutating func prepare() throws(ComparisonBudget.Exhausted) {
        let rules = old.rules + new.rules
        // Item names: a case-insensitive Apple rule reads every spelling of its name (spec §2.5), so each
        // spelling a rule writes is a part of its own, and one more spelling nobody writes stands for the rest.
        let folding = old.foldsItemNames
        var written: Set<String> = []
        var foldedClasses: Set<String> = []
        for rule in rules {
            for case .item(let name) in rule.conditions.keys {
                written.insert(name)
                if folding && !rule.caseSensitive { foldedClasses.insert(CaseFolding.fold(name)) }
            }
        }
        var itemNames = written
        for folded in foldedClasses {
            // Trying a spelling costs its length; at most one more is tried than are written.
            try budget.charge(
                bytes: 4 * folded.unicodeScalars.count,
                steps: written.count + (written.count + 1) * folded.unicodeScalars.count)
            let spelled = written.filter { CaseFolding.fold($0) == folded }
            if let other = Self.unwrittenSpelling(of: folded, avoiding: spelled) { itemNames.insert(other) }
        }
        for rule in rules {
            var mine: [URLPart: [Int]] = [:]
            var spelled: [String: [Int]] = [:]
            try budget.charge(bytes: ComparisonBudget.arrayHeader * (2 + rule.conditions.count))
            for (part, automaton) in rule.conditions {
                let id = try intern(automaton)
                guard case .item(let name) = part, folding, !rule.caseSensitive else {
                    mine[part, default: []].append(id)
                    continue
                }
                // The rule reads every spelling written: an entry for each.
                try budget.charge(
                    bytes: ComparisonBudget.arrayHeader * itemNames.count, steps: itemNames.count * (name.count + 1))
                let folded = CaseFolding.fold(name)
                spelled[folded, default: []].append(id)
                for other in itemNames where CaseFolding.fold(other) == folded {
                    mine[.item(other), default: []].append(id)
                    spelledParts.insert(.item(other))
                }
            }
            conditions.append(mine)
            spelledConditions.append(spelled)
        }
        var used = Set(conditions.flatMap(\.keys))
        // Where rules disagree about percentEncoded, the decoded ones read the encoded text too (spec §2.6).
        if isApple {
            for part in [URLPart.path, .query, .fragment] where used.contains(part) {
                let settings = Set(
                    rules.indices.filter { conditions[$0][part] != nil }.map { rules[$0].percentEncoded })
                guard settings.count > 1 else { continue }
                mixedParts.append(part)
                for index in rules.indices where !rules[index].percentEncoded {
                    guard let ids = conditions[index][part] else { continue }
                    var encoded: [Int] = []
                    for id in ids { encoded.append(try intern(automata[id].readingEncoded(budget: &budget))) }
                    conditions[index][part] = encoded
                }
            }
            used = Set(conditions.flatMap(\.keys))
        }
        parts =
            [URLPart.path, .fragment, .query].filter(used.contains)
            + used.filter {
                if case .item = $0 { true } else { false }
            }.sorted()
        for part in parts {
            let readers = rules.indices.filter { conditions[$0][part] != nil }.map { rules[$0] }
            var encoded = false
            if isApple, part == .path || part == .query || part == .fragment {
                encoded = mixedParts.contains(part) || readers.allSatisfy(\.percentEncoded)
            }
            let shape: PartSpace.Shape = part != .path ? .free : isApple ? .trimmedPath : .rootedPath
            spaces[part] = PartSpace(shape: shape, encoded: encoded, part: part)
        }
    }

    /// A spelling of a query item name that folds to `folded` and is not in `spelled` (`iD` when `id` and `ID`
    /// are written), or `nil` when every spelling is.
    static func unwrittenSpelling(of folded: String, avoiding spelled: Set<String>) -> String? {
        let choices = folded.unicodeScalars.map { scalar in
            [scalar.value] + CaseFolding.preimage(of: scalar.value)
        }
        func unwritten(_ spelling: [UInt32]) -> String? {
            let text = String(String.UnicodeScalarView(spelling.compactMap(Unicode.Scalar.init)))
            return spelled.contains(text) ? nil : text
        }
        // Spellings in order, by changing the case of one scalar, then two: enough to miss any handful written.
        // Each is made only when those before it are all written, so a long name costs its length per spelling
        // written, not the square of its length.
        let first = choices.map { $0[0] }
        if let text = unwritten(first) { return text }
        for (index, options) in choices.enumerated() {
            for option in options.dropFirst() {
                var spelling = first
                spelling[index] = option
                if let text = unwritten(spelling) { return text }
                for (second, more) in choices.enumerated() where second > index {
                    for alternative in more.dropFirst() {
                        var twice = spelling
                        twice[second] = alternative
                        if let text = unwritten(twice) { return text }
                    }
                }
            }
        }
        return nil
    }

    // MARK: Splitting the space

    private func answer(_ index: Int) -> LinkAnswer {
        index < old.rules.count ? old.rules[index].answer : new.rules[index - old.rules.count].answer
    }

    /// Whether URLs in this branch can still be answered differently.
    private mutating func canDiffer(_ alive: [Bool], from partIndex: Int) throws(ComparisonBudget.Exhausted) -> Bool {
        try budget.charge(steps: alive.count)
        let count = old.rules.count
        var before: Set<LinkAnswer> = [.web]
        var after: Set<LinkAnswer> = [.web]
        var oldAlive: [Int] = []
        var newAlive: [Int] = []
        for index in alive.indices where alive[index] {
            if index < count {
                before.insert(answer(index))
                oldAlive.append(index)
            } else {
                after.insert(answer(index))
                newAlive.append(index)
            }
        }
        if before.count == 1 && before == after { return false }
        // The same rules in the same order on both sides (as far as the parts still to split go) answer alike.
        guard oldAlive.count == newAlive.count else { return true }
        try budget.charge(
            bytes: ComparisonBudget.bytes(parts.count - partIndex, of: URLPart.self),
            steps: oldAlive.count * (parts.count - partIndex + 1))
        let remaining = Set(parts[partIndex...])
        for (a, b) in zip(oldAlive, newAlive) {
            guard answer(a) == answer(b),
                conditions[a].filter({ remaining.contains($0.key) })
                    == conditions[b].filter({
                        remaining.contains($0.key)
                    })
            else { return true }
        }
        return false
    }

    /// The branches `branch` splits into by the texts of its part, in the order to take them; none at the end of
    /// the parts, where the branch is decided (``decide``), or where no answer can differ.
    private mutating func split(_ branch: Branch) throws(ComparisonBudget.Exhausted) -> [Branch] {
        let (partIndex, alive, chosen) = (branch.partIndex, branch.alive, branch.chosen)
        guard partIndex < parts.count else {
            try decide(alive, chosen: chosen)
            return []
        }
        guard try canDiffer(alive, from: partIndex) else { return [] }
        try budget.charge(states: 1, bytes: ComparisonBudget.bytes(alive.count, of: Bool.self) + 16)
        guard visited.insert(Visit(part: partIndex, alive: alive)).inserted else { return [] }
        let part = parts[partIndex]
        let readers = alive.indices.filter { alive[$0] && conditions[$0][part] != nil }
        guard !readers.isEmpty else { return [Branch(partIndex: partIndex + 1, alive: alive, chosen: chosen)] }
        let ids = Array(Set(readers.flatMap { conditions[$0][part]! })).sorted()
        let outcomes: [Outcome]
        if case .item = part {
            outcomes = try itemOutcomes(part, ids: ids)
        } else {
            outcomes = try explore(part, ids: ids)
        }
        var branches: [Branch] = []
        for outcome in outcomes {
            // Each branch holds its own rules alive and its own texts chosen (the texts themselves are shared).
            try budget.charge(
                states: 1,
                bytes: ComparisonBudget.bytes(alive.count, of: Bool.self) + ComparisonBudget.arrayHeader
                    * (chosen.count + 2),
                steps: readers.count + chosen.count)
            var next = alive
            for reader in readers where !conditions[reader][part]!.allSatisfy(outcome.accepted.contains) {
                // No item of this spelling: a rule reading every spelling decides at the end (``decide``).
                if outcome.absent && !spelledConditions[reader].isEmpty {
                    if case .item(let name) = part, spelledConditions[reader][CaseFolding.fold(name)] != nil {
                        continue
                    }
                }
                next[reader] = false
            }
            var more = chosen
            more[part] = outcome.witnesses
            branches.append(Branch(partIndex: partIndex + 1, alive: next, chosen: more))
        }
        return branches
    }

    private mutating func decide(_ alive: [Bool], chosen: [URLPart: [[[UInt32]]]]) throws(ComparisonBudget.Exhausted) {
        try budget.charge(steps: alive.count + chosen.count)
        var alive = alive
        // A rule reading every spelling of an item that no spelling carries reads it as `""` (spec §2.4).
        for index in alive.indices where alive[index] && !spelledConditions[index].isEmpty {
            for (folded, ids) in spelledConditions[index] {
                let present = chosen.contains { part, witnesses in
                    guard case .item(let name) = part, CaseFolding.fold(name) == folded else { return false }
                    return !(witnesses.first?.isEmpty ?? true)
                }
                if !present && !ids.allSatisfy({ automata[$0].acceptsEmpty }) { alive[index] = false }
            }
        }
        let count = old.rules.count
        let oldRule = alive[..<count].firstIndex(of: true)
        let newRule = alive[count...].firstIndex(of: true).map { $0 - count }
        let from = oldRule.map { old.rules[$0].answer } ?? .web
        let to = newRule.map { new.rules[$0].answer } ?? .web
        guard from != to else { return }
        let key = ClassKey(old: oldRule, new: newRule)
        // A class and up to three examples, each a text per part (shared with the walk that found them).
        try budget.charge(states: 1, bytes: 256 + 3 * ComparisonBudget.arrayHeader * (chosen.count + 1))
        if found[key] == nil {
            found[key] = Found(oldRule: oldRule, newRule: newRule, from: from, to: to)
            order.append(key)
        }
        let variants = chosen.values.map(\.count).max() ?? 1
        for variant in 0..<variants where found[key]!.examples.count < 3 {
            found[key]!.examples.append(chosen.mapValues { $0[min(variant, $0.count - 1)] })
        }
    }

    // MARK: Walking one part

    /// One combination of automata a text (or, for an item, a set of values) satisfies, with up to three
    /// witnesses (each one text, or an item's values).
    struct Outcome {
        var accepted: Set<Int>
        var witnesses: [[[UInt32]]]
        /// No item of this name at all (only told apart where a rule reads every spelling of it).
        var absent = false
    }

    /// Every combination of the automata `ids` that a text of `part` satisfies, by a breadth-first walk of
    /// their product (shortest texts first). The product's edge lists, each state walked with its bit set and
    /// text, and each step are charged before they are made.
    private mutating func explore(_ part: URLPart, ids: [Int]) throws(ComparisonBudget.Exhausted) -> [Outcome] {
        let held = budget.bytes
        let space = spaces[part]!
        let members = ids.map { automata[$0] }
        var offsets: [Int] = []
        var total = 0
        for automaton in members {
            offsets.append(total)
            total += automaton.stateCount
        }
        // The product's states in one numbering, each with its edges pointing at the closures they reach: a step
        // then visits only the live states (most automata die after a few scalars).
        let words = (total + 63) / 64
        typealias ProductEdge = (label: PartAutomaton.Label, reached: [Int])
        try budget.charge(
            bytes: ComparisonBudget.bytes(total, of: [ProductEdge].self) + 3
                * ComparisonBudget.bytes(total, of: Int.self),
            steps: total)
        var edges: [[ProductEdge]] = []
        var folds: [Bool] = []
        var owners: [Int] = []
        var accepting: [Bool] = []
        edges.reserveCapacity(total)
        for (k, automaton) in members.enumerated() {
            for state in 0..<automaton.stateCount {
                // Every edge holds the closure of its target: charged before it is copied.
                let copies = automaton.edges[state].reduce(0) { $0 + automaton.closures[$1.target].count }
                let count = automaton.edges[state].count
                try budget.charge(
                    edges: copies,
                    bytes: ComparisonBudget.bytes(count, of: ProductEdge.self)
                        + count * ComparisonBudget.bytes(0, of: Int.self) + copies * MemoryLayout<Int>.stride,
                    steps: count + copies)
                edges.append(
                    automaton.edges[state].map { edge in
                        (edge.label, automaton.closures[edge.target].map { offsets[k] + $0 })
                    })
                folds.append(automaton.folds)
                owners.append(k)
                accepting.append(automaton.accepting[state])
            }
        }
        func insert(_ bits: inout [UInt64], _ state: Int) { bits[state >> 6] |= 1 << UInt64(state & 63) }
        func forEachLive(_ bits: [UInt64], _ body: (Int) -> Void) {
            for (index, word) in bits.enumerated() where word != 0 {
                var rest = word
                while rest != 0 {
                    body(index << 6 | rest.trailingZeroBitCount)
                    rest &= rest - 1
                }
            }
        }
        let nodeBytes = ComparisonBudget.bytes(words, of: UInt64.self)
        try budget.charge(bytes: nodeBytes)
        var start = [UInt64](repeating: 0, count: words)
        for (k, automaton) in members.enumerated() {
            for state in automaton.closures[automaton.start] { insert(&start, offsets[k] + state) }
        }
        // The alphabet: every scalar some automaton tells apart, the slash the path's shape watches, and one
        // scalar none of them names, standing for all the others.
        let labels = members.reduce(0) { total, automaton in
            automaton.edges.reduce(total) { total, edges in
                edges.reduce(total) { total, edge in
                    if case .set(let set) = edge.label { return total + set.members.count }
                    return total + 1
                }
            }
        }
        try budget.charge(bytes: 3 * ComparisonBudget.bytes(labels, of: UInt32.self), steps: 2 * labels)
        var distinguished = members.reduce(into: Set<UInt32>()) { $0.formUnion($1.distinguishedScalars) }
        if space.shape != .free { distinguished.insert(0x2F) }
        var alphabet = distinguished.filter(space.allows).sorted()
        if let other = Self.otherScalar(avoiding: distinguished, in: space) { alphabet.append(other) }
        let folded = alphabet.map(CaseFolding.fold)

        struct Node: Hashable {
            var bits: [UInt64]
            /// 0: nothing read yet; 1: the last scalar read is not `/`; 2: it is.
            var shape: UInt8
        }
        func step(_ bits: [UInt64], _ symbol: Int) -> [UInt64] {
            var next = [UInt64](repeating: 0, count: words)
            forEachLive(bits) { state in
                let input = folds[state] ? folded[symbol] : alphabet[symbol]
                for edge in edges[state] where edge.label.reads(input) {
                    for reached in edge.reached { insert(&next, reached) }
                }
            }
            return next
        }
        func ends(_ shape: UInt8) -> Bool {
            switch space.shape {
            case .free: true
            case .trimmedPath: shape != 2
            case .rootedPath: shape != 0
            }
        }
        var outcomes: [Set<Int>: [[[UInt32]]]] = [:]
        var outcomeOrder: [Set<Int>] = []
        var seen: Set<Node> = []
        var queue: [(Node, [UInt32])] = [(Node(bits: start, shape: 0), [])]
        var head = 0
        while head < queue.count {
            let (node, text) = queue[head]
            head += 1
            guard !seen.contains(node) else { continue }
            // The seen set's entry (its bit set is the queue's).
            try budget.charge(bytes: 32)
            seen.insert(node)
            var live = 0
            forEachLive(node.bits) { _ in live += 1 }
            try budget.charge(steps: alphabet.count * (live + words + 1))
            if ends(node.shape) {
                var accepted: Set<Int> = []
                forEachLive(node.bits) { state in
                    if accepting[state] { accepted.insert(ids[owners[state]]) }
                }
                if outcomes[accepted] == nil {
                    try budget.charge(states: 1, bytes: 2 * ComparisonBudget.bytes(accepted.count, of: Int.self) + 64)
                    outcomeOrder.append(accepted)
                }
                if outcomes[accepted, default: []].count < 3 {
                    try budget.charge(bytes: ComparisonBudget.arrayHeader)
                    outcomes[accepted, default: []].append([text])
                }
            }
            for (symbol, scalar) in alphabet.enumerated() {
                let slash = scalar == 0x2F
                let shape: UInt8
                switch space.shape {
                case .free: shape = 0
                case .trimmedPath:
                    if node.shape == 0 && slash { continue }
                    shape = slash ? 2 : 1
                case .rootedPath:
                    if node.shape == 0 && !slash { continue }
                    shape = 1
                }
                let next = Node(bits: step(node.bits, symbol), shape: shape)
                if !seen.contains(next) {
                    // A state of the product waiting to be walked: its bit set and its text.
                    try budget.charge(
                        states: 1, bytes: nodeBytes + ComparisonBudget.bytes(text.count + 1, of: UInt32.self) + 16)
                    queue.append((next, text + [scalar]))
                }
            }
        }
        // The product, its walk and its queue are freed now: only the outcomes stay.
        let kept = outcomes.values.reduce(64 * outcomes.count) { total, witnesses in
            witnesses.reduce(total) { $0 + ComparisonBudget.bytes($1[0].count, of: UInt32.self) }
        }
        budget.release(bytes: budget.bytes - held - kept)
        return outcomeOrder.map { Outcome(accepted: $0, witnesses: outcomes[$0]!) }
    }

    /// A scalar no automaton names that `space` allows, preferring plain letters (`x`) so examples read well.
    static func otherScalar(avoiding named: Set<UInt32>, in space: PartSpace) -> UInt32? {
        let readable = "xzqjkvwy0123456789abcdefghilmnoprstu-_~".unicodeScalars.map(\.value)
        if let scalar = readable.first(where: { !named.contains($0) && space.allows($0) }) { return scalar }
        if let scalar = (0x21...0x7E).first(where: { !named.contains(UInt32($0)) && space.allows(UInt32($0)) }) {
            return UInt32(scalar)
        }
        guard !space.encoded else { return nil }
        return (0xE000...0xF8FF).lazy.map(UInt32.init).first { !named.contains($0) }
    }

    /// What the values of one query item can make the automata `ids` satisfy together. Apple needs every
    /// instance to match (an absent item reads as `""`), so sets of values satisfy the intersections of what
    /// single values do; Android needs one instance to match (an absent item matches nothing), so the unions.
    private mutating func itemOutcomes(_ part: URLPart, ids: [Int]) throws(ComparisonBudget.Exhausted) -> [Outcome] {
        let singles = try explore(part, ids: ids)
        var family: [Set<Int>: [[UInt32]]] = [:]
        var familyOrder: [Set<Int>] = []
        func add(_ accepted: Set<Int>, _ values: [[UInt32]]) throws(ComparisonBudget.Exhausted) {
            guard family[accepted] == nil else { return }
            // The set and its values' list (the values themselves are the walk's texts, shared).
            try budget.charge(
                states: 1,
                bytes: 2 * ComparisonBudget.bytes(accepted.count, of: Int.self)
                    + ComparisonBudget.bytes(values.count, of: [UInt32].self))
            family[accepted] = values
            familyOrder.append(accepted)
        }
        let every = old.itemReading == .everyInstance
        if !every { try add([], []) }
        for single in singles { try add(single.accepted, single.witnesses[0]) }
        var index = 0
        while index < familyOrder.count {
            if familyOrder.count >= 256 {
                incomplete = true
                break
            }
            let first = familyOrder[index]
            for second in familyOrder[..<index] {
                try budget.charge(
                    steps: first.count + second.count + family[first]!.count + family[second]!.count)
                let combined = every ? first.intersection(second) : first.union(second)
                try add(combined, family[first]! + family[second]!)
            }
            index += 1
        }
        var outcomes = familyOrder.map { accepted in
            // A single value's other witnesses give other examples.
            let alternatives = singles.first { $0.accepted == accepted }?.witnesses ?? [family[accepted]!]
            return Outcome(accepted: accepted, witnesses: alternatives)
        }
        if every && spelledParts.contains(part) {
            // Absent: what only "" satisfies, for the rules reading this spelling alone (`""` counts, spec §2.4).
            let empty = Set(ids.filter { automata[$0].acceptsEmpty })
            outcomes.append(Outcome(accepted: empty, witnesses: [[]], absent: true))
        }
        return outcomes
    }
}
