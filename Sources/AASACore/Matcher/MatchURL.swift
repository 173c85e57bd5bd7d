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
    /// Split on the UTF-8 bytes: every delimiter is ASCII, and a start parses every domain's link tests (through
    /// `Character`s, this was 4 % of a start at 100,000 domains).
    public init(parsing text: String) throws(URLParseError) {
        let length = text.utf8.count
        guard length <= Self.maximumLength else { throw URLParseError(.tooLong(length), input: "") }
        let trimmed = Self.trimmed(text)
        guard !trimmed.isEmpty else { throw URLParseError(.empty, input: text) }
        var rest = Substring(trimmed).utf8
        let slash = UInt8(ascii: "/")

        if rest.first == slash && rest.dropFirst().first != slash {
            scheme = nil
            host = nil
            port = nil
        } else {
            guard let colon = rest.firstIndex(of: UInt8(ascii: ":")), let first = rest.first, Self.isLetter(first),
                rest[..<colon].allSatisfy({
                    Self.isLetter($0) || Self.isDigit($0) || $0 == 0x2B || $0 == 0x2D || $0 == 0x2E
                })
            else { throw URLParseError(.missingScheme, input: text) }
            let parsedScheme = Substring(rest[..<colon]).lowercased()
            guard parsedScheme == "http" || parsedScheme == "https" else {
                throw URLParseError(.unsupportedScheme(parsedScheme), input: text)
            }
            rest = rest[rest.index(after: colon)...]
            guard rest.starts(with: [slash, slash]) else { throw URLParseError(.missingHost, input: text) }
            rest = rest.dropFirst(2)
            let authorityEnd =
                rest.firstIndex(where: { $0 == slash || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") })
                ?? rest.endIndex
            let authority = rest[..<authorityEnd]
            rest = rest[authorityEnd...]
            let hostAndPort =
                authority.lastIndex(of: UInt8(ascii: "@")).map { authority[authority.index(after: $0)...] } ?? authority
            var hostPart = hostAndPort
            var parsedPort: Int?
            // An IPv6 literal is bracketed and contains colons of its own (RFC 3986 §3.2.2).
            let portSearchStart = hostAndPort.lastIndex(of: UInt8(ascii: "]")) ?? hostAndPort.startIndex
            if let portColon = hostAndPort[portSearchStart...].lastIndex(of: UInt8(ascii: ":")) {
                let digits = hostAndPort[hostAndPort.index(after: portColon)...]
                if !digits.isEmpty {
                    guard digits.allSatisfy(Self.isDigit), let value = Int(Substring(digits)), value <= 65535
                    else { throw URLParseError(.invalidPort(String(Substring(digits))), input: text) }
                    parsedPort = value
                }
                hostPart = hostAndPort[..<portColon]
            }
            guard !hostPart.isEmpty else { throw URLParseError(.missingHost, input: text) }
            guard !hostPart.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else {
                throw URLParseError(.invalidHost(String(Substring(hostPart))), input: text)
            }
            scheme = parsedScheme
            host = Substring(hostPart).lowercased()
            port = parsedPort
        }

        var fragmentPart: Substring.UTF8View?
        if let hash = rest.firstIndex(of: UInt8(ascii: "#")) {
            fragmentPart = rest[rest.index(after: hash)...]
            rest = rest[..<hash]
        }
        var queryPart: Substring.UTF8View?
        if let question = rest.firstIndex(of: UInt8(ascii: "?")) {
            queryPart = rest[rest.index(after: question)...]
            rest = rest[..<question]
        }
        path = PercentEncoding.encodeDisallowed(String(Substring(rest)))
        query = queryPart.map { PercentEncoding.encodeDisallowed(String(Substring($0))) }
        fragment = fragmentPart.map {
            PercentEncoding.encodeDisallowed(String(Substring($0)), alsoEncoding: UInt8(ascii: "#"))
        }
    }

    private static func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    private static func trimmed(_ text: String) -> String {
        let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
        guard let first = text.utf8.firstIndex(where: { !isSpace($0) }),
            let last = text.utf8.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(Substring(text.utf8[first...last]))
    }
}
