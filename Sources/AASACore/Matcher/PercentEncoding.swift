/// Percent-decoding and the percent-encoding of characters a URL may not carry literally (spec §2.6).
enum PercentEncoding {
    /// Decodes `%XX` escapes (spec §2.6, `percentEncoded: false` and query items).
    ///
    /// Invalid escapes such as `%zz` or a lone `%` are kept as written (as 3P-BLAZ does and `swcutil` agrees
    /// on ordinary input). If the decoded bytes are not valid UTF-8 the text is returned undecoded: we would
    /// rather compare against the encoded form than invent replacement characters. `+` is *not* turned into
    /// a space, which is what `URLQueryItem` does too (spec §2.6).
    static func decode(_ text: String) -> String {
        let utf8 = Array(text.utf8)
        guard utf8.contains(UInt8(ascii: "%")) else { return text }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var index = 0
        while index < utf8.count {
            let byte = utf8[index]
            if byte == UInt8(ascii: "%"), index + 2 < utf8.count,
                let high = hexValue(utf8[index + 1]), let low = hexValue(utf8[index + 2])
            {
                bytes.append(high << 4 | low)
                index += 3
            } else {
                bytes.append(byte)
                index += 1
            }
        }
        return String(validating: bytes, as: UTF8.self) ?? text
    }

    /// Percent-encodes (UTF-8) every character a browser would not send literally: non-ASCII, controls,
    /// space and `"<>\^`{|}`. Everything else, including `%`, is kept, so a URL that is already in its
    /// percent-encoded ASCII form (the form patterns are written in, spec §2.6) passes through unchanged.
    /// `extra` names one more ASCII byte to encode (a second `#` inside a fragment).
    static func encodeDisallowed(_ text: String, alsoEncoding extra: UInt8? = nil) -> String {
        encode(text) { mustEncode($0) || $0 == extra }
    }

    /// `text` with every UTF-8 byte for which `needsEncoding` holds written as `%XX` (upper-case hex).
    static func encode(_ text: String, where needsEncoding: (UInt8) -> Bool) -> String {
        guard text.utf8.contains(where: needsEncoding) else { return text }
        var result = String.UnicodeScalarView()
        for byte in text.utf8 {
            if needsEncoding(byte) {
                result.append("%")
                result.append(hexDigits[Int(byte >> 4)])
                result.append(hexDigits[Int(byte & 0x0F)])
            } else {
                result.append(Unicode.Scalar(byte))
            }
        }
        return String(result)
    }

    /// The upper-case hex digits of a byte's escape, high one first.
    static func hexDigits(of byte: UInt8) -> (high: Unicode.Scalar, low: Unicode.Scalar) {
        (hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0x0F)])
    }

    private static let hexDigits: [Unicode.Scalar] = Array("0123456789ABCDEF".unicodeScalars)

    private static func mustEncode(_ byte: UInt8) -> Bool {
        if byte >= 0x80 || byte <= 0x20 || byte == 0x7F { return true }
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "\\"), UInt8(ascii: "^"),
            UInt8(ascii: "`"), UInt8(ascii: "{"), UInt8(ascii: "|"), UInt8(ascii: "}"):
            return true
        default:
            return false
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
