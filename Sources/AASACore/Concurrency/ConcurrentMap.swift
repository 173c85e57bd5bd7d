import Dispatch

extension Collection where Index == Int, Self: Sendable {
    /// `map`, with the elements spread over every processor; the results keep the collection's order.
    ///
    /// For loads of thousands of independent items (domain folders, certificate folders, GnuTLS imports,
    /// libmicrohttpd responses) that cost thousands of instructions or more each, so one item per work unit
    /// is fine.
    public func concurrentMap<T: Sendable>(_ transform: @escaping @Sendable (Element) -> T) -> [T] {
        guard count > 1 else { return map(transform) }
        let base = startIndex
        return [T](unsafeUninitializedCapacity: count) { buffer, initialized in
            // Each iteration initialises its own slot and nothing else, so the writes never overlap.
            let slots = UncheckedSlots(base: buffer.baseAddress!)
            DispatchQueue.concurrentPerform(iterations: count) { offset in
                (slots.base + offset).initialize(to: transform(self[base + offset]))
            }
            initialized = count
        }
    }
}

/// The result buffer of ``Swift/Collection/concurrentMap(_:)``, handed to the worker threads; each writes
/// only its own slot.
private struct UncheckedSlots<Element>: @unchecked Sendable {
    let base: UnsafeMutablePointer<Element>
}
