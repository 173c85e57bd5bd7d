/// A part of a URL that rules put conditions on: one dimension of the space of URLs the semantic diff
/// reasons about (spec §2.3: path, query and fragment are compared separately; §2.4: each query item on its own).
public enum URLPart: Hashable, Sendable, Comparable, CustomStringConvertible {
    case path
    /// The whole query string (Apple's string form of `?`).
    case query
    case fragment
    /// The values of the query items with exactly this name.
    case item(String)

    public var description: String {
        switch self {
        case .path: "path"
        case .query: "query"
        case .fragment: "fragment"
        case .item(let name): "query item \(name)"
        }
    }
}

/// What the texts of one ``URLPart`` can be, as the rules read them.
struct PartSpace: Hashable, Sendable {
    enum Shape: Hashable, Sendable {
        /// Any text.
        case free
        /// Apple's path: end slashes are stripped before matching (spec §2.1), so no text starts or ends with `/`.
        case trimmedPath
        /// Android's path: it always starts with `/` (`/` for an empty path).
        case rootedPath
    }

    var shape: Shape
    /// The text as the URL carries it, percent-encoded ASCII (Apple's `percentEncoded: true`, spec §2.6); else
    /// decoded, which any text can be.
    var encoded: Bool
    /// What the part is, for encoding examples.
    var part: URLPart

    /// Whether texts of this part can contain `scalar`: an encoded part holds only the ASCII a URL carries
    /// literally there (``PercentEncoding`` encodes the rest), a decoded one anything.
    func allows(_ scalar: UInt32) -> Bool {
        guard encoded else { return true }
        guard scalar > 0x20, scalar < 0x7F, !Self.alwaysEncoded.contains(scalar) else { return false }
        switch part {
        case .path: return scalar != 0x3F && scalar != 0x23  // `?` and `#` end the path
        case .query, .item: return scalar != 0x23
        case .fragment: return scalar != 0x23
        }
    }

    /// `"<>\^`{|}`: percent-encoded wherever they appear (``MatchURL``).
    private static let alwaysEncoded: Set<UInt32> = Set("\"<>\\^`{|}".unicodeScalars.map(\.value))

    /// `text` as written in a URL: as is when encoded; else percent-encoded (UTF-8) except unreserved
    /// characters and, in a path, `/`.
    func urlText(_ text: [UInt32]) -> String {
        let string = String(String.UnicodeScalarView(text.compactMap(Unicode.Scalar.init)))
        if encoded { return string }
        return PercentEncoding.encode(string) { byte in
            !(byte < 0x80 && (Self.unreserved.contains(Unicode.Scalar(byte)) || (part == .path && byte == 0x2F)))
        }
    }

    private static let unreserved = Set(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".unicodeScalars)
}
