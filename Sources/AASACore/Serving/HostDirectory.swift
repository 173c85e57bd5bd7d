/// Values by host name, as ``HostTable`` keeps them, split into buckets by a seeded hash of the name, so a new
/// directory with a few names changed rebuilds only their buckets and shares every other one.
///
/// What a reload needs at 100,000 domains: the route table of the next snapshot differs from the one being
/// served by the domains that changed, and building it must cost in proportion to them. A lookup pays one more
/// array read than a single table's (the bucket), which is in cache.
struct HostDirectory<Value: Sendable>: Sendable {
    private let buckets: [HostTable<Value>]
    private let seed: UInt64
    /// How many names the directory holds.
    let count: Int

    /// Names per bucket a directory is built for; it rebuilds with more buckets at four times as many.
    static var bucketSize: Int { 128 }

    /// The directory of `entries`; a name given twice keeps its first value. Names are used as they are
    /// (normalise them first, as requests are: ``HostName``).
    init(_ entries: some Sequence<(name: String, value: Value)>) {
        let entries = Array(entries)
        var bucketCount = 1
        while bucketCount * Self.bucketSize < entries.count { bucketCount <<= 1 }
        let seed = UInt64.random(in: .min ... .max)
        var grouped = [[(name: String, value: Value)]](repeating: [], count: bucketCount)
        for entry in entries { grouped[Self.bucket(of: entry.name, seed: seed, count: bucketCount)].append(entry) }
        buckets = grouped.map { HostTable($0) }
        self.seed = seed
        count = buckets.reduce(0) { $0 + $1.count }
    }

    private init(buckets: [HostTable<Value>], seed: UInt64, count: Int) {
        self.buckets = buckets
        self.seed = seed
        self.count = count
    }

    /// The value for the host `name` (exact bytes), if any.
    @inline(__always)
    subscript(name: UnsafeRawBufferPointer) -> Value? {
        buckets[Int(truncatingIfNeeded: HostTable<Value>.hash(name, seed: seed)) & (buckets.count - 1)][name]
    }

    /// The value for `name`.
    subscript(name: String) -> Value? {
        var name = name
        return name.withUTF8 { self[UnsafeRawBufferPointer($0)] }
    }

    /// Every name and its value, bucket by bucket.
    var entries: [(name: String, value: Value)] { buckets.flatMap(\.entries) }

    /// The directory with `changes` applied: a name with a value gets it (added or replaced), a name with `nil`
    /// is removed. Only the buckets of changed names are rebuilt, unless the directory outgrew its buckets.
    func updating(_ changes: [(name: String, value: Value?)]) -> Self {
        var touched: [Int: [(name: String, value: Value?)]] = [:]
        for change in changes {
            touched[Self.bucket(of: change.name, seed: seed, count: buckets.count), default: []].append(change)
        }
        var buckets = self.buckets
        var count = self.count
        for (index, bucketChanges) in touched {
            var entries = buckets[index].entries
            let changed = Dictionary(bucketChanges.map { ($0.name, $0.value) }) { _, last in last }
            entries.removeAll { changed[$0.name] != nil }
            entries += changed.compactMap { name, value in value.map { (name, $0) } }
            count += entries.count - buckets[index].count
            buckets[index] = HostTable(entries)
        }
        guard count <= buckets.count * Self.bucketSize * 4 else {
            return Self(buckets.flatMap(\.entries))
        }
        return Self(buckets: buckets, seed: seed, count: count)
    }

    private static func bucket(of name: String, seed: UInt64, count: Int) -> Int {
        var name = name
        return name.withUTF8 { Int(truncatingIfNeeded: HostTable<Value>.hash(UnsafeRawBufferPointer($0), seed: seed)) }
            & (count - 1)
    }
}
