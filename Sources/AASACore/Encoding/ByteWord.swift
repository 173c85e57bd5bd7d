/// Tests on eight bytes at once, as one 64-bit word (in whatever byte order it was loaded): what the string scans of
/// the JSON parser and writer ask of most bytes of every string, a word at a time.
///
/// Each test is exact, by the borrow trick (a byte of `x - 0x0101…` gains a top bit that `x` lacks only where the
/// byte was zero, or below the bound), as long as no byte has its top bit set for ``hasByte(below:in:)``: the
/// callers ask ``hasHighByte(_:)`` first.
enum ByteWord {
    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let tops: UInt64 = 0x8080_8080_8080_8080

    /// Whether a byte of `word` is 0x80 or above.
    @inline(__always)
    static func hasHighByte(_ word: UInt64) -> Bool { word & tops != 0 }

    /// Whether a byte of `word` is `byte`.
    @inline(__always)
    static func hasByte(_ byte: UInt8, in word: UInt64) -> Bool {
        let matched = word ^ (ones &* UInt64(byte))
        return (matched &- ones) & ~matched & tops != 0
    }

    /// Whether a byte of `word`, none of which is 0x80 or above, is below `bound` (at most 0x80).
    @inline(__always)
    static func hasByte(below bound: UInt8, in word: UInt64) -> Bool {
        (word &- ones &* UInt64(bound)) & ~word & tops != 0
    }
}
