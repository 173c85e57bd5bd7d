import AASACore
import Foundation
import Synchronization
import Testing

/// The joinable thread every background service runs on: join waits for the body and the thread, and a thread
/// that joins itself is not left waiting for itself.
@Suite struct ServiceThreadTests {
    static func isRunning(_ thread: Int32) -> Bool {
        FileManager.default.fileExists(atPath: "/proc/self/task/\(thread)")
    }

    @Test func joinReturnsOnceTheBodyAndTheThreadHaveEnded() throws {
        let started = DispatchSemaphore(value: 0)
        let finished = Mutex(false)
        let thread = try ServiceThread(name: "join-test") {
            started.signal()
            Thread.sleep(forTimeInterval: 0.5)
            finished.withLock { $0 = true }
        }
        #expect(started.wait(timeout: .now() + 30) == .success)
        let id = thread.threadID
        #expect(id != 0 && Self.isRunning(id))
        let name = try String(contentsOfFile: "/proc/self/task/\(id)/comm", encoding: .utf8)
        #expect(name == "join-test\n")
        #expect(!thread.isCurrent)
        thread.join()
        #expect(finished.withLock { $0 })
        #expect(!Self.isRunning(id), "the thread still runs after join returned")
        #expect(thread.threadID == 0)
        // Joined once: a second join returns at once.
        thread.join()
    }

    @Test func aThreadThatJoinsItselfGoesOnAndOthersWaitForItsBody() throws {
        let holder = Mutex<ServiceThread?>(nil)
        let ready = DispatchSemaphore(value: 0)
        let selfJoined = DispatchSemaphore(value: 0)
        let finished = Mutex(false)
        let thread = try ServiceThread(name: "self-join-test") {
            ready.wait()
            let me = holder.withLock { $0 }
            #expect(me?.isCurrent == true)
            me?.join()
            selfJoined.signal()
            Thread.sleep(forTimeInterval: 0.5)
            finished.withLock { $0 = true }
        }
        holder.withLock { $0 = thread }
        ready.signal()
        // Had the self-join waited for itself, this would time out.
        #expect(selfJoined.wait(timeout: .now() + 30) == .success)
        thread.join()
        #expect(finished.withLock { $0 }, "join returned before the body of a self-detached thread ended")
        holder.withLock { $0 = nil }
    }
}
