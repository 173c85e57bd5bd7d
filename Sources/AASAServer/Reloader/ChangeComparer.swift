import AASACore
import Foundation

/// Compares each new version of a domain with the version it replaced (``DomainChange``) on a thread of its own,
/// after the reload that published it: one tenant's comparison, however long its budget lets it run
/// (``ComparisonBudget``), never holds up the reload of another tenant's edit.
///
/// Waiting comparisons are kept per domain, the newest winning: a domain published twice before its comparison
/// ran is compared once, its newest version against the one that version replaced. At most ``capacity`` domains
/// wait; a domain past that is recorded as not compared. Each result goes to `record` as it is ready, one at a time.
final class ChangeComparer: Service, @unchecked Sendable {
    /// One comparison to make: `new` replaced `old` in the load of `time`.
    struct Job: Sendable {
        var old: PublishedDomain
        var new: PublishedDomain
        var time: Date

        /// The two versions with only what the comparison reads (``DiffSide/init(published:)``): a waiting job does
        /// not keep an old version's pages or signature alive.
        init(old: PublishedDomain, new: PublishedDomain, time: Date) {
            self.old = Self.compared(old)
            self.new = Self.compared(new)
            self.time = time
        }

        private static func compared(_ version: PublishedDomain) -> PublishedDomain {
            var version = version
            version.pages = nil
            version.signedAssociationFile = version.signedAssociationFile.map { _ in [] }
            return version
        }
    }

    /// How many domains' comparisons may wait at once.
    static let capacity = 10_000

    private let record: @Sendable (Job, DomainDiff) -> Void
    private let loop = WorkerLoop()
    /// Guarded by the loop's lock: the waiting jobs by domain, and the domains in the order they came.
    private var waiting: [String: Job] = [:]
    private var order: [String] = []

    /// A comparer that hands each result to `record`.
    init(record: @escaping @Sendable (Job, DomainDiff) -> Void) {
        self.record = record
    }

    /// Starts the thread that makes the comparisons; ``enqueue(_:)`` calls it on first use. Calling it again, or
    /// after ``stop()``, does nothing.
    func start() {
        loop.start("change-comparer") { [self] in work() }
    }

    /// Queues the comparisons of `jobs`, each replacing a waiting one of its domain; starts the thread on first use.
    /// Returns at once. A job that finds the queue full is recorded at once as not compared.
    func enqueue(_ jobs: [Job]) {
        guard !jobs.isEmpty else { return }
        start()
        let refused = loop.changing {
            var refused: [Job] = []
            // A stopped comparer takes nothing: no thread would ever compare it.
            for job in jobs where !loop.stoppingLocked {
                let domain = job.new.domain
                if waiting[domain] == nil {
                    guard order.count < Self.capacity else {
                        refused.append(job)
                        continue
                    }
                    order.append(domain)
                }
                waiting[domain] = job
            }
            return refused
        }
        for job in refused {
            record(
                job,
                DomainDiff(
                    notComparedDomain: job.new.domain,
                    because: "\(Self.capacity) domains were waiting for their comparison"))
        }
    }

    /// The kernel's id of the running thread, for tests that check it is gone after ``stop()``.
    var threadIDs: [Int32] { loop.threadIDs }

    /// Stops the thread and returns once it has ended, after the comparison in progress; waiting ones are dropped.
    func stop() {
        loop.stop(whileLocked: {
            waiting = [:]
            order = []
        })
    }

    private func work() {
        while let job = next() {
            // A version the same to the comparison as the one it replaced changed no URL: nothing is recorded.
            guard let diff = DomainChange.compare(job.old, job.new) else { continue }
            record(job, diff)
        }
    }

    /// Waits for the oldest waiting job; `nil` once stopped.
    private func next() -> Job? {
        loop.locked {
            while !loop.stoppingLocked {
                guard order.isEmpty else { return waiting.removeValue(forKey: order.removeFirst()) }
                loop.waitLocked()
            }
            return nil
        }
    }
}
