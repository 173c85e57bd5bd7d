/// A dictionary whose copies share storage bucket by bucket: changing one key of a copy copies one small bucket
/// (and an array of bucket references), not the whole dictionary.
///
/// For what a reload hands to the listeners and keeps changing afterwards (every domain's published version, the
/// SNI table's names): the snapshot being served and the next one share every bucket no change touched, so the
/// cost of a reload follows the number of changes, not of domains. Buckets are immutable once shared and changed
/// in place while only one dictionary holds them (as `Dictionary` is). The bucket count doubles as the dictionary
/// grows, keeping buckets at most ``bucketCapacity`` entries on average.
public struct PersistentDictionary<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// One bucket's entries. `@unchecked Sendable`: its dictionary is changed only while one dictionary holds it
    /// (`isKnownUniquelyReferenced`), and a dictionary being changed is not shared with another thread.
    @usableFromInline
    final class Bucket: @unchecked Sendable {
        @usableFromInline var items: [Key: Value]
        @usableFromInline init(_ items: [Key: Value] = [:]) { self.items = items }
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
    public init(_ entries: some Sequence<(Key, Value)>) {
        for (key, value) in entries { self[key] = value }
    }

    /// Whether the dictionary is empty.
    public var isEmpty: Bool { count == 0 }

    /// The value for `key`; assigning `nil` removes it.
    @inlinable
    public subscript(key: Key) -> Value? {
        get { buckets[index(of: key)].items[key] }
        set {
            let index = index(of: key)
            if !isKnownUniquelyReferenced(&buckets[index]) { buckets[index] = Bucket(buckets[index].items) }
            let bucket = buckets[index]
            let before = bucket.items.count
            bucket.items[key] = newValue
            storedCount += bucket.items.count - before
            if storedCount > buckets.count * Self.bucketCapacity { grow() }
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
        buckets[index(of: key)].items.index(forKey: key) != nil
    }

    /// Every key, in no particular order.
    @inlinable public var keys: [Key] { buckets.flatMap { $0.items.keys } }

    /// Every value, in no particular order.
    @inlinable public var values: [Value] { buckets.flatMap { $0.items.values } }

    /// A `Dictionary` with the same entries.
    public var dictionary: [Key: Value] {
        var result: [Key: Value] = [:]
        result.reserveCapacity(count)
        for bucket in buckets { result.merge(bucket.items) { _, new in new } }
        return result
    }

    @inlinable
    func index(of key: Key) -> Int {
        key.hashValue & (buckets.count - 1)
    }

    /// Doubles the bucket count and moves every entry to its new bucket.
    @usableFromInline
    mutating func grow() {
        let old = buckets
        buckets = (0..<old.count * 2).map { _ in Bucket() }
        for bucket in old {
            for (key, value) in bucket.items { buckets[index(of: key)].items[key] = value }
        }
    }
}

extension PersistentDictionary: Sequence {
    /// Iterates the entries bucket by bucket, in no particular order.
    public func makeIterator() -> some IteratorProtocol<(key: Key, value: Value)> {
        buckets.lazy.flatMap { $0.items.lazy.map { (key: $0.key, value: $0.value) } }.makeIterator()
    }
}
