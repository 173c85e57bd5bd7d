public import Foundation
public import Testing

/// How long tests wait for a server, a child process or a condition, scaled to the machine they run on.
///
/// Every wait in the suite is written as the time it needs on a fast machine of this kind and multiplied by
/// ``scale``: `AASA_TEST_TIME_SCALE` when it is set (a number from 1 to 100, for a machine known to be slow or busy),
/// else measured once per test process from a fixed CPU workload against the time that workload takes on a fast
/// machine, never below 1. A slower machine waits longer; a fast one waits as long as the test was written for.
public enum TestTime {
    /// The factor every wait is multiplied by (see the type's documentation).
    public static let scale: Double = {
        let (value, source) = chosenScale()
        let line = "tests: waits scaled by \(String(format: "%.2f", value)) (\(source))\n"
        FileHandle.standardError.write(Data(line.utf8))
        return value
    }()

    /// The environment variable that sets ``scale``.
    public static let variable = "AASA_TEST_TIME_SCALE"

    /// `seconds` of a fast machine on this one.
    public static func seconds(_ seconds: Double) -> Double { seconds * scale }

    /// `count` tries of a polling loop written for a fast machine, on this one.
    public static func tries(_ count: Int) -> Int { Int((Double(count) * scale).rounded(.up)) }

    /// The moment `seconds` (of a fast machine) from now, on this one.
    public static func deadline(_ seconds: Double) -> Date { Date().addingTimeInterval(self.seconds(seconds)) }

    /// How long the calibration workload takes on a fast machine of this kind (a debug build), in seconds.
    static let referenceSeconds = 0.025

    private static func chosenScale() -> (Double, String) {
        if let text = ProcessInfo.processInfo.environment[variable] {
            guard let value = Double(text), value.isFinite, value >= 1, value <= 100 else {
                return (1, "\(variable)=\(text) is not a number from 1 to 100; using 1")
            }
            return (value, "\(variable)")
        }
        // The fastest of five: the machine's speed, not what else is running at that moment.
        let measured = (0..<5).map { _ in calibrationSeconds() }.min() ?? referenceSeconds
        let value = min(10, max(1, measured / referenceSeconds))
        return (
            value,
            "calibration took \(String(format: "%.1f", measured * 1000)) ms against \(Int(referenceSeconds * 1000)) ms "
                + "on a fast machine; set \(variable) to choose"
        )
    }

    /// Wall time of a fixed workload: sorting and hashing pseudo-random numbers, as much integer and memory work as
    /// loading a few hundred domains.
    private static func calibrationSeconds() -> Double {
        var generator = SeededRandomNumberGenerator(seed: 49)
        var values = (0..<20_000).map { _ in UInt64.random(in: 0...UInt64.max, using: &generator) }
        let start = ContinuousClock.now
        values.sort()
        var hasher = Hasher()
        for value in values { hasher.combine(value) }
        let elapsed = start.duration(to: .now)
        blackHole(hasher.finalize())
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    @inline(never) private static func blackHole(_ value: Int) { if value == 0x5eed_5eed { print("") } }
}

/// Polls a condition until it holds or its (scaled) time runs out; one that runs out says what it waited for and
/// what it saw last, as a recorded test issue.
public enum Wait {
    /// Polls `probe` every `interval` seconds for up to `seconds` (of a fast machine, scaled by ``TestTime``) until it
    /// answers `nil`, meaning the condition holds, and returns the time it took. Otherwise `probe` answers what it
    /// saw; when time runs out, an issue naming `what`, the time waited and that last answer is recorded at the
    /// caller's location, and the result is `nil`.
    @discardableResult
    public static func until(
        _ what: String, seconds: Double, interval: Double = 0.05, sourceLocation: SourceLocation = #_sourceLocation,
        _ probe: () throws -> String?
    ) rethrows -> Double? {
        let start = Date()
        let limit = TestTime.seconds(seconds)
        var seen = "nothing yet"
        while true {
            guard let answer = try probe() else { return Date().timeIntervalSince(start) }
            seen = answer
            if Date().timeIntervalSince(start) >= limit { break }
            Thread.sleep(forTimeInterval: interval)
        }
        let waited =
            "waited \(String(format: "%.1f", limit)) s (\(seconds) s scaled by \(String(format: "%.2f", TestTime.scale)))"
        Issue.record("\(waited) for \(what); last seen: \(seen)", sourceLocation: sourceLocation)
        return nil
    }
}
