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

    /// Splits `text` into its parts.
    ///
    /// Accepts absolute `http`/`https` URLs with a host, and, for convenience, path-only input starting with
    /// a single `/` (`/buy/x?id=1#top`), which is matched as if it were on the file's own domain.
    public init(parsing text: String) throws(URLParseError) {
        let trimmed = Self.trimmed(text)
        guard !trimmed.isEmpty else { throw URLParseError(.empty, input: text) }
        var rest = Substring(trimmed)

        if rest.hasPrefix("/") && !rest.hasPrefix("//") {
            scheme = nil
            host = nil
            port = nil
        } else {
            guard let colon = rest.firstIndex(of: ":"),
                let first = rest.first, first.isASCII, first.isLetter,
                rest[..<colon].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) })
            else { throw URLParseError(.missingScheme, input: text) }
            let parsedScheme = rest[..<colon].lowercased()
            guard parsedScheme == "http" || parsedScheme == "https" else {
                throw URLParseError(.unsupportedScheme(parsedScheme), input: text)
            }
            rest = rest[rest.index(after: colon)...]
            guard rest.hasPrefix("//") else { throw URLParseError(.missingHost, input: text) }
            rest = rest.dropFirst(2)
            let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
            let authority = rest[..<authorityEnd]
            rest = rest[authorityEnd...]
            let hostAndPort = authority.lastIndex(of: "@").map { authority[authority.index(after: $0)...] } ?? authority
            var hostPart = hostAndPort
            var parsedPort: Int?
            // An IPv6 literal is bracketed and contains colons of its own (RFC 3986 §3.2.2).
            let portSearchStart = hostAndPort.lastIndex(of: "]") ?? hostAndPort.startIndex
            if let portColon = hostAndPort[portSearchStart...].lastIndex(of: ":") {
                let digits = hostAndPort[hostAndPort.index(after: portColon)...]
                if !digits.isEmpty {
                    guard digits.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(digits), value <= 65535
                    else { throw URLParseError(.invalidPort(String(digits)), input: text) }
                    parsedPort = value
                }
                hostPart = hostAndPort[..<portColon]
            }
            guard !hostPart.isEmpty else { throw URLParseError(.missingHost, input: text) }
            guard !hostPart.contains(where: { $0 == " " || $0.asciiValue.map { $0 < 0x20 || $0 == 0x7F } == true })
            else { throw URLParseError(.invalidHost(String(hostPart)), input: text) }
            scheme = parsedScheme
            host = hostPart.lowercased()
            port = parsedPort
        }

        var fragmentPart: Substring?
        if let hash = rest.firstIndex(of: "#") {
            fragmentPart = rest[rest.index(after: hash)...]
            rest = rest[..<hash]
        }
        var queryPart: Substring?
        if let question = rest.firstIndex(of: "?") {
            queryPart = rest[rest.index(after: question)...]
            rest = rest[..<question]
        }
        path = PercentEncoding.encodeDisallowed(String(rest))
        query = queryPart.map { PercentEncoding.encodeDisallowed(String($0)) }
        fragment = fragmentPart.map { PercentEncoding.encodeDisallowed(String($0), alsoEncoding: UInt8(ascii: "#")) }
    }

    private static func trimmed(_ text: String) -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let first = text.firstIndex(where: { !isSpace($0) }),
            let last = text.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(text[first...last])
    }
}
