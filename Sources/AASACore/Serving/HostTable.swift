#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Values by host name, looked up with the request's bytes: no string is made per request.
///
/// Built once per route snapshot and never changed. With thousands of domains nothing a lookup touches is
/// in cache, so the table keeps what a probe reads together: a slot holds a hash tag and where its name's
/// bytes start in one flat buffer, so a hit reads one slot, one name and one value (a `[String: Value]`
/// reads a bucket, the key's separate string object and the value, after making a string of the request's
/// host; docs/benchmarks.md, "What bounds the targets not met").
///
/// Open addressing with linear probing at a load factor of at most ½. The hash is seeded per table. Clients
/// choose what is looked up but not what the table holds (configured names only), so a crafted host can
/// at worst land in the longest run of occupied slots the configured names happen to form.
struct HostTable<Value: Sendable>: Sendable {
    private struct Slot: Sendable {
        /// The hash's high bits; 0 marks an empty slot (a real tag is never 0).
        var tag: UInt32 = 0
        /// Index into `values`.
        var index: UInt32 = 0
        /// Where the name starts in `names`, and its length.
        var start: UInt32 = 0
        var length: UInt32 = 0
    }

    private let slots: [Slot]
    private let names: [UInt8]
    private let values: [Value]
    private let seed: UInt64

    /// The table of `entries`; a name given twice keeps its first value. Names are used as they are
    /// (normalise them first, as requests are: ``HostName``).
    init(_ entries: some Sequence<(name: String, value: Value)>) {
        let entries = Array(entries)
        let seed = UInt64.random(in: .min ... .max)
        var capacity = 8
        while capacity < 2 * entries.count { capacity <<= 1 }
        var slots = [Slot](repeating: Slot(), count: capacity)
        var names: [UInt8] = []
        var values: [Value] = []
        values.reserveCapacity(entries.count)
        names.reserveCapacity(entries.reduce(0) { $0 + $1.name.utf8.count })
        for (name, value) in entries {
            let bytes = Array(name.utf8)
            let found = bytes.withUnsafeBytes { Self.probe(for: $0, slots: slots, names: names, seed: seed) }
            guard case .empty(let position) = found else { continue }
            slots[position] = Slot(
                tag: Self.tag(Self.hash(bytes, seed: seed)), index: UInt32(values.count), start: UInt32(names.count),
                length: UInt32(bytes.count))
            names += bytes
            values.append(value)
        }
        self.seed = seed
        self.slots = slots
        self.names = names
        self.values = values
    }

    /// The value for the host `name` (exact bytes), if any.
    @inline(__always)
    subscript(name: UnsafeRawBufferPointer) -> Value? {
        guard case .found(let index) = Self.probe(for: name, slots: slots, names: names, seed: seed) else {
            return nil
        }
        return values[index]
    }

    /// The value for `name`.
    subscript(name: String) -> Value? {
        var name = name
        return name.withUTF8 { self[UnsafeRawBufferPointer($0)] }
    }

    /// How many names the table holds.
    var count: Int { values.count }

    /// Every name and its value, in the order they were given.
    var entries: [(name: String, value: Value)] {
        var named = [(name: String, value: Value)?](repeating: nil, count: values.count)
        for slot in slots where slot.tag != 0 {
            let name = String(decoding: names[Int(slot.start)..<Int(slot.start + slot.length)], as: UTF8.self)
            named[Int(slot.index)] = (name, values[Int(slot.index)])
        }
        return named.compactMap { $0 }
    }

    private enum Probe {
        case found(Int)
        case empty(Int)
    }

    private static func probe(for name: UnsafeRawBufferPointer, slots: [Slot], names: [UInt8], seed: UInt64) -> Probe {
        let hash = hash(name, seed: seed)
        let tag = tag(hash)
        let mask = slots.count - 1
        var position = Int(truncatingIfNeeded: hash) & mask
        return slots.withUnsafeBufferPointer { slots in
            while true {
                let slot = slots[position]
                if slot.tag == 0 { return .empty(position) }
                if slot.tag == tag && Int(slot.length) == name.count
                    && names.withUnsafeBytes({ names in
                        name.count == 0
                            || memcmp(names.baseAddress! + Int(slot.start), name.baseAddress!, name.count) == 0
                    })
                {
                    return .found(Int(slot.index))
                }
                position = (position + 1) & mask
            }
        }
    }

    private static func tag(_ hash: UInt64) -> UInt32 {
        UInt32(truncatingIfNeeded: hash >> 32) | 1
    }

    private static func hash(_ bytes: [UInt8], seed: UInt64) -> UInt64 {
        bytes.withUnsafeBytes { hash($0, seed: seed) }
    }

    /// A seeded hash over eight bytes at a time (multiply and fold, with a final mix so the low bits, which
    /// pick the slot, depend on every byte).
    static func hash(_ bytes: UnsafeRawBufferPointer, seed: UInt64) -> UInt64 {
        var hash = seed ^ (UInt64(bytes.count) &* 0x9E37_79B9_7F4A_7C15)
        var offset = 0
        while offset + 8 <= bytes.count {
            hash = (hash ^ bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) &* 0xFF51_AFD7_ED55_8CCD
            hash ^= hash >> 32
            offset += 8
        }
        var tail: UInt64 = 0
        var shift: UInt64 = 0
        while offset < bytes.count {
            tail |= UInt64(bytes[offset]) << shift
            shift += 8
            offset += 1
        }
        hash = (hash ^ tail) &* 0xC4CE_B9FE_1A85_EC53
        hash ^= hash >> 29
        hash = hash &* 0xFF51_AFD7_ED55_8CCD
        return hash ^ (hash >> 32)
    }
}
