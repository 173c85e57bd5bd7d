import Synchronization

/// SHA-256 (FIPS 180-4), used for strong ETags of generated files; the core imports no C library.
///
/// A process may install another implementation of the same function once, at its start (``install(_:)``): the
/// server installs OpenSSL's, which uses the processor's SHA instructions where it has them and hashes a start's
/// ETags in a twentieth of the instructions. Without one, this file's portable code hashes.
public struct SHA256: Sendable {
    /// An installed implementation.
    private final class Implementation: Sendable {
        let digest: @Sendable ([UInt8]) -> [UInt8]

        init(_ digest: @escaping @Sendable ([UInt8]) -> [UInt8]) {
            self.digest = digest
        }
    }

    /// The address of the ``Implementation`` ``install(_:)`` installed, 0 for none: read without a lock, since every
    /// digest reads it.
    private static let installed = Atomic<Int>(0)

    /// Makes ``digest(_:)`` (and ``hex(_:)``) call `digest`, which must compute SHA-256 itself: a library's, for speed.
    /// Meant to be called once, before the process hashes; an implementation replaced is never freed, since a digest
    /// under way on another thread may still be using it.
    public static func install(_ digest: @escaping @Sendable ([UInt8]) -> [UInt8]) {
        let implementation = Unmanaged.passRetained(Implementation(digest)).toOpaque()
        installed.store(Int(bitPattern: implementation), ordering: .releasing)
    }

    private static let k: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]

    /// The 32-byte digest of `bytes`: by the installed implementation, else ``portableDigest(_:)``.
    public static func digest(_ bytes: [UInt8]) -> [UInt8] {
        if let installed = UnsafeRawPointer(bitPattern: installed.load(ordering: .acquiring)) {
            return Unmanaged<Implementation>.fromOpaque(installed).takeUnretainedValue().digest(bytes)
        }
        return portableDigest(bytes)
    }

    /// The 32-byte digest of `bytes`, computed by this file's code.
    package static func portableDigest(_ bytes: [UInt8]) -> [UInt8] {
        var state: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) = (
            0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19
        )
        // The whole blocks straight from `bytes`; the rest, the 0x80 byte, zeros and the bit length in one or two
        // blocks of its own. No copy of the message: every ETag of a start is made here.
        let whole = bytes.count / 64 * 64
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
            Self.k.withUnsafeBufferPointer { k in
                bytes.withUnsafeBufferPointer { input in
                    for block in stride(from: 0, to: whole, by: 64) {
                        compress(UnsafeBufferPointer(rebasing: input[block..<block + 64]), &state, w, k)
                    }
                }
                withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 128) { tail in
                    let rest = bytes.count - whole
                    let length = rest < 56 ? 64 : 128
                    tail.initialize(repeating: 0)
                    for index in 0..<rest { tail[index] = bytes[whole + index] }
                    tail[rest] = 0x80
                    let bitLength = UInt64(bytes.count) &* 8
                    for index in 0..<8 {
                        tail[length - 1 - index] = UInt8(truncatingIfNeeded: bitLength >> (8 * index))
                    }
                    for block in stride(from: 0, to: length, by: 64) {
                        compress(UnsafeBufferPointer(rebasing: tail[block..<block + 64]), &state, w, k)
                    }
                }
            }
        }
        let words = [state.0, state.1, state.2, state.3, state.4, state.5, state.6, state.7]
        return [UInt8](unsafeUninitializedCapacity: 32) { buffer, count in
            for (index, word) in words.enumerated() {
                for byte in 0..<4 { buffer[index * 4 + byte] = UInt8(truncatingIfNeeded: word >> (24 - 8 * byte)) }
            }
            count = 32
        }
    }

    /// One 64-byte block into `state` (FIPS 180-4 §6.2.2), with `w` as the message schedule.
    @inline(__always)
    private static func compress(
        _ block: UnsafeBufferPointer<UInt8>,
        _ state: inout (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32),
        _ w: UnsafeMutableBufferPointer<UInt32>, _ k: UnsafeBufferPointer<UInt32>
    ) {
        for t in 0..<16 {
            let i = t * 4
            w[t] =
                UInt32(block[i]) << 24 | UInt32(block[i + 1]) << 16 | UInt32(block[i + 2]) << 8 | UInt32(block[i + 3])
        }
        for t in 16..<64 {
            let s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3)
            let s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10)
            w[t] = w[t - 16] &+ s0 &+ w[t - 7] &+ s1
        }
        var (a, b, c, d, e, f, g, hh) = state
        for t in 0..<64 {
            let s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)
            let choice = (e & f) ^ (~e & g)
            let t1 = hh &+ s1 &+ choice &+ k[t] &+ w[t]
            let s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)
            let majority = (a & b) ^ (a & c) ^ (b & c)
            let t2 = s0 &+ majority
            (hh, g, f, e, d, c, b, a) = (g, f, e, d &+ t1, c, b, a, t1 &+ t2)
        }
        state.0 &+= a
        state.1 &+= b
        state.2 &+= c
        state.3 &+= d
        state.4 &+= e
        state.5 &+= f
        state.6 &+= g
        state.7 &+= hh
    }

    public static func hex(_ bytes: [UInt8]) -> String {
        let digest = digest(bytes)
        // Written in place: appending to an array and looking digits up in another cost more than hashing a
        // small body, and every ETag is made here.
        return String(unsafeUninitializedCapacity: digest.count * 2) { buffer in
            for (index, byte) in digest.enumerated() {
                buffer[2 * index] = hexDigit(byte >> 4)
                buffer[2 * index + 1] = hexDigit(byte & 0xF)
            }
            return digest.count * 2
        }
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        if value >= 10 { return UInt8(ascii: "a") + value - 10 }
        return UInt8(ascii: "0") + value
    }

    @inline(__always)
    private static func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { (x &>> n) | (x &<< (32 &- n)) }
}
