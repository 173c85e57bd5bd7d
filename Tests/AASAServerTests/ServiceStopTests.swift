import AASACore
import AASACurl
import AASAOpenSSL
import AASATestSupport
import Foundation
import Logging
import Synchronization
import Testing

@testable import AASAServer

/// Every background service's `stop()` returns only once its threads have ended: stopped in the middle of a piece of
/// work that takes a second, it returns after that work, and the kernel no longer lists its threads.
@Suite(.serialized) struct ServiceStopTests {
    /// How long each service's work in progress takes when it is stopped.
    static let workSeconds = 1.0

    /// A piece of work that takes ``workSeconds``: `entered` is signalled when it starts, `finished` says whether
    /// it ended.
    final class SlowWork: Sendable {
        let entered = DispatchSemaphore(value: 0)
        private let done = Mutex(false)

        var finished: Bool { done.withLock { $0 } }

        func run() {
            entered.signal()
            Thread.sleep(forTimeInterval: ServiceStopTests.workSeconds)
            done.withLock { $0 = true }
        }
    }

    /// A service that is busy with `work` once `begin` ran.
    struct BusyService {
        var service: any Service
        var threadIDs: () -> [Int32]
        var begin: () throws -> Void = {}
        var work: SlowWork
        /// Whatever must live as long as the test (folders).
        var keep: [AnyObject] = []
    }

    /// A CA transport that is slow to fail: the first request takes ``workSeconds``, then every request fails.
    final class SlowCA: ACMETransport {
        let work = SlowWork()
        let calls = Mutex(0)

        func send(_ request: HTTPClientRequest) throws(ACMEFailure) -> HTTPClientResponse {
            let first = calls.withLock { calls in
                defer { calls += 1 }
                return calls == 0
            }
            if first { work.run() }
            throw ACMEFailure(.network, "the test CA does not answer", url: request.url, hint: "none")
        }
    }

    enum Kind: String, CaseIterable {
        case watcher, acme, cdn, comparer
    }

    static func make(_ kind: Kind) throws -> BusyService {
        let logger = Logger(label: "test")
        switch kind {
        case .watcher:
            let folder = TemporaryDirectory("aasa-stop-watcher")
            let work = SlowWork()
            let watcher = try ConfigWatcher(
                roots: [folder.path], quietPeriod: .milliseconds(20), maximumDelay: .milliseconds(100), logger: logger
            ) { _ in work.run() }
            return BusyService(
                service: watcher, threadIDs: { [watcher.threadID].filter { $0 != 0 } },
                begin: {
                    try FileManager.default.createDirectory(
                        atPath: folder.path + "/a.example", withIntermediateDirectories: true)
                },
                work: work, keep: [folder])
        case .acme:
            let folder = TemporaryDirectory("aasa-stop-acme")
            let ca = SlowCA()
            let account = ACMEAccount(
                key: try PrivateKey.generate(.ecdsaP256), email: "ops@example.com", agreesToTerms: true)
            let client = try ACMEClient(
                directoryURL: "https://ca.test/directory", account: account, transport: ca, sleep: { _ in })
            var settings = ACMESettings()
            settings.concurrency = 2
            let manager = ACMEManager(
                settings: settings, client: client, certificateDirectory: folder.path, logger: logger, issued: { _ in })
            // No certificate: due at once.
            manager.update(domains: ["shop.example"], certificates: [])
            return BusyService(
                service: manager, threadIDs: { manager.threadIDs }, work: ca.work,
                keep: [folder, ca])
        case .cdn:
            let work = SlowWork()
            var settings = CDNMonitor.Settings()
            settings.afterChange = .zero
            // What the domain serves is read at the check: slow, then not served (no request is sent).
            let monitor = CDNMonitor(settings: settings, logger: logger) { _ in
                work.run()
                return nil
            }
            monitor.update(domains: ["shop.example"], changed: ["shop.example"])
            return BusyService(
                service: monitor, threadIDs: { monitor.threadIDs }, work: work)
        case .comparer:
            let work = SlowWork()
            let comparer = ChangeComparer { _, _ in work.run() }
            let job = ChangeComparer.Job(
                old: ChangeComparerTests.version("a.example", "/a/*"),
                new: ChangeComparerTests.version("a.example", "/b/*"), time: Date())
            return BusyService(
                service: comparer, threadIDs: { comparer.threadIDs }, begin: { comparer.enqueue([job]) },
                work: work)
        }
    }

    static func isRunning(_ thread: Int32) -> Bool {
        FileManager.default.fileExists(atPath: "/proc/self/task/\(thread)")
    }

    /// An order whose authorization stays pending polls the CA for up to its poll timeout (five minutes here);
    /// stopping the manager ends the poll at its next wait, and the order cut short counts as no failure.
    @Test func stoppingACMEEndsAnOrderThatIsPollingTheCA() throws {
        let folder = TemporaryDirectory("aasa-stop-acme-poll")
        let pending = 400
        let ca = RecordedCA(
            [
                RecordedCA.directory, RecordedCA.nonce, RecordedCA.newAccount, RecordedCA.newOrder(),
                RecordedCA.authorization("pending"), RecordedCA.respond,
            ] + Array(repeating: RecordedCA.authorization("pending"), count: pending))
        let account = ACMEAccount(
            key: try PrivateKey.generate(.ecdsaP256), email: "ops@example.com", agreesToTerms: true)
        // The client's own wait between polls (no `sleep` given): one second per poll.
        let client = try ACMEClient(
            directoryURL: "https://ca.test/directory", account: account, transport: ca, pollTimeout: .seconds(300))
        let manager = ACMEManager(
            settings: ACMESettings(), client: client, certificateDirectory: folder.path, logger: Logger(label: "test"),
            issued: { _ in })
        manager.update(domains: ["shop.example"], certificates: [])
        manager.start()
        #expect(DueQueueTests.waitFor(30) { ca.remaining < pending - 1 }, "the order never polled")
        let threads = manager.threadIDs
        let stopping = ContinuousClock.now
        manager.stop()
        let took = stopping.duration(to: .now)
        // Expected within a second (one wait between polls); without the stop, the poll runs for five minutes.
        #expect(took < .seconds(30), "stop took \(took)")
        #expect(threads.allSatisfy { !Self.isRunning($0) })
        #expect(manager.orderCounts.isEmpty, "\(manager.orderCounts)")
        #expect(manager.statuses["shop.example"]?.state != .failed)
    }

    @Test(arguments: Kind.allCases)
    func stopReturnsOnceTheWorkInProgressAndTheThreadsHaveEnded(kind: Kind) throws {
        let busy = try Self.make(kind)
        defer { busy.service.stop() }
        try busy.service.start()
        try busy.begin()
        #expect(busy.work.entered.wait(timeout: .now() + 30) == .success, "\(kind): the work never started")
        // Each thread's id is known once it runs.
        #expect(DueQueueTests.waitFor(30) { busy.threadIDs().allSatisfy { $0 != 0 } })
        let threads = busy.threadIDs()
        #expect(!threads.isEmpty && threads.allSatisfy(Self.isRunning), "\(kind): \(threads)")

        let stopping = ContinuousClock.now
        busy.service.stop()
        let took = stopping.duration(to: .now)
        // The work in progress (1 s) finished first; the bound is far above it, far below a hung join.
        #expect(busy.work.finished, "\(kind): stop returned before the work in progress ended")
        #expect(took < .seconds(20), "\(kind): stop took \(took)")
        let left = threads.filter(Self.isRunning)
        #expect(left.isEmpty, "\(kind): threads \(left) still run after stop returned")
        #expect(busy.threadIDs().isEmpty)
        // A second stop returns at once.
        let again = ContinuousClock.now
        busy.service.stop()
        #expect(again.duration(to: .now) < .seconds(2))
        _ = busy.keep
    }
}
