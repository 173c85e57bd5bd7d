import AASACore
import Synchronization

/// The first failure of a load's fetches from the store (``StoreSource``): kept until the Loader takes it, so a load
/// whose batches the store stopped answering fails once, as a whole, instead of once per domain.
final class StoreReadFailure: Sendable {
    private let failure = Mutex<Diagnostic?>(nil)

    /// Keeps `diagnostic` unless an earlier failure of this load is kept.
    func record(_ diagnostic: Diagnostic) {
        failure.withLock { $0 = $0 ?? diagnostic }
    }

    /// The failure kept, cleared.
    func take() -> Diagnostic? {
        failure.withLock { kept in
            defer { kept = nil }
            return kept
        }
    }
}
