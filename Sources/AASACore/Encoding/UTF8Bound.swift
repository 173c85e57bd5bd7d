/// Bounds text in UTF-8 bytes, cut at a Unicode scalar boundary: a count of characters (grapheme clusters) bounds
/// nothing, since one character can hold any number of combining marks.
///
/// Every text the server keeps or echoes with a bound (history summaries and the values they quote, log excerpts,
/// messages quoting input) is cut here.
public enum UTF8Bound {
    /// The mark a cut text ends with.
    public static let ellipsis = "…"

    /// The longest prefix of `text` of at most `bytes` UTF-8 bytes that ends at a Unicode scalar boundary.
    public static func prefix(_ text: String, bytes: Int) -> String {
        guard text.utf8.count > bytes else { return text }
        let head = Array(text.utf8.prefix(max(0, bytes) + 1))
        // head[end] is the first byte left out: a continuation byte (10xxxxxx) means the cut is inside a scalar,
        // whose first bytes are left out too.
        var end = head.count - 1
        while end > 0 && head[end] & 0xC0 == 0x80 { end -= 1 }
        return String(decoding: head[..<end], as: UTF8.self)
    }

    /// `text` when it has at most `bytes` UTF-8 bytes; else its longest prefix ending at a scalar boundary and
    /// ``ellipsis``, `bytes` bytes at most in all.
    public static func cut(_ text: String, bytes: Int) -> String {
        guard text.utf8.count > bytes else { return text }
        return prefix(text, bytes: max(0, bytes - ellipsis.utf8.count)) + ellipsis
    }
}
