/// A dictionary whose copies share storage bucket by bucket: changing one key of a copy copies one small bucket
/// (and an array of bucket references), not the whole dictionary.
///
/// For what a reload hands to the listeners and keeps changing afterwards (every domain's published version, the
/// SNI table's names): the snapshot being served and the next one share every bucket no change touched, so the
/// cost of a reload follows the number of changes, not of domains. Buckets are immutable once shared and changed
/// in place while only one dictionary holds them (as `Dictionary` is). The bucket count doubles as the dictionary
/// grows, keeping buckets at most ``bucketCapacity`` entries on average.
///
/// A bucket keeps its entries dense, in two arrays, and hashes only each key's position: a hash table is between
/// three eighths and three quarters full, and the values this holds are large (a domain's load result is 640
/// bytes), so values stored in the table's slots would leave as much memory empty as they fill.
public struct PersistentDictionary<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// One bucket's entries. `@unchecked Sendable`: it is changed only while one dictionary holds it
    /// (`isKnownUniquelyReferenced`), and a dictionary being changed is not shared with another thread.
    @usableFromInline
    final class Bucket: @unchecked Sendable {
        /// Each key's position in ``keys`` and ``values``.
        @usableFromInline var positions: [Key: Int]
        @usableFromInline var keys: [Key]
        @usableFromInline var values: [Value]

        @usableFromInline init(capacity: Int = 0) {
            positions = Dictionary(minimumCapacity: capacity)
            keys = []
            values = []
            keys.reserveCapacity(capacity)
            values.reserveCapacity(capacity)
        }

        @usableFromInline init(copying other: Bucket) {
            positions = other.positions
            keys = other.keys
            values = other.values
        }

        @inlinable func value(for key: Key) -> Value? {
            positions[key].map { values[$0] }
        }

        /// Sets or removes `key`'s value; returns the change in the entry count (-1, 0 or 1).
        @inlinable func set(_ key: Key, _ value: Value?) -> Int {
            if let position = positions[key] {
                if let value {
                    values[position] = value
                    return 0
                }
                positions[key] = nil
                let last = keys.count - 1
                if position != last {
                    keys.swapAt(position, last)
                    values.swapAt(position, last)
                    positions[keys[position]] = position
                }
                keys.removeLast()
                values.removeLast()
                return -1
            }
            guard let value else { return 0 }
            positions[key] = keys.count
            keys.append(key)
            values.append(value)
            return 1
        }
    }

    /// Average entries per bucket before the bucket count doubles.
    @inlinable public static var bucketCapacity: Int { 64 }

    // Inlinable, so each user of the dictionary gets it specialised for its key and value: unspecialised, every
    // lookup copies the value through a value witness, which for a large struct costs more than the lookup.
    @usableFromInline var buckets: [Bucket] = [Bucket()]
    @usableFromInline var storedCount = 0
    /// The number of entries.
    @inlinable public var count: Int { storedCount }

    /// An empty dictionary.
    public init() {}

    /// A dictionary of `entries`; a key given twice keeps its last value.
    @inlinable
    public init(_ entries: some Sequence<(Key, Value)>) {
        reserveCapacity(entries.underestimatedCount)
        for (key, value) in entries { self[key] = value }
    }

    /// Whether the dictionary is empty.
    public var isEmpty: Bool { count == 0 }

    /// The value for `key`; assigning `nil` removes it.
    @inlinable
    public subscript(key: Key) -> Value? {
        get { buckets[index(of: key)].value(for: key) }
        set {
            let index = index(of: key)
            if !isKnownUniquelyReferenced(&buckets[index]) { buckets[index] = Bucket(copying: buckets[index]) }
            storedCount += buckets[index].set(key, newValue)
            if storedCount > buckets.count * Self.bucketCapacity { grow(toHold: storedCount) }
        }
    }

    /// The value for `key`, or `defaultValue`, for in-place updates (`dictionary[key, default: 0] += 1`).
    public subscript(key: Key, default defaultValue: @autoclosure () -> Value) -> Value {
        get { self[key] ?? defaultValue() }
        set { self[key] = newValue }
    }

    /// Removes `key`, returning its value.
    @discardableResult
    public mutating func removeValue(forKey key: Key) -> Value? {
        let value = self[key]
        if value != nil { self[key] = nil }
        return value
    }

    /// Whether `key` has a value, without copying the value.
    @inlinable
    public func contains(_ key: Key) -> Bool {
        buckets[index(of: key)].positions[key] != nil
    }

    /// Makes room for `count` entries at once, so that adding them does not redistribute the entries as the
    /// bucket count doubles on the way (a start adds every domain to an empty dictionary).
    public mutating func reserveCapacity(_ count: Int) {
        if count > buckets.count * Self.bucketCapacity { grow(toHold: count) }
    }

    /// Every key, in no particular order.
    @inlinable public var keys: [Key] { buckets.flatMap(\.keys) }

    /// Every value, in no particular order.
    @inlinable public var values: [Value] { buckets.flatMap(\.values) }

    /// A `Dictionary` with the same entries.
    public var dictionary: [Key: Value] {
        var result: [Key: Value] = [:]
        result.reserveCapacity(count)
        for bucket in buckets {
            for (key, value) in zip(bucket.keys, bucket.values) { result[key] = value }
        }
        return result
    }

    @inlinable
    func index(of key: Key) -> Int {
        key.hashValue & (buckets.count - 1)
    }

    /// Doubles the bucket count until `count` entries average at most half of ``bucketCapacity`` per bucket,
    /// and moves every entry to its new bucket. Each bucket is sized for the entries it receives plus its share
    /// (and a quarter more) of the entries still to come, when `count` reserves room ahead.
    @usableFromInline
    mutating func grow(toHold count: Int) {
        var bucketCount = buckets.count * 2
        while count > bucketCount * Self.bucketCapacity / 2 { bucketCount *= 2 }
        let old = buckets
        let mask = bucketCount - 1
        var sizes = [Int](repeating: 0, count: bucketCount)
        for bucket in old {
            for key in bucket.keys { sizes[key.hashValue & mask] += 1 }
        }
        let ahead = (count - storedCount) * 5 / 4 / bucketCount
        buckets = sizes.map { Bucket(capacity: $0 + ahead) }
        for bucket in old {
            for (key, value) in zip(bucket.keys, bucket.values) { _ = buckets[key.hashValue & mask].set(key, value) }
        }
    }
}

extension PersistentDictionary: Sequence {
    /// Iterates the entries bucket by bucket, in no particular order.
    public func makeIterator() -> some IteratorProtocol<(key: Key, value: Value)> {
        buckets.lazy.flatMap { bucket in
            zip(bucket.keys, bucket.values).lazy.map { (key: $0.0, value: $0.1) }
        }.makeIterator()
    }
}
