import AASACore
import Synchronization

/// The loads so far: how many by result, for `/metrics`, and the latest ones, newest first, for `/status`.
final class ReloadHistory: Sendable {
    /// How many loads `/status` lists.
    static let capacity = 50

    private let state = Mutex<(counts: [String: Int], latest: [ServerStatus.ReloadRecord])>(([:], []))

    /// Records the load `catalog`'s status describes, which took `duration` and changed `changed`.
    func record(_ catalog: Catalog, took duration: Duration, changed: [String]) {
        guard let outcome = catalog.status?.lastReload else { return }
        let record = ServerStatus.ReloadRecord(
            time: outcome.time, trigger: outcome.trigger, result: outcome.result, seconds: duration.timeInterval,
            errors: outcome.errors.count, warnings: outcome.warnings.count, changed: changed)
        state.withLock { state in
            state.counts[outcome.result.rawValue, default: 0] += 1
            state.latest.insert(record, at: 0)
            if state.latest.count > Self.capacity { state.latest.removeLast() }
        }
    }

    /// Loads by result (`ok`, `errors`, `failed`).
    var counts: [String: Int] { state.withLock { $0.counts } }
    /// The latest loads, newest first.
    var latest: [ServerStatus.ReloadRecord] { state.withLock { $0.latest } }
}
