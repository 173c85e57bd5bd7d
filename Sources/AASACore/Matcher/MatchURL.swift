/// A URL split into the parts the matcher compares (spec §2.3), by a small RFC 3986 splitter.
///
/// We do not use Foundation `URL`: matching compares against the URL *as written*, and Foundation's parsers
/// differ between platforms and releases in what they normalise. Only these changes are made:
/// - surrounding spaces, tabs and newlines are trimmed (as browsers do with typed URLs);
/// - scheme and host are lowercased (RFC 3986 §3.1, §3.2.2 say they are case-insensitive);
/// - characters a URL cannot carry literally (non-ASCII, space, controls, `"<>\^`{|}`, and a second `#`)
///   are percent-encoded as UTF-8, which is what Safari sends and iOS 17 `URL(string:)` does. Patterns are
///   written against that percent-encoded ASCII form (spec §2.6).
/// The path is otherwise untouched: no dot-segment removal, no slash merging (spec §2.1: inner slashes are
/// compared as written).
public struct MatchURL: Sendable, Hashable {
    /// `http` or `https`, lowercased; `nil` for path-only input such as `/buy/x`.
    public var scheme: String?
    /// The host, lowercased; `nil` for path-only input.
    public var host: String?
    /// The explicit port, if any.
    public var port: Int?
    /// The path in percent-encoded form; `""` when the URL has none (`https://example.com`).
    public var path: String
    /// The query without `?`, percent-encoded; `nil` when the URL has no `?`.
    public var query: String?
    /// The fragment without `#`, percent-encoded; `nil` when the URL has no `#`.
    public var fragment: String?

    /// The longest URL matched, in UTF-8 bytes as given (scheme, host, path, query and fragment). A longer URL is
    /// refused before it is read (``URLParseError/Code/tooLong(_:)``), which bounds what matching one request
    /// costs (``PatternLimits``); real links are far shorter, and browsers and CDNs commonly cap URLs near 2,000
    /// bytes.
    public static let maximumLength = 2_048

    /// Splits `text` into its parts.
    ///
    /// Accepts absolute `http`/`https` URLs with a host, and, for convenience, path-only input starting with
    /// a single `/` (`/buy/x?id=1#top`), which is matched as if it were on the file's own domain.
    ///
    /// Split on the UTF-8 bytes, by offset: every delimiter is ASCII, and a start parses every domain's link tests
    /// (through `Character`s this was 4 % of a start at 100,000 domains, and through `String.UTF8View` indices
    /// still a third of checking them).
    public init(parsing text: String) throws(URLParseError) {
        let length = text.utf8.count
        guard length <= Self.maximumLength else { throw URLParseError(.tooLong(length), input: "") }
        let bytes = Array(text.utf8)
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
        var start = 0
        var end = bytes.count
        while start < end && isSpace(bytes[start]) { start += 1 }
        while end > start && isSpace(bytes[end - 1]) { end -= 1 }
        guard start < end else { throw URLParseError(.empty, input: text) }
        // Every range below starts and ends at an ASCII delimiter or an end, so each is whole UTF-8.
        func string(_ range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }
        func first(_ byte: UInt8, in range: Range<Int>) -> Int? { bytes[range].firstIndex(of: byte) }
        func last(_ byte: UInt8, in range: Range<Int>) -> Int? { bytes[range].lastIndex(of: byte) }
        let slash = UInt8(ascii: "/")

        if bytes[start] == slash && (start + 1 == end || bytes[start + 1] != slash) {
            scheme = nil
            host = nil
            port = nil
        } else {
            guard let colon = first(UInt8(ascii: ":"), in: start..<end), Self.isLetter(bytes[start]),
                bytes[start..<colon].allSatisfy({
                    Self.isLetter($0) || Self.isDigit($0) || $0 == 0x2B || $0 == 0x2D || $0 == 0x2E
                })
            else { throw URLParseError(.missingScheme, input: text) }
            // ASCII letters, digits and `+-.` only: lowercased byte by byte.
            let parsedScheme = CaseFolding.lowercasedASCII(bytes[start..<colon])
            guard parsedScheme == "http" || parsedScheme == "https" else {
                throw URLParseError(.unsupportedScheme(parsedScheme), input: text)
            }
            start = colon + 1
            guard end - start >= 2, bytes[start] == slash, bytes[start + 1] == slash else {
                throw URLParseError(.missingHost, input: text)
            }
            start += 2
            let authorityEnd =
                bytes[start..<end].firstIndex(where: {
                    $0 == slash || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#")
                })
                ?? end
            let hostStart = last(UInt8(ascii: "@"), in: start..<authorityEnd).map { $0 + 1 } ?? start
            var hostEnd = authorityEnd
            var parsedPort: Int?
            // An IPv6 literal is bracketed and contains colons of its own (RFC 3986 §3.2.2).
            let portSearchStart = last(UInt8(ascii: "]"), in: hostStart..<authorityEnd) ?? hostStart
            if let portColon = last(UInt8(ascii: ":"), in: portSearchStart..<authorityEnd) {
                let digits = (portColon + 1)..<authorityEnd
                if !digits.isEmpty {
                    var value = 0
                    for byte in bytes[digits] {
                        guard Self.isDigit(byte) else { throw URLParseError(.invalidPort(string(digits)), input: text) }
                        value = value * 10 + Int(byte - 0x30)
                        guard value <= 65535 else { throw URLParseError(.invalidPort(string(digits)), input: text) }
                    }
                    parsedPort = value
                }
                hostEnd = portColon
            }
            guard hostStart < hostEnd else { throw URLParseError(.missingHost, input: text) }
            guard !bytes[hostStart..<hostEnd].contains(where: { $0 <= 0x20 || $0 == 0x7F }) else {
                throw URLParseError(.invalidHost(string(hostStart..<hostEnd)), input: text)
            }
            scheme = parsedScheme
            // A host in ASCII (nearly all) is lowercased byte by byte; any other as a String.
            let hostBytes = bytes[hostStart..<hostEnd]
            host =
                hostBytes.allSatisfy({ $0 < 0x80 })
                ? CaseFolding.lowercasedASCII(hostBytes)
                : string(hostStart..<hostEnd).lowercased()
            port = parsedPort
            start = authorityEnd
        }

        var fragmentPart: Range<Int>?
        if let hash = first(UInt8(ascii: "#"), in: start..<end) {
            fragmentPart = (hash + 1)..<end
            end = hash
        }
        var queryPart: Range<Int>?
        if let question = first(UInt8(ascii: "?"), in: start..<end) {
            queryPart = (question + 1)..<end
            end = question
        }
        path = PercentEncoding.encodeDisallowed(string(start..<end))
        query = queryPart.map { PercentEncoding.encodeDisallowed(string($0)) }
        fragment = fragmentPart.map { PercentEncoding.encodeDisallowed(string($0), alsoEncoding: UInt8(ascii: "#")) }
    }

    private static func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
}
