/// The URLs whose answer differs between two versions of a platform's rules, found exactly from the patterns
/// (never by sampling URLs), grouped by the pair of rules that decides them before and after.
///
/// The space of URLs is split one part at a time (path, fragment, whole query, then each query item): walking
/// the product of every live rule's automaton for that part over an alphabet in which all other scalars behave
/// alike yields each combination of rules a text of that part can satisfy, with the shortest texts that do.
/// Each combination narrows the rules still alive for the next part; at the end, the first live rule of each
/// version decides (spec §2.2, §7.1). Branches in which no answer can differ (one answer on both sides, or the
/// same live rules in the same order) are cut early, so an unchanged file costs one walk per part.
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
    /// Elementary steps (a product state read over one symbol) the comparison may take before it stops.
    private(set) var budget: Int
    /// Whether the budget ran out: the classes found are then not all there are.
    private(set) var incomplete = false
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

    init(old: DecisionList, new: DecisionList, budget: Int = DomainDiff.defaultBudget) {
        self.old = old
        self.new = new
        self.budget = budget
    }

    /// Every class, in the order found (path by path, shortest first).
    mutating func run() -> [Found] {
        prepare()
        let all = Array(repeating: true, count: old.rules.count + new.rules.count)
        visit(0, alive: all, chosen: [:])
        return order.compactMap { found[$0] }
    }

    // MARK: Setting up

    private var isApple: Bool { old.itemReading == .everyInstance }

    private mutating func intern(_ automaton: PartAutomaton) -> Int {
        if let id = automatonIDs[automaton] { return id }
        automata.append(automaton)
        automatonIDs[automaton] = automata.count - 1
        return automata.count - 1
    }

    private mutating func prepare() {
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
            let spelled = written.filter { CaseFolding.fold($0) == folded }
            if let other = Self.unwrittenSpelling(of: folded, avoiding: spelled) { itemNames.insert(other) }
        }
        for rule in rules {
            var mine: [URLPart: [Int]] = [:]
            var spelled: [String: [Int]] = [:]
            for (part, automaton) in rule.conditions {
                let id = intern(automaton)
                guard case .item(let name) = part, folding, !rule.caseSensitive else {
                    mine[part, default: []].append(id)
                    continue
                }
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
                    conditions[index][part] = conditions[index][part]?.map { intern(automata[$0].readingEncoded()) }
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
        // Spellings in order, by changing the case of one scalar, then two: enough to miss any handful written.
        var candidates: [[UInt32]] = [choices.map { $0[0] }]
        for (index, options) in choices.enumerated() {
            for option in options.dropFirst() {
                var spelling = choices.map { $0[0] }
                spelling[index] = option
                candidates.append(spelling)
                for (second, more) in choices.enumerated() where second > index {
                    for alternative in more.dropFirst() {
                        var twice = spelling
                        twice[second] = alternative
                        candidates.append(twice)
                    }
                }
            }
        }
        for candidate in candidates {
            let text = String(String.UnicodeScalarView(candidate.compactMap(Unicode.Scalar.init)))
            if !spelled.contains(text) { return text }
        }
        return nil
    }

    // MARK: Splitting the space

    private func answer(_ index: Int) -> LinkAnswer {
        index < old.rules.count ? old.rules[index].answer : new.rules[index - old.rules.count].answer
    }

    /// Whether URLs in this branch can still be answered differently.
    private func canDiffer(_ alive: [Bool], from partIndex: Int) -> Bool {
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

    private mutating func visit(_ partIndex: Int, alive: [Bool], chosen: [URLPart: [[[UInt32]]]]) {
        if incomplete { return }
        guard partIndex < parts.count else { return decide(alive, chosen: chosen) }
        guard canDiffer(alive, from: partIndex), visited.insert(Visit(part: partIndex, alive: alive)).inserted
        else { return }
        let part = parts[partIndex]
        let readers = alive.indices.filter { alive[$0] && conditions[$0][part] != nil }
        guard !readers.isEmpty else { return visit(partIndex + 1, alive: alive, chosen: chosen) }
        let ids = Array(Set(readers.flatMap { conditions[$0][part]! })).sorted()
        let outcomes: [Outcome]
        if case .item = part {
            outcomes = itemOutcomes(part, ids: ids)
        } else {
            outcomes = explore(part, ids: ids)
        }
        for outcome in outcomes {
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
            visit(partIndex + 1, alive: next, chosen: more)
        }
    }

    private mutating func decide(_ alive: [Bool], chosen: [URLPart: [[[UInt32]]]]) {
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
    /// their product (shortest texts first).
    private mutating func explore(_ part: URLPart, ids: [Int]) -> [Outcome] {
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
        var edges: [[(label: PartAutomaton.Label, reached: [Int])]] = []
        var folds: [Bool] = []
        var owners: [Int] = []
        var accepting: [Bool] = []
        edges.reserveCapacity(total)
        for (k, automaton) in members.enumerated() {
            for state in 0..<automaton.stateCount {
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
        var start = [UInt64](repeating: 0, count: words)
        for (k, automaton) in members.enumerated() {
            for state in automaton.closures[automaton.start] { insert(&start, offsets[k] + state) }
        }
        // The alphabet: every scalar some automaton tells apart, the slash the path's shape watches, and one
        // scalar none of them names, standing for all the others.
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
            guard seen.insert(node).inserted else { continue }
            var live = 0
            forEachLive(node.bits) { _ in live += 1 }
            budget -= alphabet.count * (live + words + 1)
            if budget < 0 {
                incomplete = true
                break
            }
            if ends(node.shape) {
                var accepted: Set<Int> = []
                forEachLive(node.bits) { state in
                    if accepting[state] { accepted.insert(ids[owners[state]]) }
                }
                if outcomes[accepted] == nil { outcomeOrder.append(accepted) }
                if outcomes[accepted, default: []].count < 3 { outcomes[accepted, default: []].append([text]) }
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
                if !seen.contains(next) { queue.append((next, text + [scalar])) }
            }
        }
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
    private mutating func itemOutcomes(_ part: URLPart, ids: [Int]) -> [Outcome] {
        let singles = explore(part, ids: ids)
        var family: [Set<Int>: [[UInt32]]] = [:]
        var familyOrder: [Set<Int>] = []
        func add(_ accepted: Set<Int>, _ values: [[UInt32]]) {
            guard family[accepted] == nil else { return }
            family[accepted] = values
            familyOrder.append(accepted)
        }
        let every = old.itemReading == .everyInstance
        if !every { add([], []) }
        for single in singles { add(single.accepted, single.witnesses[0]) }
        var index = 0
        while index < familyOrder.count {
            if familyOrder.count >= 256 {
                incomplete = true
                break
            }
            let first = familyOrder[index]
            for second in familyOrder[..<index] {
                let combined = every ? first.intersection(second) : first.union(second)
                add(combined, family[first]! + family[second]!)
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
