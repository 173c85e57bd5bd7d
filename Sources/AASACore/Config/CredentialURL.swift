/// A URL of the credential endpoints (`passkeys` members, `changePassword`), as the server accepts it: an absolute
/// `https` URL with a host, of visible ASCII only, at most ``maximumBytes`` long.
///
/// The same check decides what is served: a value that fails it is never put in a `Location` header or the
/// passkey document, so a line break can never split a response, whatever the load let through.
public struct CredentialURL: Sendable, Hashable {
    /// The longest URL accepted, in bytes: browsers and proxies commonly cap URLs near 2 KB (the sitemaps
    /// protocol's 2,048 characters), and a longer target only makes the redirect and the document larger.
    public static let maximumBytes = 2_048

    /// Why a URL is refused.
    public enum Problem: Error, Hashable {
        /// Over ``maximumBytes``.
        case tooLong(Int)
        /// A byte outside `!`…`~` (a space, a control character, a line break, non-ASCII) or a backslash, which
        /// WHATWG URL parsers read as `/` and others do not.
        case character(String)
        /// Not `https://`.
        case scheme
        /// No host, or a user name or password before it.
        case authority
    }

    /// The host, lower case, without the port or a final dot.
    public let host: String
    /// The path, from the first `/` after the host to the query or fragment (`/` when there is none).
    public let path: String

    /// Parses `text`, or throws why it is refused.
    public init(_ text: String) throws(Problem) {
        let bytes = Array(text.utf8)
        guard bytes.count <= Self.maximumBytes else { throw .tooLong(bytes.count) }
        if let bad = bytes.first(where: { $0 < 0x21 || $0 > 0x7E || $0 == UInt8(ascii: "\\") }) {
            throw .character(bad < 0x80 ? "0x" + String(bad, radix: 16, uppercase: true) : "non-ASCII")
        }
        let scheme = "https://"
        guard bytes.count > scheme.utf8.count, String(decoding: bytes.prefix(8), as: UTF8.self).lowercased() == scheme
        else { throw .scheme }
        let rest = bytes.dropFirst(8)
        let authorityEnd =
            rest.firstIndex(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") })
            ?? rest.endIndex
        let authority = rest[rest.startIndex..<authorityEnd]
        guard !authority.isEmpty, !authority.contains(UInt8(ascii: "@")) else { throw .authority }
        var hostBytes = authority
        if authority.first == UInt8(ascii: "[") {
            guard let close = authority.firstIndex(of: UInt8(ascii: "]")) else { throw .authority }
            hostBytes = authority[authority.startIndex...close]
            let port = authority[(close + 1)...]
            guard port.isEmpty || Self.isPort(port) else { throw .authority }
        } else if let colon = authority.firstIndex(of: UInt8(ascii: ":")) {
            hostBytes = authority[authority.startIndex..<colon]
            guard Self.isPort(authority[colon...]) else { throw .authority }
        }
        guard !hostBytes.isEmpty else { throw .authority }
        var host = String(decoding: hostBytes, as: UTF8.self).lowercased()
        if host.hasSuffix(".") { host.removeLast() }
        guard !host.isEmpty else { throw .authority }
        self.host = host
        let pathEnd =
            rest[authorityEnd...].firstIndex(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") })
            ?? rest.endIndex
        let path = String(decoding: rest[authorityEnd..<pathEnd], as: UTF8.self)
        self.path = path.isEmpty ? "/" : path
    }

    /// `:` followed by 1 to 5 digits.
    private static func isPort(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard bytes.first == UInt8(ascii: ":") else { return false }
        let digits = bytes.dropFirst()
        return !digits.isEmpty && digits.count <= 5 && digits.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }

    /// Whether `text` is served: it parses.
    public static func isServable(_ text: String) -> Bool {
        (try? CredentialURL(text)) != nil
    }

    /// Whether the host is `domain` or a subdomain of it.
    public func isOn(_ domain: String) -> Bool {
        host == domain || host.hasSuffix("." + domain)
    }
}
