/// A dictionary whose copies share storage bucket by bucket: changing one key of a copy copies one small bucket
/// (and an array of bucket references), not the whole dictionary.
///
/// For what a reload hands to the listeners and keeps changing afterwards (every domain's published version, the
/// SNI table's names): the snapshot being served and the next one share every bucket no change touched, so the
/// cost of a reload follows the number of changes, not of domains. Buckets are immutable once shared and changed
/// in place while only one dictionary holds them (as `Dictionary` is). The bucket count doubles as the dictionary
/// grows, keeping buckets at most ``bucketCapacity`` entries on average.
///
/// A bucket keeps its entries dense, in two arrays, and indexes them with a small open-addressing table of their
/// positions (4 bytes a slot, at most half full): a hash table of the values themselves would leave as much memory
/// empty as it fills (a domain's load result is 640 bytes), and one of keys and positions costs about 40 bytes an
/// entry, for each of the dozen maps a server keeps by domain.
public struct PersistentDictionary<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// One bucket's entries. `@unchecked Sendable`: it is changed only while one dictionary holds it
    /// (`isKnownUniquelyReferenced`), and a dictionary being changed is not shared with another thread.
    @usableFromInline
    final class Bucket: @unchecked Sendable {
        /// Linear probing over the entries: each slot holds a position in ``keys`` and ``values`` plus one, 0 when
        /// empty. A power of two of slots (none while the bucket is empty), at least twice the entries.
        @usableFromInline var slots: [UInt32]
        @usableFromInline var keys: [Key]
        @usableFromInline var values: [Value]

        /// An empty bucket with room for `capacity` entries.
        @usableFromInline init(capacity: Int = 0) {
            keys = []
            values = []
            keys.reserveCapacity(capacity)
            values.reserveCapacity(capacity)
            slots = [UInt32](repeating: 0, count: Self.slotCount(for: capacity))
        }

        @usableFromInline init(copying other: Bucket) {
            slots = other.slots
            keys = other.keys
            values = other.values
        }

        /// The slots for `count` entries: the least power of two at least twice `count`.
        @inlinable static func slotCount(for count: Int) -> Int {
            count == 0 ? 0 : Swift.max(4, 1 << (Int.bitWidth - (2 * count - 1).leadingZeroBitCount))
        }

        /// The first slot a key of hash value `hash` probes: from the hash's high bits, since the low ones chose
        /// the bucket.
        @inlinable static func home(_ hash: Int, mask: Int) -> Int {
            Int(truncatingIfNeeded: UInt64(UInt(bitPattern: hash)) &>> 32) & mask
        }

        /// `key`'s position in ``keys`` and ``values``, if it is here; `hash` is its hash value, which every
        /// operation computes once (a domain name's costs more than the probing).
        @inlinable func position(of key: Key, hash: Int) -> Int? {
            guard !slots.isEmpty else { return nil }
            let mask = slots.count - 1
            var slot = Self.home(hash, mask: mask)
            while slots[slot] != 0 {
                let position = Int(slots[slot]) - 1
                if keys[position] == key { return position }
                slot = (slot + 1) & mask
            }
            return nil
        }

        /// The slot holding `position`, which is that of a key of hash value `hash`.
        @inlinable func slot(holding position: Int, hash: Int) -> Int {
            let mask = slots.count - 1
            var slot = Self.home(hash, mask: mask)
            while Int(slots[slot]) - 1 != position { slot = (slot + 1) & mask }
            return slot
        }

        @inlinable func value(for key: Key, hash: Int) -> Value? {
            position(of: key, hash: hash).map { values[$0] }
        }

        /// Sets or removes `key`, of hash value `hash`; returns the change in the entry count (-1, 0 or 1).
        @inlinable func set(_ key: Key, _ value: Value?, hash: Int) -> Int {
            if let position = position(of: key, hash: hash) {
                if let value {
                    values[position] = value
                    return 0
                }
                remove(at: position, hash: hash)
                return -1
            }
            guard let value else { return 0 }
            if keys.count == keys.capacity {
                // A quarter more room, not twice as much: a bucket fills once, at a start, and is kept as it is.
                let room = keys.count + keys.count / 4 + 1
                keys.reserveCapacity(room)
                values.reserveCapacity(room)
            }
            if 2 * (keys.count + 1) > slots.count { reindex(toHold: keys.count + 1) }
            let mask = slots.count - 1
            var slot = Self.home(hash, mask: mask)
            while slots[slot] != 0 { slot = (slot + 1) & mask }
            slots[slot] = UInt32(keys.count + 1)
            keys.append(key)
            values.append(value)
            return 1
        }

        /// Removes the entry at `position`, whose key's hash value is `hash`: the last entry takes its place, and
        /// the slots after its own move back to where their keys would probe from (deletion without tombstones).
        @usableFromInline func remove(at position: Int, hash: Int) {
            let mask = slots.count - 1
            var empty = slot(holding: position, hash: hash)
            slots[empty] = 0
            var next = (empty + 1) & mask
            while slots[next] != 0 {
                let home = Self.home(keys[Int(slots[next]) - 1].hashValue, mask: mask)
                // The entry at `next` may fill the gap when its home is not cyclically within (empty, next].
                if (next - home) & mask >= (next - empty) & mask {
                    slots[empty] = slots[next]
                    slots[next] = 0
                    empty = next
                }
                next = (next + 1) & mask
            }
            let last = keys.count - 1
            if position != last {
                slots[slot(holding: last, hash: keys[last].hashValue)] = UInt32(position + 1)
                keys.swapAt(position, last)
                values.swapAt(position, last)
            }
            keys.removeLast()
            values.removeLast()
        }

        /// Rebuilds the slots for `count` entries.
        @usableFromInline func reindex(toHold count: Int) {
            slots = [UInt32](repeating: 0, count: Self.slotCount(for: count))
            let mask = slots.count - 1
            for (position, key) in keys.enumerated() {
                var slot = Self.home(key.hashValue, mask: mask)
                while slots[slot] != 0 { slot = (slot + 1) & mask }
                slots[slot] = UInt32(position + 1)
            }
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

    /// A dictionary of `entries`; a key given twice keeps its last value. `entries` is read twice: pass an array
    /// when making an entry costs more than a copy.
    @inlinable
    public init(_ entries: some Collection<(Key, Value)>) {
        let hashes = entries.map(\.0.hashValue)
        self.init(bucketsFor: hashes)
        let mask = buckets.count - 1
        for ((key, value), hash) in zip(entries, hashes) {
            storedCount += buckets[hash & mask].set(key, value, hash: hash)
        }
    }

    /// A dictionary of `values`, each under the key `key` reads from it; a key given twice keeps its last value.
    /// As ``init(_:)``, but each value is copied once, into its bucket, and not first into a pair (a domain's load
    /// result is a dozen references, each retained and released again by a copy).
    @inlinable
    public init(_ values: [Value], keyedBy key: (Value) -> Key) {
        let hashes = values.indices.map { key(values[$0]).hashValue }
        self.init(bucketsFor: hashes)
        let mask = buckets.count - 1
        for index in values.indices {
            let hash = hashes[index]
            storedCount += buckets[hash & mask].set(key(values[index]), values[index], hash: hash)
        }
    }

    /// Empty, with each bucket made for exactly the entries of hash values `hashes` it will get (counted by bucket
    /// first), so a start's maps hold no room for entries to come.
    @inlinable
    init(bucketsFor hashes: [Int]) {
        var bucketCount = 1
        while hashes.count > bucketCount * Self.bucketCapacity / 2 { bucketCount *= 2 }
        let mask = bucketCount - 1
        var sizes = [Int](repeating: 0, count: bucketCount)
        for hash in hashes { sizes[hash & mask] += 1 }
        buckets = sizes.map { Bucket(capacity: $0) }
    }

    /// Whether the dictionary is empty.
    public var isEmpty: Bool { count == 0 }

    /// The value for `key`; assigning `nil` removes it.
    @inlinable
    public subscript(key: Key) -> Value? {
        get {
            let hash = key.hashValue
            return buckets[hash & (buckets.count - 1)].value(for: key, hash: hash)
        }
        set {
            let hash = key.hashValue
            let index = hash & (buckets.count - 1)
            if !isKnownUniquelyReferenced(&buckets[index]) { buckets[index] = Bucket(copying: buckets[index]) }
            storedCount += buckets[index].set(key, newValue, hash: hash)
            if storedCount > buckets.count * Self.bucketCapacity { grow(toHold: storedCount) }
        }
    }

    /// What `read` makes of the value for `key`, handed over from its bucket's storage; `nil` without one. `read` may
    /// still be given a copy of the value (a load of all of it), as a function given any value out of an array is.
    @inlinable
    public func withValue<T>(for key: Key, _ read: (Value) -> T) -> T? {
        let hash = key.hashValue
        let bucket = buckets[hash & (buckets.count - 1)]
        guard let position = bucket.position(of: key, hash: hash) else { return nil }
        // Through the buffer: an element of a class's array is otherwise copied out, as `read` might change it.
        return bucket.values.withUnsafeBufferPointer { read($0[position]) }
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
        let hash = key.hashValue
        return buckets[hash & (buckets.count - 1)].position(of: key, hash: hash) != nil
    }

    /// Makes room for `count` entries at once, so that adding them does not redistribute the entries as the
    /// bucket count doubles on the way (a start adds every domain to an empty dictionary).
    public mutating func reserveCapacity(_ count: Int) {
        if count > buckets.count * Self.bucketCapacity { grow(toHold: count) }
    }

    /// Makes room for the entries of `keys` at once, each bucket made for exactly the keys it will hold, as
    /// ``init(_:)`` makes them: what a start that adds every domain one by one reserves.
    public mutating func reserveCapacity(forKeys keys: some Collection<Key>) {
        let count = storedCount + keys.count
        if count > buckets.count * Self.bucketCapacity { grow(toHold: count, adding: keys) }
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

    /// Doubles the bucket count until `count` entries average at most half of ``bucketCapacity`` per bucket,
    /// and moves every entry to its new bucket. Each bucket is sized for the entries it receives plus its share of
    /// the entries still to come, when `count` reserves room ahead (a bucket that gets more grows by a quarter).
    @usableFromInline
    mutating func grow(toHold count: Int) {
        grow(toHold: count, adding: EmptyCollection())
    }

    /// ``grow(toHold:)``, each bucket also sized for the keys of `keys` it will get: the room ahead is only for the
    /// entries still to come that `keys` does not name.
    @usableFromInline
    mutating func grow(toHold count: Int, adding keys: some Collection<Key>) {
        var bucketCount = buckets.count * 2
        while count > bucketCount * Self.bucketCapacity / 2 { bucketCount *= 2 }
        let old = buckets
        let mask = bucketCount - 1
        var sizes = [Int](repeating: 0, count: bucketCount)
        for bucket in old {
            for key in bucket.keys { sizes[key.hashValue & mask] += 1 }
        }
        for key in keys { sizes[key.hashValue & mask] += 1 }
        let ahead = Swift.max(0, count - storedCount - keys.count) / bucketCount
        buckets = sizes.map { Bucket(capacity: $0 + ahead) }
        for bucket in old {
            for (key, value) in zip(bucket.keys, bucket.values) {
                let hash = key.hashValue
                _ = buckets[hash & mask].set(key, value, hash: hash)
            }
        }
    }
}

extension PersistentDictionary {
    /// Calls `body` with every entry, bucket by bucket, in no particular order: each value is copied once, to be
    /// handed over, where iterating the dictionary as a sequence copies it twice, into a pair and out of it again
    /// (a certificate served is a dozen references, each retained and released by a copy).
    @inlinable
    public func forEachEntry(_ body: (Key, Value) throws -> Void) rethrows {
        for bucket in buckets {
            try bucket.keys.withUnsafeBufferPointer { keys in
                try bucket.values.withUnsafeBufferPointer { values in
                    for position in keys.indices { try body(keys[position], values[position]) }
                }
            }
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
