import AASACore
import Dispatch
import Foundation
import Synchronization
import Testing

/// A handover's waiters all get the one value given, whether they wait before or after it is given, and its group
/// starts what waits on it only then.
@Suite struct HandoverTests {
    @Test func everyWaiterGetsTheValueGivenOnce() {
        let handover = Handover<[Int]>()
        let seen = Mutex<[[Int]]>([])
        let waiters = DispatchGroup()
        for _ in 0..<8 {
            DispatchQueue.global().async(group: waiters) {
                let value = handover.value
                seen.withLock { $0.append(value) }
            }
        }
        let notified = Atomic<Bool>(false)
        let notice = DispatchSemaphore(value: 0)
        handover.given.notify(queue: .global()) {
            notified.store(true, ordering: .relaxed)
            notice.signal()
        }
        usleep(50_000)
        #expect(seen.withLock { $0.isEmpty })
        let notifiedEarly = notified.load(ordering: .relaxed)
        #expect(!notifiedEarly)
        handover.give([1, 2, 3])
        #expect(waiters.wait(timeout: .now() + 10) == .success)
        #expect(seen.withLock { $0 } == Array(repeating: [1, 2, 3], count: 8))
        #expect(handover.value == [1, 2, 3])
        // The notice runs on a shared queue, which a busy test run may hold up: waited for, not slept on.
        #expect(notice.wait(timeout: .now() + 10) == .success)
        let notifiedLate = notified.load(ordering: .relaxed)
        #expect(notifiedLate)
    }

    @Test func concurrentlyReturnsBothHalvesAndHandsTheForegroundTheBackgroundsEnd() {
        let (background, foreground) = concurrently({ () -> Int in
            usleep(20_000)
            return 7
        }) { backgroundDone -> Bool in
            backgroundDone.wait(timeout: .now() + 10) == .success
        }
        #expect(background == 7)
        #expect(foreground)
    }
}
