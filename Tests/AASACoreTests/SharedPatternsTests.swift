import Foundation
import Testing

@testable import AASACore

/// Patterns compiled once for every file (``SharedPatterns``): the same answers as compiling each file alone, a
/// file's variables kept to that file, and a table that stays within its capacity.
@Suite struct SharedPatternsTests {
    /// A pattern no other test writes, so that what the process-wide table holds is this test's doing.
    private static func uniquePath() -> String {
        "/shared-\(UUID().uuidString.prefix(8).lowercased())/*"
    }

    private static func key(_ source: String) -> SharedPatterns.Key {
        SharedPatterns.Key(source: source, caseSensitive: true, percentEncoded: true, target: .path)
    }

    @Test func aPatternWithoutVariablesIsCompiledForTheFirstFileAndTakenByTheNext() {
        let pattern = Self.uniquePath()
        #expect(SharedPatterns.shared.output(for: Self.key(pattern)) == nil)
        let first = URLMatcher(file: MatcherFixtures.file([ComponentPattern(path: pattern)]))
        let kept = SharedPatterns.shared.output(for: Self.key(pattern))
        #expect(kept?.pattern != nil)
        #expect(kept?.problems.isEmpty == true)
        // A second file, with the pattern excluded this time, decides from the kept automaton as it would from its own.
        let second = URLMatcher(file: MatcherFixtures.file([ComponentPattern(path: pattern, exclude: true)]))
        let inside = MatcherFixtures.url(pattern.replacingOccurrences(of: "*", with: "x/y"))
        let bare = MatcherFixtures.url(String(pattern.dropLast(2)))
        #expect(first.match(inside).verdict == .match)
        #expect(first.match(bare).verdict == .match)
        #expect(first.match(MatcherFixtures.url("/other")).verdict == .noMatch)
        #expect(second.match(inside).verdict == .excluded)
        #expect(second.match(MatcherFixtures.url("/other")).verdict == .noMatch)
    }

    @Test func aPatternThatCannotMatchKeepsItsWarningInEveryFile() {
        let pattern = Self.uniquePath().replacingOccurrences(of: "shared", with: "café")
        for _ in 0..<2 {
            let matcher = URLMatcher(file: MatcherFixtures.file([ComponentPattern(path: pattern)]))
            #expect(matcher.compileDiagnostics.contains { $0.code == .nonASCIIPatternWhileEncoded })
        }
        #expect(SharedPatterns.shared.output(for: Self.key(pattern))?.problems.count == 1)
    }

    @Test func aPatternWithVariablesIsCompiledForItsOwnFile() {
        let pattern = "/$(shop)/*"
        let north = URLMatcher(
            file: MatcherFixtures.file(
                [ComponentPattern(path: pattern)], variables: [SubstitutionVariable(name: "shop", values: ["north"])]))
        let south = URLMatcher(
            file: MatcherFixtures.file(
                [ComponentPattern(path: pattern)], variables: [SubstitutionVariable(name: "shop", values: ["south"])]))
        #expect(north.match(MatcherFixtures.url("/north/1")).verdict == .match)
        #expect(north.match(MatcherFixtures.url("/south/1")).verdict == .noMatch)
        #expect(south.match(MatcherFixtures.url("/south/1")).verdict == .match)
        #expect(south.match(MatcherFixtures.url("/north/1")).verdict == .noMatch)
        #expect(!SharedPatterns.isShareable(pattern))
        #expect(SharedPatterns.shared.output(for: Self.key(pattern)) == nil)
    }

    @Test func onlyShortPatternsAreKept() {
        #expect(SharedPatterns.isShareable("/" + String(repeating: "a", count: SharedPatterns.maximumSourceBytes - 1)))
        #expect(!SharedPatterns.isShareable("/" + String(repeating: "a", count: SharedPatterns.maximumSourceBytes)))
    }

    @Test func aFullTableStartsOverAndNeverHoldsMoreThanItsCapacity() {
        let table = SharedPatterns(capacity: 16)
        let compiler = WildcardPatternCompiler(variables: nil)
        var last = Self.key("")
        for index in 0..<200 {
            last = Self.key("/p\(index)/*")
            table.keep(
                compiler.compile(last.source, caseSensitive: true, percentEncoded: true, target: .path), for: last)
            #expect(table.count <= 16)
        }
        #expect(table.output(for: last)?.pattern != nil)
        #expect(table.count > 0)
    }
}
