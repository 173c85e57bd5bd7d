/// Makes text from requests safe to print: what a client sends (path, Host, User-Agent) reaches log lines and
/// terminals, where a control character could forge a line, move the cursor or retitle the window.
///
/// Every control character (C0 U+0000–U+001F, DEL U+007F, C1 U+0080–U+009F) becomes `\xHH`, HH its code point in
/// lower-case hex, and a backslash becomes `\\`, so the escaped text reads back unambiguously: `\x1b` in a
/// log line was ESC on the wire, `\\x1b` was the four characters. Everything else, UTF-8 included, is kept.
public enum LogEscaping {
    /// `text` with its control characters and backslashes escaped.
    public static func escape(_ text: String) -> String {
        var text = text
        return text.withUTF8 { bytes in
            guard bytes.indices.contains(where: { needsEscape(bytes, at: $0) }) else { return nil }
            return escapeBytes(bytes)
        } ?? text
    }

    /// `text` escaped, and cut to at most `limit` UTF-8 bytes (``UTF8Bound/cut(_:bytes:)``, `…` included) when it is
    /// longer: a value echoed in a finding (a config's, a remote site's) never makes the line longer than that,
    /// whatever its size or its characters (a letter with any number of combining marks is one character).
    public static func excerpt(_ text: String, limit: Int = 80) -> String {
        // Cut before escaping (so the work is bounded too), then again: an escape is up to four bytes.
        UTF8Bound.cut(escape(UTF8Bound.prefix(text, bytes: limit + 1)), bytes: limit)
    }

    /// `bytes` (UTF-8, invalid sequences replaced) with its control characters and backslashes escaped.
    public static func escape(_ bytes: UnsafeRawBufferPointer) -> String {
        escape(String(decoding: bytes, as: UTF8.self))
    }

    /// Whether the byte at `index` starts something to escape: a C0 byte, DEL, a backslash, or the first byte of
    /// a C1 character's UTF-8 (`C2 80`…`C2 9F`).
    @inline(__always)
    private static func needsEscape(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> Bool {
        let byte = bytes[index]
        if byte < 0x20 || byte == 0x7F || byte == UInt8(ascii: "\\") { return true }
        return byte == 0xC2 && index + 1 < bytes.count && (0x80...0x9F).contains(bytes[index + 1])
    }

    private static func escapeBytes(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        let hex = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 16)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\\") {
                out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            } else if needsEscape(bytes, at: index) {
                // A C1 character is two bytes in UTF-8; its code point is the second one.
                let codePoint = byte == 0xC2 ? bytes[index + 1] : byte
                if byte == 0xC2 { index += 1 }
                out += [UInt8(ascii: "\\"), UInt8(ascii: "x"), hex[Int(codePoint >> 4)], hex[Int(codePoint & 0xF)]]
            } else {
                out.append(byte)
            }
            index += 1
        }
        return String(decoding: out, as: UTF8.self)
    }
}
