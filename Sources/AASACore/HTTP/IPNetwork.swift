/// A block of IP addresses in CIDR notation (`10.0.0.0/8`, `2001:db8::/32`, or one address alone).
public struct IPNetwork: Hashable, Sendable, CustomStringConvertible {
    /// The first address of the block (host bits cleared).
    public let address: IPAddress
    /// How many leading bits every address of the block shares with ``address``.
    public let prefixLength: Int

    /// Parses `address/length`, or a bare address (a block of one). Host bits set in the address are
    /// cleared (`10.1.2.3/8` is `10.0.0.0/8`). `nil` for anything else.
    public init?(_ text: some StringProtocol) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddress(parts[0]) else { return nil }
        let bits = address.bytes.count * 8
        var length = bits
        if parts.count == 2 {
            guard let parsed = Int(parts[1]), parts[1].allSatisfy(\.isASCII), parsed >= 0, parsed <= bits,
                parts[1].count <= 3
            else { return nil }
            length = parsed
        }
        self.prefixLength = length
        self.address = IPAddress(bytes: Self.masked(address.bytes, length))!
    }

    /// Whether `candidate` lies in this block (an IPv4 address is never in an IPv6 block, and the reverse;
    /// IPv4-mapped IPv6 addresses count as IPv4).
    public func contains(_ candidate: IPAddress) -> Bool {
        candidate.bytes.count == address.bytes.count && Self.masked(candidate.bytes, prefixLength) == address.bytes
    }

    /// `10.0.0.0/8`.
    public var description: String { "\(address)/\(prefixLength)" }

    private static func masked(_ bytes: [UInt8], _ length: Int) -> [UInt8] {
        bytes.enumerated().map { index, byte in
            let keep = max(0, min(8, length - index * 8))
            return keep == 8 ? byte : byte & ~(0xFF >> keep)
        }
    }
}
