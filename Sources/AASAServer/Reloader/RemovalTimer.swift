import Foundation

/// Reloads when the earliest removal grace ends (``ServerConfiguration/removalGrace``), so a domain whose folder
/// stays gone is unpublished then even when nothing else changes. One reload is due at a time: the reload it runs
/// schedules the next.
final class RemovalTimer: Service, @unchecked Sendable {
    private let fire: @Sendable () -> Void
    private let condition = NSCondition()
    /// Guarded by ``condition``: when the pending reload is due, and whether the timer runs.
    private var due: Date?
    private var running = false
    private var stopped = false
    /// Left when the thread ends, for ``stop()`` to wait on.
    private let ended = DispatchGroup()

    /// A timer that calls `fire` when a scheduled time comes, on a thread of its own.
    init(fire: @escaping @Sendable () -> Void) {
        self.fire = fire
    }

    func start() {
        condition.lock()
        defer { condition.unlock() }
        guard !running, !stopped else { return }
        running = true
        ended.enter()
        let thread = Thread { [self] in
            work()
            ended.leave()
        }
        thread.name = "removal-timer"
        thread.start()
    }

    /// Fires at `date` (a little after, so the grace has ended when the reload reads the clock), unless an earlier
    /// time is already scheduled.
    func schedule(at date: Date) {
        condition.lock()
        defer { condition.unlock() }
        let at = date.addingTimeInterval(0.05)
        guard due.map({ at < $0 }) ?? true else { return }
        due = at
        condition.broadcast()
    }

    func stop() {
        condition.lock()
        stopped = true
        let wasRunning = running
        running = false
        condition.broadcast()
        condition.unlock()
        if wasRunning { ended.wait() }
    }

    private func work() {
        condition.lock()
        while running {
            guard let at = due else {
                condition.wait()
                continue
            }
            if at > Date() {
                _ = condition.wait(until: at)
                continue
            }
            due = nil
            condition.unlock()
            fire()
            condition.lock()
        }
        condition.unlock()
    }
}
