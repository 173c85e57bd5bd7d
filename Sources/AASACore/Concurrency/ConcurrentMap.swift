public import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension Collection where Index == Int, Self: Sendable {
    /// `map`, with the elements spread over every processor (or all but those it leaves); the results keep the
    /// collection's order.
    ///
    /// For loads of thousands of independent items (domain folders, certificate folders, GnuTLS imports,
    /// libmicrohttpd responses) that cost thousands of instructions or more each, so one item per work unit
    /// is fine.
    ///
    /// The calling thread takes items one at a time from a shared counter, and so does a helper on the global
    /// queue for each other processor it runs on, from whenever it starts. Two maps running side by side (a start
    /// reads the domains and the certificates at once) therefore share the processors while both have items, and
    /// the one that lasts longer gets them all once the other is done: `DispatchQueue.concurrentPerform` decides its
    /// width when it starts, and a map started while the other held every processor ran on one to its end.
    /// The caller waits for the items in progress, not for helpers: one that starts after every item was taken
    /// finds nothing to do, and a map inside another's item never waits for a thread that is not free.
    ///
    /// With `helpersAfter`, the helpers start only once that group is done, and until then the calling thread
    /// works alone: for a map beside another whose end must not wait for this one (a start's certificate half ends
    /// with serial work that otherwise runs after the domains instead of beside them).
    ///
    /// With `leaving`, that many processors are left to work running beside the map: it runs on at most the others,
    /// and always on the calling thread. A start reads the certificates beside the domains' thread: on every
    /// processor, one of them would share a core with it, and each preemption of a thread holding an allocator's
    /// arena lock stalls the threads waiting for it.
    public func concurrentMap<T: Sendable>(
        helpersAfter group: DispatchGroup? = nil, leaving reserved: Int = 0,
        _ transform: @escaping @Sendable (Element) -> T
    ) -> [T] {
        guard count > 1 else { return map(transform) }
        let base = startIndex
        let total = count
        let threads = Swift.min(Swift.max(1, MapProgress.processors - Swift.max(0, reserved)), total)
        return [T](unsafeUninitializedCapacity: total) { buffer, initialized in
            let progress = MapProgress()
            // Each item initialises its own slot and nothing else, so the writes never overlap.
            let slots = UncheckedSlots(base: buffer.baseAddress!)
            let work = { @Sendable in
                while true {
                    let offset = progress.taken.wrappingAdd(1, ordering: .relaxed).oldValue
                    guard offset < total else { return }
                    (slots.base + offset).initialize(to: transform(self[base + offset]))
                    if progress.done.wrappingAdd(1, ordering: .acquiringAndReleasing).newValue == total {
                        progress.finished.signal()
                    }
                }
            }
            for _ in 1..<threads {
                if let group {
                    group.notify(queue: .global(), execute: work)
                } else {
                    DispatchQueue.global().async(execute: work)
                }
            }
            work()
            progress.finished.wait()
            initialized = total
        }
    }
}

/// The counters one ``Swift/Collection/concurrentMap(helpersAfter:leaving:_:)`` shares between its threads.
private final class MapProgress: Sendable {
    /// Items handed out (one past the last when every item is taken).
    let taken = Atomic<Int>(0)
    /// Items whose result is written.
    let done = Atomic<Int>(0)
    /// Signalled once, by whichever thread writes the last result.
    let finished = DispatchSemaphore(value: 0)

    /// The processors this process may run on.
    static let processors = Swift.max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
}

/// The result buffer of ``Swift/Collection/concurrentMap(helpersAfter:leaving:_:)``, handed to the worker threads;
/// each writes only its own slot.
private struct UncheckedSlots<Element>: @unchecked Sendable {
    let base: UnsafeMutablePointer<Element>
}
