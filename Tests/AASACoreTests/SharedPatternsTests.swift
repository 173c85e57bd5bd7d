import Foundation
import Testing

@testable import AASACore

/// Patterns compiled once for every file (``SharedPatterns``): the same answers as compiling each file alone, a
/// file's variables kept to that file, and a table that stays within its capacity.
@Suite struct SharedPatternsTests {
    private static func key(_ source: String) -> SharedPatterns.Key {
        SharedPatterns.Key(source: source, caseSensitive: true, percentEncoded: true, target: .path)
    }

    @Test func aPatternWithoutVariablesIsCompiledForTheFirstFileAndTakenByTheNext() {
        let table = SharedPatterns(capacity: 64)
        let first = URLMatcher(file: MatcherFixtures.file([ComponentPattern(path: "/buy/*")]), patterns: table)
        #expect(table.count == 1)
        let kept = table.output(for: Self.key("/buy/*"))
        #expect(kept?.pattern != nil)
        #expect(kept?.problems.isEmpty == true)
        #expect(first.match(MatcherFixtures.url("/buy/x/y")).verdict == .match)
        #expect(first.match(MatcherFixtures.url("/buy")).verdict == .match)
        #expect(first.match(MatcherFixtures.url("/other")).verdict == .noMatch)
        // What the table holds is what a later file decides with, not a compilation of its own: with another
        // pattern's result kept under `/buy/*`, a file writing `/buy/*` matches what that pattern matches.
        let compiler = WildcardPatternCompiler(variables: nil)
        table.keep(
            compiler.compile("/sell/*", caseSensitive: true, percentEncoded: true, target: .path),
            for: Self.key("/buy/*"))
        let second = URLMatcher(
            file: MatcherFixtures.file([ComponentPattern(path: "/buy/*", exclude: true)]), patterns: table)
        #expect(second.match(MatcherFixtures.url("/sell/1")).verdict == .excluded)
        #expect(second.match(MatcherFixtures.url("/buy/1")).verdict == .noMatch)
        #expect(table.count == 1)
    }

    @Test func aPatternThatCannotMatchKeepsItsWarningInEveryFile() {
        let table = SharedPatterns(capacity: 64)
        for _ in 0..<2 {
            let matcher = URLMatcher(
                file: MatcherFixtures.file([ComponentPattern(path: "/café/*")]), patterns: table)
            #expect(matcher.compileDiagnostics.contains { $0.code == .nonASCIIPatternWhileEncoded })
        }
        #expect(table.count == 1)
        #expect(table.output(for: Self.key("/café/*"))?.problems.count == 1)
    }

    @Test func theProcessTableIsTheOneFilesUseByDefault() {
        // A pattern no other test writes, so that what the process-wide table holds is this test's doing.
        let pattern = "/shared-\(UUID().uuidString.prefix(8).lowercased())/*"
        _ = URLMatcher(file: MatcherFixtures.file([ComponentPattern(path: pattern)]))
        #expect(SharedPatterns.shared.output(for: Self.key(pattern))?.pattern != nil)
    }

    @Test func aPatternWithVariablesIsCompiledForItsOwnFile() {
        let table = SharedPatterns(capacity: 64)
        let pattern = "/$(shop)/*"
        let north = URLMatcher(
            file: MatcherFixtures.file(
                [ComponentPattern(path: pattern)], variables: [SubstitutionVariable(name: "shop", values: ["north"])]),
            patterns: table)
        let south = URLMatcher(
            file: MatcherFixtures.file(
                [ComponentPattern(path: pattern)], variables: [SubstitutionVariable(name: "shop", values: ["south"])]),
            patterns: table)
        #expect(north.match(MatcherFixtures.url("/north/1")).verdict == .match)
        #expect(north.match(MatcherFixtures.url("/south/1")).verdict == .noMatch)
        #expect(south.match(MatcherFixtures.url("/south/1")).verdict == .match)
        #expect(south.match(MatcherFixtures.url("/north/1")).verdict == .noMatch)
        #expect(!SharedPatterns.isShareable(pattern))
        #expect(table.count == 0)
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
