import Foundation
import Logging

/// Reloads when the earliest removal grace ends (``ServerConfiguration/removalGrace``), so a domain whose folder
/// stays gone is unpublished then even when nothing else changes. One reload is due at a time: the reload it runs
/// schedules the next. A ``DueQueue`` of one item, like ACME's and the CDN check's.
final class RemovalTimer: Service {
    /// The one item of the queue: the next removal reload.
    private enum Key: Hashable, Sendable { case reload }

    private let queue: DueQueue<Key, Date?>
    private let fire: @Sendable () -> Void

    /// A timer that calls `fire` when a scheduled time comes, on a thread of its own.
    init(logger: Logger, fire: @escaping @Sendable () -> Void) {
        self.fire = fire
        queue = DueQueue(threadNames: ["removal-timer"], logger: logger, due: { $0 }) { _, due, _ in due = nil }
    }

    func start() {
        queue.start { [fire] _ in fire() }
    }

    /// Fires at `date` (a little after, so the grace has ended when the reload reads the clock), unless an earlier
    /// time is already scheduled.
    func schedule(at date: Date) {
        let at = date.addingTimeInterval(0.05)
        queue.withItems { items in
            if let pending = items[.reload] ?? nil, pending <= at { return }
            items[.reload] = at
        }
    }

    func stop() {
        queue.stop()
    }
}
