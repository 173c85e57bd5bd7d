/// What identifies a file's bytes between two loads without keeping them: their length and a 64-bit hash.
///
/// A reload asks "are these the bytes I loaded last time?" for every site.json and certificate folder. Keeping
/// the bytes to compare with cost 1.8 KiB per certificate folder (a chain and its key), 18 MiB at 10,000
/// domains (docs/benchmarks.md). The hash is the standard library's SipHash, seeded at random per process:
/// stamps are compared only within one process, and two different files of the same length get the same stamp
/// with a probability of 2⁻⁶⁴.
public struct ContentStamp: Sendable, Hashable {
    /// The number of bytes.
    public let length: Int
    /// Their hash.
    public let hash: Int

    /// The stamp of `bytes`.
    public init(_ bytes: [UInt8]) {
        var hasher = Hasher()
        bytes.withUnsafeBytes { raw in
            // Eight bytes at a time: Hasher.combine(bytes:) went byte by byte, about 100 instructions each.
            var offset = 0
            while offset + 8 <= raw.count {
                hasher.combine(raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                offset += 8
            }
            for byte in raw[offset...] { hasher.combine(byte) }
        }
        length = bytes.count
        hash = hasher.finalize()
    }
}
