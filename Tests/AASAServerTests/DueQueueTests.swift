import AASATestSupport
import Foundation
import Logging
import Synchronization
import Testing

@testable import AASAServer

/// The one due-queue worker of ACME and the CDN check: items run in the order they fall due, an item made due
/// earlier wakes the waiting workers, and stop joins them.
@Suite struct DueQueueTests {
    /// An item due at `due` (`nil`: never), taken once.
    struct Item: Sendable {
        var due: Date?
    }

    /// A queue whose claim makes an item not due again, and whose work records the keys it ran.
    static func queue(workers: Int = 1) -> DueQueue<String, Item> {
        DueQueue(
            threadNames: (0..<workers).map { "due-test-\($0)" }, logger: Logger(label: "test"), due: { $0.due },
            claim: { _, item, _ in item.due = nil })
    }

    static func waitFor(_ seconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = TestTime.deadline(seconds)
        while !condition() {
            if Date() > deadline { return false }
            usleep(5_000)
        }
        return true
    }

    @Test(
        arguments: [
            // Offsets from now in tenths of a second, by key; `nil`: never due. Runs in the order of the offsets.
            (["a": 3, "b": 1, "c": 2, "never": nil], ["b", "c", "a"]),
            (["late": 4, "overdue": -50, "now": 0], ["overdue", "now", "late"]),
        ] as [([String: Int?], [String])])
    func itemsRunInTheOrderTheyFallDue(offsets: [String: Int?], expected: [String]) {
        let queue = Self.queue()
        let ran = Mutex<[String]>([])
        let now = Date()
        queue.withItems { items in
            for (key, offset) in offsets {
                items[key] = Item(due: offset.map { now.addingTimeInterval(Double($0) / 10) })
            }
        }
        queue.start { key in ran.withLock { $0.append(key) } }
        defer { queue.stop() }
        #expect(Self.waitFor(30) { ran.withLock { $0.count } == expected.count })
        usleep(200_000)
        #expect(ran.withLock { $0 } == expected)
    }

    @Test func anItemMadeDueEarlierWakesTheWaitingWorker() {
        let queue = Self.queue()
        let ran = Mutex<[(String, Date)]>([])
        queue.withItems { $0["in an hour"] = Item(due: Date().addingTimeInterval(3600)) }
        queue.start { key in ran.withLock { $0.append((key, Date())) } }
        defer { queue.stop() }
        // The worker now waits for the hour; an item due now must not wait for it.
        usleep(100_000)
        let added = Date()
        queue.withItems { $0["now"] = Item(due: added) }
        #expect(Self.waitFor(30) { !ran.withLock { $0.isEmpty } })
        let first = ran.withLock { $0.first }
        #expect(first?.0 == "now")
        // Expected within milliseconds; a worker that slept until its earlier deadline would take an hour.
        #expect((first?.1.timeIntervalSince(added) ?? 99) < 10)
        #expect(ran.withLock { $0.count } == 1)
    }

    @Test func stopReturnsOnceTheWorkersHaveEnded() {
        let queue = Self.queue(workers: 3)
        let entered = DispatchSemaphore(value: 0)
        let finished = Mutex(false)
        queue.withItems { $0["slow"] = Item(due: Date()) }
        queue.start { _ in
            entered.signal()
            Thread.sleep(forTimeInterval: 1)
            finished.withLock { $0 = true }
        }
        #expect(entered.wait(timeout: .now() + 30) == .success)
        // Each worker's id is known once its thread runs.
        #expect(Self.waitFor(30) { queue.threadIDs.allSatisfy { $0 != 0 } })
        let threads = queue.threadIDs
        #expect(threads.count == 3)
        queue.stop()
        #expect(finished.withLock { $0 }, "stop returned before the item in progress ended")
        #expect(threads.allSatisfy { !FileManager.default.fileExists(atPath: "/proc/self/task/\($0)") })
        // Stopped: an item due now is not run, and starting again does nothing.
        queue.withItems { $0["after"] = Item(due: Date()) }
        queue.start { _ in Issue.record("a stopped queue ran an item") }
        usleep(200_000)
        #expect(queue.threadIDs.isEmpty)
    }

    @Test func pauseEndsAtStop() {
        let queue = Self.queue()
        let paused = Mutex<(Bool, Double)?>(nil)
        queue.withItems { $0["rate"] = Item(due: Date()) }
        queue.start { _ in
            let start = Date()
            let running = queue.pause(until: start.addingTimeInterval(3600))
            paused.withLock { $0 = (running, Date().timeIntervalSince(start)) }
        }
        usleep(200_000)
        queue.stop()
        let result = paused.withLock { $0 }
        #expect(result?.0 == false)
        // A pause of an hour ended by the stop: well under the hour, whatever the machine's load.
        #expect((result?.1 ?? 3600) < 60)
    }
}
