/// A set of Unicode scalar values, for single-character variables like `$(digit)` (spec §1.8).
struct ScalarSet: Sendable, Hashable {
    private var low: UInt64 = 0
    private var high: UInt64 = 0
    private var others: Set<UInt32> = []

    /// Creates a set of `values`.
    init(_ values: some Sequence<UInt32>) {
        for value in values {
            if value < 64 {
                low |= 1 << UInt64(value)
            } else if value < 128 {
                high |= 1 << UInt64(value - 64)
            } else {
                others.insert(value)
            }
        }
    }

    /// Whether `value` is in the set.
    @inline(__always)
    func contains(_ value: UInt32) -> Bool {
        if value < 64 { return low & (1 << UInt64(value)) != 0 }
        if value < 128 { return high & (1 << UInt64(value - 64)) != 0 }
        return others.contains(value)
    }

    /// Every value in the set, in increasing order.
    var members: [UInt32] {
        var result = (0..<64).filter { low & (1 << UInt64($0)) != 0 }.map { UInt32($0) }
        result += (0..<64).filter { high & (1 << UInt64($0)) != 0 }.map { UInt32($0 + 64) }
        return result + others.sorted()
    }
}
