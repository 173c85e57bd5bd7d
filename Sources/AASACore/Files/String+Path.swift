extension String {
    /// `self + "/" + name`, made in one allocation of its final size.
    ///
    /// A load joins a folder and a name several times for every domain (its folders, its files, their watches), and
    /// `+` copies the folder into storage sized for it alone, then grows that storage again for each part: two
    /// allocations and two copies of the folder's bytes per join.
    public func joiningPath(_ name: String) -> String {
        let joined = utf8.withContiguousStorageIfAvailable { head in
            name.utf8.withContiguousStorageIfAvailable { tail in
                String(unsafeUninitializedCapacity: head.count + 1 + tail.count) { buffer in
                    guard let base = buffer.baseAddress else { return 0 }
                    if let start = head.baseAddress { base.initialize(from: start, count: head.count) }
                    base[head.count] = UInt8(ascii: "/")
                    if let start = tail.baseAddress {
                        (base + head.count + 1).initialize(from: start, count: tail.count)
                    }
                    return head.count + 1 + tail.count
                }
            }
        }
        return (joined ?? nil) ?? self + "/" + name
    }
}
