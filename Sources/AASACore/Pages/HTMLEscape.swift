/// Escaping for text placed in HTML: every value a page gets from config or from a request goes through it.
public enum HTMLEscape {
    /// `text` escaped for an attribute value in double quotes or for element text.
    public static func escape(_ text: String) -> String {
        String(decoding: escape(Array(text.utf8)), as: UTF8.self)
    }

    /// `bytes` (UTF-8) escaped: `&`, `<`, `>`, `"` and `'` become character references.
    public static func escape(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 16)
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "&"): out += Array("&amp;".utf8)
            case UInt8(ascii: "<"): out += Array("&lt;".utf8)
            case UInt8(ascii: ">"): out += Array("&gt;".utf8)
            case UInt8(ascii: "\""): out += Array("&quot;".utf8)
            case UInt8(ascii: "'"): out += Array("&#39;".utf8)
            default: out.append(byte)
            }
        }
        return out
    }
}
