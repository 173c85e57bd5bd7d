public import Foundation

/// The lifecycle every background loop of the server shares: the threads a service runs, the lock and condition
/// they wait on, and the stop that wakes them and joins them. The change comparer, the due queues of ACME, the CDN
/// check and the removal timer, the store's follower and snapshot writer, the file watcher and each listener's
/// reaper run on one.
///
/// The owner keeps its own state under ``condition`` (``locked(_:)``), and its threads loop until
/// ``isStopping`` (read while holding the lock: ``stoppingLocked``). ``start(_:_:)`` runs at most once, and never
/// after ``stop(whileLocked:wake:)``, which returns only once every thread has ended: joined, never abandoned, so a
/// stopped service no longer calls back into what stopped it.
public final class WorkerLoop: @unchecked Sendable {
    /// The lock of the loop's state and of its owner's, and the condition the threads wait on.
    public let condition = NSCondition()
    /// Guarded by ``condition``.
    private var threads: [ServiceThread] = []
    private var started = false
    private var stopping = false

    /// A loop with no thread yet.
    public init() {}

    /// Starts a thread for each of `names` (at most 15 bytes of each are kept by the kernel), running `body` with its
    /// index. Calling it again, or after the stop, does nothing. Returns why a thread did not start; the others run.
    @discardableResult
    public func start(_ names: [String], _ body: @escaping @Sendable (Int) -> Void) -> [ServiceThread.StartFailure] {
        locked {
            guard !started, !stopping else { return [] }
            started = true
            var failures: [ServiceThread.StartFailure] = []
            for (index, name) in names.enumerated() {
                do throws(ServiceThread.StartFailure) {
                    threads.append(try ServiceThread(name: name) { body(index) })
                } catch {
                    failures.append(error)
                }
            }
            return failures
        }
    }

    /// Starts one thread named `name` running `body`, as the other `start`; returns why it did not start.
    @discardableResult
    public func start(_ name: String, _ body: @escaping @Sendable () -> Void) -> ServiceThread.StartFailure? {
        start([name]) { _ in body() }.first
    }

    /// Whether the threads were started and not stopped.
    public var isRunning: Bool { locked { started && !stopping } }

    /// Whether the stop was asked for.
    public var isStopping: Bool { locked { stopping } }

    /// ``isStopping`` for a caller that holds ``condition``.
    public var stoppingLocked: Bool { stopping }

    /// Stops the loop: marks it stopping and runs `whileLocked` under the lock (to drop waiting work), wakes every
    /// thread waiting on the condition, runs `wake` (to interrupt a thread that waits elsewhere: a `poll`, a socket),
    /// and returns once every thread has ended. Safe before ``start(_:_:)``, more than once, from several threads
    /// (each returns once the threads are gone), and from a thread of the loop (which then ends when it returns).
    public func stop(whileLocked: () -> Void = {}, wake: () -> Void = {}) {
        let joining = locked {
            stopping = true
            whileLocked()
            return threads
        }
        condition.broadcast()
        wake()
        for thread in joining { thread.join() }
        locked { threads.removeAll { thread in joining.contains { $0 === thread } } }
    }

    /// Waits on the condition (the caller holds ``condition``) until `time`, a broadcast, or the stop; returns whether
    /// the loop still runs.
    @discardableResult
    public func waitLocked(until time: Date? = nil) -> Bool {
        guard !stopping else { return false }
        if let time { _ = condition.wait(until: time) } else { condition.wait() }
        return !stopping
    }

    /// Waits until `time` or the stop, without holding the lock before or after; returns whether the loop still
    /// runs. For a thread that keeps a pace between items without holding up the stop.
    @discardableResult
    public func pause(until time: Date) -> Bool {
        locked {
            while !stopping && Date() < time { _ = condition.wait(until: time) }
            return !stopping
        }
    }

    /// The kernel's ids of the running threads, for tests that check they are gone after the stop.
    public var threadIDs: [Int32] { locked { threads.map(\.threadID) } }

    /// Runs `body` holding ``condition``'s lock.
    public func locked<T>(_ body: () throws -> T) rethrows -> T {
        condition.lock()
        defer { condition.unlock() }
        return try body()
    }

    /// Runs `body` holding the lock, then wakes every waiting thread: for a change the threads wait for.
    public func changing<T>(_ body: () throws -> T) rethrows -> T {
        defer { condition.broadcast() }
        return try locked(body)
    }
}
