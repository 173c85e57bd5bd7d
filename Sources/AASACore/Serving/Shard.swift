/// One part of the domains, for running several processes that each serve a share of them (`serve --shard I/N`):
/// shard `index` of `count` serves exactly the domains whose name hashes to it.
///
/// The hash and the choice of shard are nginx's `split_clients` over the name, with `count` equal parts, so a
/// router running nginx (`aasa-server shards nginx`) sends a name missing from its map to the shard that serves
/// it. docs/operations.md, "Sharding", gives the definition for computing it elsewhere.
public struct Shard: Sendable, Hashable, CustomStringConvertible {
    /// The most shards: `split_clients` gives each part 10000 / `count` hundredths of a percent, which stays a
    /// whole percent at 100.
    public static let maximumCount = 100

    /// Which shard, from 0.
    public let index: Int
    /// How many shards there are.
    public let count: Int

    /// Shard `index` of `count`.
    ///
    /// - Throws: ``ShardError`` when `count` is not 1...``maximumCount`` or `index` is not 0..<`count`.
    public init(index: Int, count: Int) throws(ShardError) {
        guard count >= 1 && count <= Self.maximumCount else {
            throw ShardError(
                .countOutOfRange, "shard \(index)/\(count): the shard count must be 1...\(Self.maximumCount)")
        }
        guard index >= 0 && index < count else {
            throw ShardError(
                .indexOutOfRange,
                "shard \(index)/\(count): the shard index must be 0..<\(count) (the first of \(count) is 0/\(count))")
        }
        self.index = index
        self.count = count
    }

    /// The shard written `I/N` (`0/2` is the first of two), as `serve --shard` and `AASA_SERVER_SHARD` take it;
    /// spaces and line ends around it are ignored.
    ///
    /// - Throws: ``ShardError`` naming what is wrong.
    public init(parsing text: String) throws(ShardError) {
        var bytes = Array(text.utf8)
        while let last = bytes.last, Self.isSpace(last) { bytes.removeLast() }
        let start = bytes.firstIndex { !Self.isSpace($0) } ?? bytes.endIndex
        let parts = String(decoding: bytes[start...], as: UTF8.self).split(
            separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]) else {
            throw ShardError(
                .malformed, "'\(text)' is not a shard: write I/N, the shard's index from 0 and the count, e.g. 0/2")
        }
        try self.init(index: index, count: count)
    }

    /// `I/N`.
    public var description: String { "\(index)/\(count)" }

    /// Whether this shard serves `domain` (case and one trailing dot ignored).
    public func owns(_ domain: String) -> Bool {
        Self.index(of: domain, count: count) == index
    }

    /// The shard of `count` (1...``maximumCount``) that serves `domain`: the part nginx's `split_clients` picks
    /// for the name among `count` parts, the first `count - 1` of ``percentages(count:)`` hundredths of a percent
    /// each and the last `*`.
    ///
    /// nginx turns each part's percentage into a cumulative bound, `bound += percent * 0xffffffff / 10000` (64-bit
    /// integer arithmetic), and picks the first part with ``hash(_:)`` `< bound`; the `*` part takes the rest.
    public static func index(of domain: String, count: Int) -> Int {
        precondition(count >= 1 && count <= maximumCount, "the shard count must be 1...\(maximumCount)")
        let value = Self.hash(domain)
        var bound: UInt32 = 0
        for (part, percent) in percentages(count: count).enumerated() {
            // At most 10000 hundredths in all, so the bounds stay within 0xffffffff.
            bound += UInt32(UInt64(percent) * 0xffff_ffff / 10_000)
            if value < bound { return part }
        }
        return count - 1
    }

    /// The hashes (``hash(_:)``) of the names this shard serves: `lower..<upper` of 2^32, the same bounds
    /// ``index(of:count:)`` picks by, so a store can select a shard's domains by a stored hash.
    public var hashRange: Range<UInt64> {
        var bounds: [UInt64] = [0]
        var bound: UInt32 = 0
        for percent in Self.percentages(count: count) {
            bound += UInt32(UInt64(percent) * 0xffff_ffff / 10_000)
            bounds.append(UInt64(bound))
        }
        bounds.append(1 << 32)
        return bounds[index]..<bounds[index + 1]
    }

    /// The share of each of the first `count - 1` parts, in hundredths of a percent: `10000 / count` (integer
    /// division) each; the last part (`*` in `split_clients`) takes the rest. Empty for one shard.
    public static func percentages(count: Int) -> [Int] {
        precondition(count >= 1 && count <= maximumCount, "the shard count must be 1...\(maximumCount)")
        return Array(repeating: 10_000 / count, count: count - 1)
    }

    /// The hash that places a name: the name is lower-cased (ASCII letters only) and one trailing dot removed,
    /// then its UTF-8 bytes are hashed with 32-bit MurmurHash2, seed 0, exactly as nginx's `ngx_murmur_hash2`:
    ///
    ///     h = 0 ^ length
    ///     for each whole 4-byte block, read little-endian as k:
    ///         k *= 0x5bd1e995; k ^= k >> 24; k *= 0x5bd1e995; h *= 0x5bd1e995; h ^= k
    ///     the 1–3 bytes left, b0 b1 b2: h ^= b2 << 16 (if 3); h ^= b1 << 8 (if 2 or more); h ^= b0; h *= 0x5bd1e995
    ///     h ^= h >> 13; h *= 0x5bd1e995; h ^= h >> 15
    ///
    /// All arithmetic is modulo 2^32. `hash("shop.example")` is 0x913e8869.
    public static func hash(_ name: String) -> UInt32 {
        var bytes = Array(name.utf8)
        if bytes.last == UInt8(ascii: ".") { bytes.removeLast() }
        for position in bytes.indices {
            if bytes[position] >= UInt8(ascii: "A") && bytes[position] <= UInt8(ascii: "Z") { bytes[position] += 0x20 }
        }
        return murmurHash2(bytes)
    }

    /// MurmurHash2 (Austin Appleby), 32-bit, seed 0, as nginx's src/core/ngx_murmurhash.c.
    static func murmurHash2(_ bytes: [UInt8]) -> UInt32 {
        let multiplier: UInt32 = 0x5bd1_e995
        var h = UInt32(truncatingIfNeeded: bytes.count)
        var position = 0
        while bytes.count - position >= 4 {
            var k = UInt32(bytes[position])
            k |= UInt32(bytes[position + 1]) << 8
            k |= UInt32(bytes[position + 2]) << 16
            k |= UInt32(bytes[position + 3]) << 24
            k &*= multiplier
            k ^= k >> 24
            k &*= multiplier
            h &*= multiplier
            h ^= k
            position += 4
        }
        let left = bytes.count - position
        if left == 3 { h ^= UInt32(bytes[position + 2]) << 16 }
        if left >= 2 { h ^= UInt32(bytes[position + 1]) << 8 }
        if left >= 1 {
            h ^= UInt32(bytes[position])
            h &*= multiplier
        }
        h ^= h >> 13
        h &*= multiplier
        h ^= h >> 15
        return h
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\n")
            || byte == UInt8(ascii: "\r")
    }
}

/// Why a shard was refused: written wrongly, or out of range. Equality compares the code.
public struct ShardError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was wrong.
    public enum Code: Sendable, Hashable {
        /// Not two whole numbers separated by `/`.
        case malformed
        /// The count is not 1...``Shard/maximumCount``.
        case countOutOfRange
        /// The index is not 0..<count.
        case indexOutOfRange
    }

    /// The stable code.
    public let code: Code
    /// What is wrong, with the value given and what is accepted.
    public let description: String

    /// Creates an error.
    public init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }

    /// Whether both have the same code.
    public static func == (lhs: ShardError, rhs: ShardError) -> Bool { lhs.code == rhs.code }

    /// Hashes the code.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
