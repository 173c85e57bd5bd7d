/// Percent-encoding that makes any bytes a valid URL without changing one that already is.
public enum URLText {
    /// `bytes` with every byte that may not appear in a URL percent-encoded: controls, space, `"`, `<`, `>`,
    /// `'`, `\`, `^`, `` ` ``, `{`, `|`, `}`, non-ASCII, and a `%` not starting an escape. With
    /// `encodeCommas`, `,` becomes `%2C` too: the banner's `content` separates parameters with commas (spec §5).
    public static func encode(_ bytes: some Collection<UInt8>, encodeCommas: Bool) -> [UInt8] {
        let array = Array(bytes)
        return encode(array) { index, byte in
            switch byte {
            case UInt8(ascii: ","): !encodeCommas
            case UInt8(ascii: "%"): index + 2 < array.count && isHex(array[index + 1]) && isHex(array[index + 2])
            default: keptInURL[Int(byte)]
            }
        }
    }

    /// `bytes` as one component of a URL (a query parameter's value, an Android intent's extra): every byte but
    /// the unreserved ones (`A`–`Z`, `a`–`z`, `0`–`9`, `-`, `.`, `_`, `~`) percent-encoded, `%` included.
    public static func encodeComponent(_ bytes: some Collection<UInt8>) -> [UInt8] {
        encode(Array(bytes)) { _, byte in isUnreserved(byte) }
    }

    /// `bytes` with every byte `keep` refuses (given its index) written `%XX`, upper-case hex.
    private static func encode(_ bytes: [UInt8], keeping keep: (Int, UInt8) -> Bool) -> [UInt8] {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        for (index, byte) in bytes.enumerated() {
            if keep(index, byte) {
                out.append(byte)
            } else {
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            }
        }
        return out
    }

    /// The bytes a URL holds as they are: the unreserved ones, and the delimiters `!$&()*+;=:@/?#[]`.
    private static let keptInURL: [Bool] = (0...255).map { byte in
        isUnreserved(UInt8(byte)) || "!$&()*+;=:@/?#[]".utf8.contains(UInt8(byte))
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            true
        default: false
        }
    }

    private static func isHex(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || ((byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x66)
    }
}
