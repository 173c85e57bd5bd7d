import AASACore
import AASATestSupport
import Foundation
import Testing

@testable import AASAFuzzHarness

/// One input the fuzzers found (or we wrote by hand), or one seed.
struct FuzzInput: Sendable, CustomTestStringConvertible {
    var target: FuzzTarget
    var path: String

    var testDescription: String { "\(target.rawValue): \(path)" }

    /// Where `scripts/fuzz` copies what it finds.
    static let regressions = RepositoryPaths.root + "/Tests/AASACoreTests/Fixtures/fuzz-regressions"

    /// Every file under `folder/<target>/`, sorted.
    static func all(in folder: String) -> [FuzzInput] {
        FuzzTarget.allCases.flatMap { target in
            let directory = folder + "/" + target.rawValue
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            return names.filter { !$0.hasPrefix(".") }.sorted().map {
                FuzzInput(target: target, path: directory + "/" + $0)
            }
        }
    }
}

/// Replays every input under `Tests/AASACoreTests/Fixtures/fuzz-regressions/<target>/` through the same harness
/// the fuzzers run, so a crash, hang or broken property they found stays fixed (docs/fuzzing.md).
@Suite struct FuzzRegressionTests {
    @Test(arguments: FuzzInput.all(in: FuzzInput.regressions))
    func foundInputStaysFixed(_ input: FuzzInput) throws {
        let bytes = try #require(FileManager.default.contents(atPath: input.path))
        let start = CPUTime.ofThisThread()
        do {
            try input.target.run(Array(bytes))
        } catch {
            Issue.record("\(error)")
        }
        // libFuzzer's -timeout is 10 s for the optimised build; a debug build replaying a former hang gets 5 s of
        // this thread's CPU time (wall time would count every other test running beside it).
        #expect(CPUTime.ofThisThread() - start < .seconds(5))
    }

    @Test func everyTargetHasRegressionInputs() {
        let targets = Set(FuzzInput.all(in: FuzzInput.regressions).map(\.target))
        #expect(targets == Set(FuzzTarget.allCases))
    }

    @Test(arguments: FuzzInput.all(in: RepositoryPaths.root + "/Fuzz/seeds"))
    func handWrittenSeedsPassTheHarness(_ input: FuzzInput) throws {
        let bytes = try #require(FileManager.default.contents(atPath: input.path))
        try input.target.run(Array(bytes))
    }
}
