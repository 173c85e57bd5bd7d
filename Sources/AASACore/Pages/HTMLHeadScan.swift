/// What page injection needs to know about an HTML document, found in one linear pass at load time.
///
/// This is not an HTML parser: it tokenises just enough (comments, doctype, tags with quoted attributes,
/// raw-text elements such as `<script>`) to find where `<head>` content goes and whether the page already
/// has a Smart App Banner or touch icons. Tag and attribute names are compared without regard to case.
public struct HTMLHeadScan: Sendable, Hashable {
    /// Byte offset where tags for `<head>` are inserted: after `<head …>`, else after `<html …>`, else
    /// after the doctype, else after a byte order mark. An HTML parser puts a `<meta>` or `<link>` met there
    /// into the head in every case (HTML "before head" and "in head" insertion modes).
    public var insertionOffset = 0
    /// The page has its own `<meta name="apple-itunes-app">`.
    public var hasBanner = false
    /// The page has its own `<link rel="apple-touch-icon…">`.
    public var hasTouchIcon = false
    /// The page opts out of the banner with `<!-- aasa-server: no-banner -->`.
    public var optsOutOfBanner = false

    /// The opt-out comment's text, compared without spaces.
    static let optOutMarker = Array("aasa-server:no-banner".utf8)
    private static let rawTextElements: Set<String> = [
        "script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "noscript",
    ]

    /// Scans `html`.
    public init(_ html: [UInt8]) {
        let count = html.count
        var index = 0
        if count >= 3 && html[0] == 0xEF && html[1] == 0xBB && html[2] == 0xBF { index = 3 }
        let afterBOM = index
        var afterDoctype: Int?
        var afterHTML: Int?
        var afterHead: Int?
        var sawBody = false
        while index < count {
            guard html[index] == UInt8(ascii: "<") else {
                index += 1
                continue
            }
            if Self.hasPrefix(html, at: index, "<!--") {
                let end = Self.find(html, "-->", from: index + 4) ?? count
                let text = html[(index + 4)..<min(end, count)].filter { $0 > 0x20 }.map { Self.lower($0) }
                if text.elementsEqual(Self.optOutMarker) { optsOutOfBanner = true }
                index = min(end + 3, count)
                continue
            }
            if index + 1 < count && (html[index + 1] == UInt8(ascii: "!") || html[index + 1] == UInt8(ascii: "?")) {
                let end = Self.find(html, ">", from: index) ?? (count - 1)
                index = end + 1
                if afterDoctype == nil && afterHTML == nil { afterDoctype = index }
                continue
            }
            let closing = index + 1 < count && html[index + 1] == UInt8(ascii: "/")
            let nameStart = index + (closing ? 2 : 1)
            guard nameStart < count, Self.isLetter(html[nameStart]) else {
                index += 1
                continue
            }
            var nameEnd = nameStart
            while nameEnd < count, !Self.isSpace(html[nameEnd]), html[nameEnd] != UInt8(ascii: ">"),
                html[nameEnd] != UInt8(ascii: "/")
            {
                nameEnd += 1
            }
            let name = String(decoding: html[nameStart..<nameEnd].map { Self.lower($0) }, as: UTF8.self)
            let (attributes, tagEnd) = Self.attributes(html, from: nameEnd)
            index = tagEnd
            if closing { continue }
            switch name {
            case "html" where afterHTML == nil && afterHead == nil: afterHTML = tagEnd
            case "head" where afterHead == nil && !sawBody: afterHead = tagEnd
            case "body": sawBody = true
            case "meta" where attributes["name"]?.lowercased() == "apple-itunes-app": hasBanner = true
            case "link":
                let rels = (attributes["rel"] ?? "").lowercased().split(whereSeparator: { $0 == " " || $0 == "\t" })
                if rels.contains(where: { $0 == "apple-touch-icon" || $0 == "apple-touch-icon-precomposed" }) {
                    hasTouchIcon = true
                }
            default:
                if Self.rawTextElements.contains(name) {
                    // Their content is text: a "<meta" inside a script is not a tag.
                    index = Self.findEndTag(html, name: name, from: tagEnd) ?? count
                }
            }
        }
        insertionOffset = afterHead ?? afterHTML ?? afterDoctype ?? afterBOM
    }

    /// Attributes of the tag whose name ends at `start`, and the offset just after its `>`.
    static func attributes(_ html: [UInt8], from start: Int) -> ([String: String], Int) {
        let count = html.count
        var attributes: [String: String] = [:]
        var index = start
        while index < count {
            let byte = html[index]
            if byte == UInt8(ascii: ">") { return (attributes, index + 1) }
            if isSpace(byte) || byte == UInt8(ascii: "/") {
                index += 1
                continue
            }
            let nameStart = index
            while index < count, !isSpace(html[index]), html[index] != UInt8(ascii: "="),
                html[index] != UInt8(ascii: ">"), html[index] != UInt8(ascii: "/")
            {
                index += 1
            }
            let name = String(decoding: html[nameStart..<index].map { lower($0) }, as: UTF8.self)
            while index < count && isSpace(html[index]) { index += 1 }
            var value = ""
            if index < count && html[index] == UInt8(ascii: "=") {
                index += 1
                while index < count && isSpace(html[index]) { index += 1 }
                if index < count && (html[index] == UInt8(ascii: "\"") || html[index] == UInt8(ascii: "'")) {
                    let quote = html[index]
                    let valueStart = index + 1
                    index = valueStart
                    while index < count && html[index] != quote { index += 1 }
                    value = String(decoding: html[valueStart..<min(index, count)], as: UTF8.self)
                    index = min(index + 1, count)
                } else {
                    let valueStart = index
                    while index < count && !isSpace(html[index]) && html[index] != UInt8(ascii: ">") { index += 1 }
                    value = String(decoding: html[valueStart..<index], as: UTF8.self)
                }
            }
            if attributes[name] == nil { attributes[name] = value }  // HTML: the first one wins
        }
        return (attributes, count)
    }

    /// Offset just after `</name …>` at or after `start`, case-insensitively.
    static func findEndTag(_ html: [UInt8], name: String, from start: Int) -> Int? {
        let needle = Array(name.utf8)
        var index = start
        while let open = find(html, "</", from: index) {
            let nameStart = open + 2
            let nameEnd = nameStart + needle.count
            if nameEnd <= html.count, html[nameStart..<nameEnd].map({ lower($0) }).elementsEqual(needle),
                nameEnd == html.count || isSpace(html[nameEnd]) || html[nameEnd] == UInt8(ascii: ">")
                    || html[nameEnd] == UInt8(ascii: "/")
            {
                return (find(html, ">", from: nameEnd) ?? (html.count - 1)) + 1
            }
            index = nameStart
        }
        return nil
    }

    static func find(_ html: [UInt8], _ needle: StaticString, from start: Int) -> Int? {
        let pattern = needle.withUTF8Buffer { Array($0) }
        guard !pattern.isEmpty, start >= 0 else { return nil }
        var index = start
        let last = html.count - pattern.count
        while index <= last {
            if html[index] == pattern[0] {
                var offset = 1
                while offset < pattern.count && html[index + offset] == pattern[offset] { offset += 1 }
                if offset == pattern.count { return index }
            }
            index += 1
        }
        return nil
    }

    static func hasPrefix(_ html: [UInt8], at index: Int, _ prefix: StaticString) -> Bool {
        prefix.withUTF8Buffer { pattern in
            index + pattern.count <= html.count && pattern.indices.allSatisfy { html[index + $0] == pattern[$0] }
        }
    }

    static func lower(_ byte: UInt8) -> UInt8 { byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte }
    static func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A }
    static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0C || byte == 0x0D
    }
}
