import AASACore
import Foundation
import Logging

/// Items by key, each due at a time of its own, and worker threads that run each item when it is due: the one
/// worker of ACME's orders and renewals (``ACMEManager``) and of the CDN check (``CDNMonitor``).
///
/// The items are the owner's: it keeps them here and changes them through ``withItems(_:)``, under the queue's
/// lock, which wakes the workers so an item made due earlier is run at its new time. A worker waits until the
/// earliest due item (``due``), hands it to the owner's `claim` under the lock (which must make it not due, e.g.
/// mark it in progress or move its time on, or it would be claimed again at once), then runs `work` for its key
/// outside the lock. ``stop()`` wakes the workers and joins them: an item in progress finishes first.
///
/// The owner conforms to ``Service`` and starts and stops its queue; the queue holds its workers' threads, which
/// hold the queue (not the owner: `work` captures it weakly, so an owner nobody holds goes away and stops it).
final class DueQueue<Key: Hashable & Sendable, Item: Sendable>: @unchecked Sendable {
    /// When an item is next due; `nil`: not due at all.
    private let due: @Sendable (Item) -> Date?
    /// Called under the lock with the item a worker takes and the time, before `work` runs.
    private let claim: @Sendable (Key, inout Item, Date) -> Void
    /// The workers' thread names, one per worker.
    private let threadNames: [String]
    private let logger: Logger
    private let loop = WorkerLoop()
    /// Guarded by the loop's lock.
    private var items: [Key: Item] = [:]

    /// A queue with a worker thread for each of `threadNames` (at least one), which takes each item once it is due
    /// by `due`, through `claim`.
    init(
        threadNames: [String], logger: Logger, due: @escaping @Sendable (Item) -> Date?,
        claim: @escaping @Sendable (Key, inout Item, Date) -> Void
    ) {
        self.threadNames = threadNames.isEmpty ? ["due-queue"] : threadNames
        self.logger = logger
        self.due = due
        self.claim = claim
    }

    /// Runs `body` on the items under the queue's lock, then wakes the workers to look at the times again.
    func withItems<T>(_ body: (inout [Key: Item]) throws -> T) rethrows -> T {
        try loop.changing { try body(&items) }
    }

    /// Reads the items under the queue's lock, without waking the workers.
    func reading<T>(_ body: ([Key: Item]) throws -> T) rethrows -> T {
        try loop.locked { try body(items) }
    }

    /// Starts the workers, each running `work` for one due item at a time, outside the lock. Calling it again, or
    /// after ``stop()``, does nothing.
    func start(_ work: @escaping @Sendable (Key) -> Void) {
        for failure in loop.start(threadNames, { [self] _ in runWorker(work) }) { logger.error("\(failure)") }
    }

    /// Stops the workers and returns once they have ended: each finishes the item in progress, none takes another.
    func stop() {
        loop.stop()
    }

    /// The kernel's ids of the running workers, for tests that check they are gone after ``stop()``.
    var threadIDs: [Int32] { loop.threadIDs }

    /// Whether ``stop()`` was called: for work that tells an item cut short by the stop from one that failed.
    var isStopping: Bool { loop.isStopping }

    /// Waits until `time`, or until the queue stops; returns whether it is still running. For a worker that keeps
    /// a rate between items without holding up ``stop()``.
    @discardableResult
    func pause(until time: Date) -> Bool {
        loop.pause(until: time)
    }

    private func runWorker(_ work: @Sendable (Key) -> Void) {
        while let key = nextDue() { work(key) }
    }

    /// Waits for the earliest due item, claims it, and returns its key; `nil` once stopped.
    private func nextDue() -> Key? {
        loop.locked {
            while !loop.stoppingLocked {
                let now = Date()
                let next = items.compactMap { key, item in due(item).map { (key, $0) } }.min { $0.1 < $1.1 }
                guard let (key, time) = next else {
                    loop.waitLocked()
                    continue
                }
                if time > now {
                    loop.waitLocked(until: time)
                    continue
                }
                claim(key, &items[key]!, now)
                return key
            }
            return nil
        }
    }
}
