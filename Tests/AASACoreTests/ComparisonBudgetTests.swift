import AASATestSupport
import Foundation
import Testing

@testable import AASACore

/// The semantic diff's budget (``ComparisonBudget``): real files compare completely and far within it; hostile ones,
/// whether a file can carry them or they are built directly, stop at it, say "not compared: too complex", and never
/// use more than it allows.
@Suite struct ComparisonBudgetTests {
    static func file(_ text: String) -> AssociationFile {
        AssociationFile.parse(SourceText(name: "aasa.json", bytes: Array(text.utf8))).file!
    }

    static func apple(_ components: [String], variables: String = "") -> AssociationFile {
        let substitution = variables.isEmpty ? "" : #""substitutionVariables": {\#(variables)}, "#
        return file(
            #"{"applinks": {"defaults": {}, \#(substitution)"details": [{"appIDs": ["ABCDE12345.com.example.app"], "components": ["#
                + components.joined(separator: ", ") + "]}]}}")
    }

    static func diff(_ old: AssociationFile, _ new: AssociationFile) -> DomainDiff {
        DomainDiff(domain: "example.com", old: DiffSide(appleFile: old), new: DiffSide(appleFile: new), legacy: true)
    }

    /// Every real file against itself and against its import (what a reload compares when a domain moves to
    /// site.json) compares completely, using under a tenth of each limit.
    @Test func realFilesCompareCompletelyFarWithinTheLimits() throws {
        let folder = RepositoryPaths.corpus + "/aasa"
        var compared = 0
        var most = (states: 0, edges: 0, bytes: 0, steps: 0)
        for name in RepositoryPaths.files(in: folder, endingWith: ".json") {
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: folder + "/" + name)))
            guard let root = JSONValue.parse(bytes) else { continue }
            let original = AssociationFile.readAsDevice(root).file
            var versions = [original]
            if let generated = ImportPipeline().run(SourceText(name: name, bytes: bytes), domain: "example.com")
                .generated
            {
                versions.append(generated.file)
            }
            for version in versions {
                let diff = Self.diff(original, version)
                #expect(diff.isComplete, "\(name): \(diff.notes)")
                let used = diff.budget
                most = (
                    max(most.states, used.states), max(most.edges, used.edges), max(most.bytes, used.bytes),
                    max(most.steps, used.steps)
                )
                compared += 1
            }
        }
        #expect(compared > 150)
        let limits = ComparisonBudget.Limits.standard
        #expect(most.states * 10 < limits.states, "\(most)")
        #expect(most.edges * 10 < limits.edges, "\(most)")
        #expect(most.bytes * 10 < limits.bytes, "\(most)")
        #expect(most.steps * 10 < limits.steps, "\(most)")
    }

    /// Files nobody writes by accident, each of which took seconds to minutes and gigabytes before the budget.
    static let hostile: [(String, AssociationFile)] = {
        let values = (0..<400).map { #""v\#($0)x""# }.joined(separator: ", ")
        let manyUses = "/" + Array(repeating: "$(v)", count: 8).joined(separator: "*") + "*"
        return [
            // The issue's: a run of 10,000 `*` (then a letter, so it is not a prefix).
            ("a run of 10,000 stars", apple([#"{"/": "/\#(String(repeating: "*", count: 10_000))a"}"#])),
            ("5,000 alternating stars", apple([#"{"/": "/\#(String(repeating: "*a", count: 5_000))"}"#])),
            // Within the pattern limits: 8 uses of a 400-value variable, in 18 rules.
            (
                "a large variable used 8 times in 18 rules",
                apple((0..<18).map { #"{"/": "/p\#($0)\#(manyUses)"}"# }, variables: #""v": [\#(values)]"#)
            ),
            (
                "500 rules of 8 wildcards",
                apple(
                    (0..<500).map { rule in
                        #"{"/": "/"# + (0..<8).map { "\(rule % 26)-\($0)" }.joined(separator: "*") + #"*"}"#
                    })
            ),
            (
                "100 rules of 20 query items",
                apple(
                    (0..<100).map { rule in
                        #"{"/": "/q/*", "?": {"#
                            + (0..<20).map { #""i\#(($0 + rule) % 40)": "?*\#(rule % 7)""# }
                            .joined(separator: ", ") + "}}"
                    })
            ),
            (
                "a 3,000-character query item name read in any case",
                apple([
                    #"{"/": "/c/*", "?": {"\#(String(repeating: "a", count: 3_000))": "x"}, "caseSensitive": false}"#,
                    #"{"/": "/c/*", "?": {"\#(String(repeating: "A", count: 3_000))": "y"}, "caseSensitive": false}"#,
                ])
            ),
        ]
    }()

    @Test(arguments: hostile.indices)
    func hostileFilesStopAtTheBudget(_ index: Int) {
        let (name, new) = Self.hostile[index]
        let old = Self.apple([#"{"/": "/a/*"}"#])
        let started = CPUTime.ofThisThread()
        let diff = Self.diff(old, new)
        let took = CPUTime.ofThisThread() - started
        let used = diff.budget
        let limits = ComparisonBudget.Limits.standard
        #expect(
            used.states <= limits.states && used.edges <= limits.edges && used.bytes <= limits.bytes
                && used.steps <= limits.steps, "\(name)")
        if !diff.isComplete {
            #expect(diff.summary.hasPrefix("not compared: too complex"), "\(name): \(diff.summary)")
            #expect(diff.notes.contains { $0.contains("iOS 13+: not compared: too complex") }, "\(name)")
        }
        // Debug build, a shared machine: seconds, where it took minutes.
        #expect(took < .seconds(30), "\(name): \(took)")
    }

    /// Automata no file can carry once patterns are limited, built directly from matcher programs: a run of
    /// `count` stars then `a` (each star a fork and a loop, their ε-closures quadratic in `count`).
    static func stars(_ count: Int) -> WildcardPattern {
        var kinds: [WildcardPattern.Kind] = [.accept]
        var operands: [UInt32] = [0]
        var nexts: [Int32] = [0]
        var forks: [Int32] = []
        func append(_ kind: WildcardPattern.Kind, _ operand: UInt32, _ next: Int32) -> Int32 {
            kinds.append(kind)
            operands.append(operand)
            nexts.append(next)
            return Int32(kinds.count - 1)
        }
        var next = append(.scalar, 0x61, 0)
        for _ in 0..<count {
            let loop = Int32(kinds.count)
            let first = UInt32(forks.count)
            forks += [loop + 1, next]
            _ = append(.fork, first, 2)
            _ = append(.any, 0, loop)
            next = loop
        }
        return WildcardPattern(
            source: String(repeating: "*", count: count) + "a", shape: .automaton, kinds: kinds, operands: operands,
            nexts: nexts, forkTargets: forks, classes: [], start: next, requiredPrefix: [])
    }

    static func rule(_ automaton: PartAutomaton, _ index: Int) -> DecisionRule {
        DecisionRule(
            conditions: [.path: automaton], answer: .app(["ABCDE12345.app"]), location: "rule \(index)",
            text: "rule \(index)", detailsIndex: nil, ruleIndex: index, kind: nil, patterns: [.path: "*a"])
    }

    @Test(arguments: [20_000, 100_000])
    func rawAutomataStopAtTheBudgetAsTheyAreBuilt(stars: Int) {
        var budget = ComparisonBudget()
        let started = CPUTime.ofThisThread()
        #expect(throws: ComparisonBudget.Exhausted.self) {
            _ = try PartAutomaton(Self.stars(stars), folds: false, budget: &budget)
        }
        #expect(budget.exhausted != nil && budget.edges <= budget.limits.edges && budget.bytes <= budget.limits.bytes)
        #expect(CPUTime.ofThisThread() - started < .seconds(20))
    }

    /// Automata small enough alone, within every pattern limit, whose product outgrows the budget: `*a` then `k`
    /// `?` tells apart the last `k + 1` characters, so together they need a state for each of 2^20 texts. The walk
    /// stops at the budget.
    @Test func aProductOfSmallAutomataStopsAtTheBudget() throws {
        let rules = (1...20).map { #"{"/": "*a\#(String(repeating: "?", count: $0))"}"# }
        let everyOther = Self.apple(rules.enumerated().filter { $0.offset % 2 == 0 }.map(\.element))
        var building = ComparisonBudget()
        let old = try DecisionList(apple: URLMatcher(file: everyOther), budget: &building)
        let new = try DecisionList(apple: URLMatcher(file: Self.apple(rules)), budget: &building)
        var diff = SemanticDiff(old: old, new: new)
        let started = CPUTime.ofThisThread()
        _ = diff.run()
        #expect(diff.incomplete && diff.exhausted != nil)
        let used = diff.budget
        #expect(used.states <= used.limits.states && used.bytes <= used.limits.bytes && used.steps <= used.limits.steps)
        #expect(CPUTime.ofThisThread() - started < .seconds(30))
    }

    /// A charge that would pass a limit throws, charges nothing, and every later charge throws too.
    @Test(arguments: [
        (ComparisonBudget.Resource.states, [1, 0, 0, 0], 10), (.edges, [0, 1, 0, 0], 20), (.bytes, [0, 0, 1, 0], 30),
        (.steps, [0, 0, 0, 1], 40),
    ])
    func aChargePastALimitThrowsAndStops(resource: ComparisonBudget.Resource, over: [Int], limit: Int) {
        var budget = ComparisonBudget(.init(states: 10, edges: 20, bytes: 30, steps: 40))
        #expect(throws: Never.self) { try budget.charge(states: 10, edges: 20, bytes: 30, steps: 40) }
        #expect(throws: ComparisonBudget.Exhausted(resource: resource, limit: limit)) {
            try budget.charge(states: over[0], edges: over[1], bytes: over[2], steps: over[3])
        }
        #expect(budget.states == 10 && budget.edges == 20 && budget.bytes == 30 && budget.steps == 40)
        #expect(throws: ComparisonBudget.Exhausted.self) { try budget.charge() }
    }
}
