extension String {
    /// `self + "/" + name`, made in one allocation of its final size.
    ///
    /// A load joins a folder and a name several times for every domain (its folders, its files, their watches), and
    /// `+` copies the folder into storage sized for it alone, then grows that storage again for each part: two
    /// allocations and two copies of the folder's bytes per join.
    public func joiningPath(_ name: String) -> String {
        let joined = utf8.withContiguousStorageIfAvailable { head in
            name.utf8.withContiguousStorageIfAvailable { tail in
                String(unsafeUninitializedCapacity: head.count + 1 + tail.count) { path in
                    let slash = path.initialize(fromContentsOf: head)
                    path[slash] = UInt8(ascii: "/")
                    return path[(slash + 1)...].initialize(fromContentsOf: tail)
                }
            }
        }
        // Both are contiguous UTF-8 but for a string bridged from Objective-C.
        if let outer = joined, let joined = outer { return joined }
        return self + "/" + name
    }
}
