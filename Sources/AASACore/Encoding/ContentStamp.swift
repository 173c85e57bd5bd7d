/// What identifies a file's bytes between two loads without keeping them: their length and a 64-bit hash.
///
/// A reload asks "are these the bytes I loaded last time?" for every site.json and certificate folder. Keeping
/// the bytes to compare with cost 1.8 KiB per certificate folder (a chain and its key), 18 MiB at 10,000
/// domains (docs/benchmarks.md). The hash is SipHash-1-3 (``SipHash``, the standard library's hash), keyed at
/// random per process: stamps are compared only within one process, and two different files of the same length get
/// the same stamp with a probability of 2⁻⁶⁴.
public struct ContentStamp: Sendable, Hashable {
    /// The number of bytes.
    public let length: Int
    /// Their hash.
    public let hash: Int

    /// The stamp of `bytes`.
    public init(_ bytes: [UInt8]) {
        length = bytes.count
        hash = Int(truncatingIfNeeded: bytes.withUnsafeBytes { Self.hasher.hash($0) })
    }

    /// SipHash-1-3 (the standard library's hash), under a key drawn once per process.
    private static let hasher: SipHash = {
        var generator = SystemRandomNumberGenerator()
        return SipHash(key: (generator.next(), generator.next()))
    }()
}
