import AASATestSupport
import Dispatch
import Foundation
import Synchronization
import Testing

@testable import AASACore

/// `concurrentMap` keeps order, uses more than one thread, survives maps inside maps and maps side by side, and
/// lets a map that outlasts another take over its threads.
@Suite struct ConcurrentMapTests {
    @Test func keepsTheOrderOfTheItems() {
        let items = Array(0..<10_000)
        #expect(items.concurrentMap { $0 * 3 } == items.map { $0 * 3 })
        #expect([7].concurrentMap { $0 + 1 } == [8])
        #expect([Int]().concurrentMap { $0 } == [])
    }

    @Test func mapsInsideMapsAndSideBySideFinish() {
        // Every item of the outer maps runs an inner map: each waits only for items in progress, never for a
        // helper that has no thread to run on.
        let outer = Array(0..<64)
        let group = DispatchGroup()
        let sideBySide = Mutex<[Int]>([])
        for _ in 0..<4 {
            DispatchQueue.global().async(group: group) {
                let sums = outer.concurrentMap { item in Array(0..<200).concurrentMap { $0 + item }.reduce(0, +) }
                sideBySide.withLock { $0.append(sums.reduce(0, +)) }
            }
        }
        let expected = outer.map { item in (0..<200).reduce(0) { $0 + $1 + item } }.reduce(0, +)
        #expect(group.wait(timeout: .now() + 60) == .success)
        #expect(sideBySide.withLock { $0 } == Array(repeating: expected, count: 4))
    }

    @Test func aLongerMapTakesOverTheThreadsOfAShorterOne() throws {
        // A short map and a long one start together; once the short one is done, the long one runs on more than
        // one thread (DispatchQueue.concurrentPerform kept the width it started with). On a loaded machine the
        // long map's helper may be scheduled late, so the long map lasts until a second thread shows up (or a
        // bound far above any scheduling delay): its items stop sleeping once one has.
        guard ProcessInfo.processInfo.processorCount > 1 else { return }
        let threads = Mutex<Set<Int>>([])
        let shortDone = Atomic<Bool>(false)
        let deadline = TestTime.deadline(30)
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) {
            _ = Array(0..<100_000).concurrentMap { item in
                guard shortDone.load(ordering: .relaxed) else {
                    usleep(500)
                    return item
                }
                let thread = Thread.current.hashValue
                let seen = threads.withLock {
                    $0.insert(thread); return $0.count
                }
                if seen < 2, Date() < deadline { usleep(500) }
                return item
            }
        }
        _ = Array(0..<200).concurrentMap { item in
            usleep(500)
            return item
        }
        shortDone.store(true, ordering: .relaxed)
        #expect(group.wait(timeout: .now() + 90) == .success)
        #expect(threads.withLock { $0.count } > 1)
    }

    /// With `leaving`, the map runs on at most the processors it does not leave, and always on the calling thread.
    @Test func leavesTheProcessorsItIsAskedTo() {
        // What the map counts: the processors online.
        let processors = max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        let caller = Thread.current.hashValue
        for leaving in [processors, processors + 3, processors - 1, 0] where leaving >= 0 {
            let threads = Mutex<Set<Int>>([])
            let running = Atomic<Int>(0)
            let mostAtOnce = Atomic<Int>(0)
            let results = Array(0..<400).concurrentMap(leaving: leaving) { item in
                threads.withLock { _ = $0.insert(Thread.current.hashValue) }
                let now = running.wrappingAdd(1, ordering: .relaxed).newValue
                _ = mostAtOnce.max(now, ordering: .relaxed)
                usleep(200)
                running.wrappingSubtract(1, ordering: .relaxed)
                return item + 1
            }
            #expect(results == (1...400).map { $0 })
            let allowed = max(1, processors - leaving)
            #expect(mostAtOnce.load(ordering: .relaxed) <= allowed, "leaving \(leaving) of \(processors)")
            #expect(threads.withLock { $0.count } <= allowed)
            if allowed == 1 { #expect(threads.withLock { $0 } == [caller]) }
        }
    }

    /// With `helpersAfter`, the caller works alone until the group is done, then the helpers join in.
    @Test func helpersWaitForTheGroupTheyAreGiven() throws {
        guard ProcessInfo.processInfo.processorCount > 1 else { return }
        let other = DispatchGroup()
        other.enter()
        let caller = Thread.current.hashValue
        let before = Mutex<Set<Int>>([])
        let after = Mutex<Set<Int>>([])
        let released = Atomic<Bool>(false)
        // On a loaded machine the helpers may be scheduled late: once released, the caller waits (up to a bound far
        // above any scheduling delay) for a helper's first item, so it cannot take every item before they start.
        let deadline = TestTime.deadline(30)
        let results = Array(0..<2000).concurrentMap(helpersAfter: other) { item in
            let thread = Thread.current.hashValue
            if released.load(ordering: .relaxed) {
                after.withLock { _ = $0.insert(thread) }
                while thread == caller, after.withLock({ $0.subtracting([caller]).isEmpty }), Date() < deadline {
                    usleep(1_000)
                }
            } else {
                before.withLock { _ = $0.insert(thread) }
            }
            if item == 200 {
                released.store(true, ordering: .relaxed)
                other.leave()
            }
            usleep(500)
            return item * 2
        }
        #expect(results == (0..<2000).map { $0 * 2 })
        #expect(before.withLock { $0 } == [caller])
        #expect(after.withLock { $0.subtracting([caller]).count } >= 1)
    }
}
