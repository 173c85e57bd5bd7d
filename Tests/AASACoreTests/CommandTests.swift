import AASATestSupport
import Foundation
import Testing

/// The way every test runs a program (`Command.run`, `ChildProcess`): it can neither hang a test nor take another
/// test's pipes with it.
@Suite struct CommandTests {
    @Test func aProgramThatLeavesAChildHoldingItsOutputStillReturnsWhatItPrinted() throws {
        // The shell ends at once; the sleep it started keeps its standard output and error open three times as
        // long as the test allows for the whole run, on this machine too.
        let started = Date()
        let sleep = Int(TestTime.seconds(60))
        let output = try Command.run("/bin/sh", ["-c", "sleep \(sleep) & echo \"left $!\""], timeout: 120)
        let elapsed = Date().timeIntervalSince(started)
        #expect(output.status == 0)
        #expect(output.stdout.hasPrefix("left "), "\(output.stdout)")
        // Returned once the shell ended, not when the sleep did or at the timeout.
        #expect(elapsed < TestTime.seconds(20), "returned after \(elapsed) s")
        if let pid = pid_t(output.stdout.dropFirst("left ".count).trimmingCharacters(in: .whitespacesAndNewlines)) {
            kill(pid, SIGKILL)
        }
    }

    @Test func aProgramPastItsTimeoutIsStoppedWithWhatItStarted() throws {
        // Ignores SIGTERM: only SIGKILL ends it, and its sleep goes with it (they share its process group).
        let started = Date()
        let output = try Command.run(
            "/bin/sh", ["-c", "trap '' TERM; sleep 300 & echo $!; wait"], timeout: 1)
        let elapsed = Date().timeIntervalSince(started)
        #expect(output.status == SIGKILL, "\(output)")
        #expect(elapsed < TestTime.seconds(30), "returned after \(elapsed) s")
        let child = try #require(pid_t(output.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        // Gone, or a zombie waiting for its new parent to reap it: not sleeping on.
        let state = Wait.until("the shell's sleep to end", seconds: 10) {
            guard let stat = try? String(contentsOfFile: "/proc/\(child)/stat", encoding: .utf8) else { return nil }
            let fields = stat.split(separator: ")").last?.split(separator: " ")
            return fields?.first == "Z" ? nil : stat
        }
        #expect(state != nil)
    }

    @Test func inputAndOutputLargerThanAPipeDoNotWaitForEachOther() throws {
        // cat writes while it reads: a megabyte each way needs both pipes served at once.
        var generator = SeededRandomNumberGenerator(seed: 7)
        let input = (0..<1_048_576).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let output = try Command.run("cat", [], input: input, timeout: 60)
        #expect(output.status == 0)
        #expect(output.stdoutBytes == input)
    }

    @Test func aProgramGetsItsStandardDescriptorsAndNothingElse() throws {
        // A pipe of this process that is not close-on-exec, as Foundation's Pipe makes them.
        let other = Pipe()
        let output = try Command.run("/bin/ls", ["/proc/self/fd"], timeout: 30)
        let descriptors = Set(output.stdout.split(separator: "\n").compactMap { Int32($0) })
        // 0, 1 and 2, and the one ls opened to list the folder.
        #expect(descriptors.isSubset(of: [0, 1, 2, 3]), "\(descriptors.sorted())")
        #expect(!descriptors.contains(other.fileHandleForReading.fileDescriptor))
        #expect(!descriptors.contains(other.fileHandleForWriting.fileDescriptor))
    }

    @Test func aProgramRunsInItsFolderWithItsEnvironmentAndItsExitStatus() throws {
        let folder = TemporaryDirectory("aasa-command")
        let output = try Command.run(
            "sh", ["-c", "pwd; echo \"$ONLY\"; env | wc -l; echo oops >&2; exit 3"], currentDirectory: folder.path,
            environment: ["ONLY": "this", "PATH": "/usr/bin:/bin"])
        let lines = output.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(
            lines.first.map { URL(fileURLWithPath: $0).resolvingSymlinksInPath().path }
                == URL(fileURLWithPath: folder.path).resolvingSymlinksInPath().path)
        #expect(lines.dropFirst().first == "this")
        // The two variables given, and the PWD the shell sets: nothing of the test process's own.
        #expect(Int(lines.dropFirst(2).first ?? "") ?? 99 <= 3, "\(lines)")
        #expect(output.stderr == "oops\n")
        #expect(output.status == 3)
    }
}
