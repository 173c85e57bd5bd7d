import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A fixed set of worker threads with a bounded queue: work that may wait (a database, a CPU-heavy check) runs here,
/// never on the threads that answer probes and other callers.
///
/// ``submit(_:)`` never waits: a job that finds every worker busy and the queue full is refused at once, so its
/// caller can answer "busy, retry later" instead of holding a thread. The workers run at a lower scheduling priority
/// (``niceness``) than the rest of the process, so that a burst of CPU-heavy jobs slows those jobs, not the listeners.
/// ``stop()`` runs what is queued and joins every worker.
public final class WorkerPool: Sendable {
    /// The threads' name prefix (`<name>-<n>`, at most 15 bytes kept by the kernel).
    public let name: String
    /// How many jobs run at once.
    public let workers: Int
    /// How many jobs wait at most for a worker; beyond that, ``submit(_:)`` refuses.
    public let queueLimit: Int
    /// The `nice` value each worker thread sets for itself (Linux schedules threads apart): 0 keeps the process's.
    public let niceness: Int32

    private struct State {
        var queue: [@Sendable () -> Void] = []
        var head = 0
        var running = 0
        var stopping = false
        var refused = 0
        var completed = 0

        var waiting: Int { queue.count - head }
    }

    private let state = Monitor(State())
    private let threads = Mutex<[ServiceThread]>([])

    /// Starts `workers` threads (at least 1) taking jobs from a queue of at most `queueLimit` (at least 0).
    ///
    /// - Throws: ``ServiceThread/StartFailure`` when a thread cannot be started (those already started are joined).
    public init(name: String, workers: Int, queueLimit: Int, niceness: Int32 = 0) throws(ServiceThread.StartFailure) {
        self.name = name
        self.workers = max(1, workers)
        self.queueLimit = max(0, queueLimit)
        self.niceness = niceness
        for index in 0..<self.workers {
            do {
                let thread = try ServiceThread(name: "\(name)-\(index)") { [self] in work() }
                threads.withLock { $0.append(thread) }
            } catch {
                stop()
                throw error
            }
        }
    }

    /// What the pool is doing now.
    public struct Figures: Sendable, Equatable {
        /// Jobs running.
        public var running: Int
        /// Jobs waiting for a worker.
        public var queued: Int
        /// Jobs refused so far because every worker was busy and the queue full.
        public var refused: Int
        /// Jobs finished so far.
        public var completed: Int
    }

    /// The pool's figures now.
    public var figures: Figures {
        state.withLock {
            Figures(running: $0.running, queued: $0.waiting, refused: $0.refused, completed: $0.completed)
        }
    }

    /// Takes `job` when a worker is idle or a queue place is free and returns `true`; otherwise (or once stopping)
    /// returns `false` at once and `job` never runs.
    @discardableResult
    public func submit(_ job: @escaping @Sendable () -> Void) -> Bool {
        let taken = state.withLock { state -> Bool in
            guard !state.stopping, state.running + state.waiting < workers + queueLimit else {
                state.refused += 1
                return false
            }
            state.queue.append(job)
            return true
        }
        if taken { state.signal() }
        return taken
    }

    /// Stops taking jobs, lets the workers finish every job already taken (running or queued), and joins them.
    /// Calling it again returns once they are joined.
    public func stop() {
        state.withLock { $0.stopping = true }
        state.broadcast()
        for thread in threads.withLock({ $0 }) { thread.join() }
    }

    private func work() {
        // On Linux the nice value is each thread's own, and 0 names the calling one.
        if niceness != 0 { _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, niceness) }
        while let job = next() {
            job()
            state.withLock {
                $0.running -= 1
                $0.completed += 1
            }
        }
    }

    /// The next job, waiting for one; `nil` once stopping and nothing is left.
    private func next() -> (@Sendable () -> Void)? {
        state.wait { state -> (@Sendable () -> Void)?? in
            guard state.head < state.queue.count else { return state.stopping ? .some(nil) : nil }
            let job = state.queue[state.head]
            state.head += 1
            if state.head == state.queue.count {
                state.queue.removeAll(keepingCapacity: true)
                state.head = 0
            }
            state.running += 1
            return .some(job)
        }
    }
}

/// A value guarded by a POSIX mutex, with a condition variable to wait on it: a waiter tests its condition under the
/// lock, so a ``signal()`` between its test and its sleep is never lost.
final class Monitor<Value>: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let variable = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// Guarded by ``mutex``.
    private var value: Value

    init(_ value: Value) {
        self.value = value
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(variable, nil)
    }

    deinit {
        pthread_cond_destroy(variable)
        pthread_mutex_destroy(mutex)
        variable.deallocate()
        mutex.deallocate()
    }

    /// Runs `body` with the value, under the lock.
    func withLock<Result>(_ body: (inout Value) -> Result) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body(&value)
    }

    /// Sleeps until `take` answers something other than `nil` (asked first, and after every wake-up, under the lock)
    /// and returns that answer.
    func wait<Result>(_ take: (inout Value) -> Result?) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while true {
            if let result = take(&value) { return result }
            pthread_cond_wait(variable, mutex)
        }
    }

    /// Wakes one waiter.
    func signal() {
        pthread_mutex_lock(mutex)
        pthread_cond_signal(variable)
        pthread_mutex_unlock(mutex)
    }

    /// Wakes every waiter.
    func broadcast() {
        pthread_mutex_lock(mutex)
        pthread_cond_broadcast(variable)
        pthread_mutex_unlock(mutex)
    }
}
