import AASACore
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `--admin-token-file`: the admin listener's bearer tokens.
///
/// One token a line, `NAME SCOPE TOKEN` (``AdminToken``): `NAME` letters, digits, `.`, `_` and `-`, at most
/// ``maximumNameLength`` characters, unique; `SCOPE` `read` or `write`; `TOKEN` printable ASCII, at least
/// ``minimumTokenLength`` characters, unique. Blank lines and lines starting with `#` are ignored. A file that holds
/// only a bare token (the single-token format) keeps working: a `write` token named `admin`.
extension AdminAccess {
    /// Why a token file was refused.
    public struct TokenFileError: Error, CustomStringConvertible, Sendable {
        /// The message: the file (and line), what is wrong and how to fix it.
        public var description: String
    }

    /// The largest token file read: checked before it is read.
    static let maximumTokenFileBytes = 64 * 1024
    /// The most tokens a file may hold: each request to a token route compares with all of them.
    static let maximumTokens = 1000
    /// The shortest token of a `NAME SCOPE TOKEN` line (a bare token keeps the single-token format's rules).
    static let minimumTokenLength = 16
    /// The longest token name.
    static let maximumNameLength = 64

    /// Reads the tokens of `path` (``parseTokens(_:path:)``).
    ///
    /// - Throws: ``TokenFileError`` when the file cannot be read, is larger than 64 KiB, other users can read it
    ///   (the rule of ``PrivateKeyPermissions``: a group the server runs with may), or a line is malformed.
    public static func readTokens(path: String) throws(TokenFileError) -> [AdminToken] {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw TokenFileError(
                description: "\(path): error: cannot read the admin token file: \(String(cString: strerror(errno)))")
        }
        let mode = UInt32(info.st_mode) & 0o7777
        if let exposure = PrivateKeyPermissions.exposure(
            mode: mode, group: UInt32(info.st_gid), processGroups: PrivateKeyPermissions.processGroups())
        {
            throw TokenFileError(
                description: "\(path): error: the admin token file has mode \(String(mode, radix: 8)): \(exposure), "
                    + "so other users on this machine can read the token; fix: chmod 600 \(path)")
        }
        guard info.st_size <= maximumTokenFileBytes, let data = FileManager.default.contents(atPath: path),
            data.count <= maximumTokenFileBytes
        else {
            throw TokenFileError(
                description: "\(path): error: the admin token file is not a readable file of at most "
                    + "\(maximumTokenFileBytes) bytes")
        }
        return try parseTokens([UInt8](data), path: path)
    }

    /// The tokens in the content of a token file; `path` names it in errors.
    ///
    /// - Throws: ``TokenFileError`` naming `path:line` for a malformed line, a duplicate name or token, a token
    ///   shorter than 16 characters, or an unknown scope; naming `path` for an empty file or one with more than
    ///   ``maximumTokens`` tokens.
    public static func parseTokens(_ content: [UInt8], path: String) throws(TokenFileError) -> [AdminToken] {
        func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        func isPrintable(_ bytes: some Collection<UInt8>) -> Bool { bytes.allSatisfy { $0 > 0x20 && $0 < 0x7F } }
        let example = "e.g. ci-deploy write $(openssl rand -hex 32)"

        // The single-token format: the whole file (but a final newline) is the token.
        var whole = content
        if whole.last == UInt8(ascii: "\n") { whole.removeLast() }
        if whole.last == UInt8(ascii: "\r") { whole.removeLast() }
        guard !whole.isEmpty else {
            throw TokenFileError(
                description: "\(path): error: the admin token file is empty; fix: write a token into it, e.g. "
                    + "openssl rand -hex 32 > \(path) && chmod 600 \(path)")
        }
        if !whole.contains(where: { isBlank($0) || $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") }) {
            guard isPrintable(whole) else {
                throw TokenFileError(
                    description: "\(path): error: the admin token must be printable ASCII without spaces (it is sent "
                        + "in an Authorization header); fix: openssl rand -hex 32 > \(path)")
            }
            return [AdminToken(name: "admin", scope: .write, bytes: whole)]
        }

        var tokens: [AdminToken] = []
        var names: [String: Int] = [:]
        var digests: [[UInt8]: Int] = [:]
        var bare: (line: Int, token: [UInt8])?
        for (index, rawLine) in content.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            .enumerated()
        {
            let number = index + 1
            let line = rawLine.last == UInt8(ascii: "\r") ? rawLine.dropLast() : rawLine
            let fields = line.split(whereSeparator: isBlank)
            guard let first = fields.first, first.first != UInt8(ascii: "#") else { continue }
            func refuse(_ message: String) -> TokenFileError {
                TokenFileError(description: "\(path):\(number): error: \(message)")
            }
            guard fields.allSatisfy({ isPrintable($0) }) else {
                throw refuse(
                    "the line holds a byte that is not printable ASCII; each line is NAME SCOPE TOKEN, the token "
                        + "printable ASCII without spaces; fix: \(example)")
            }
            if fields.count == 1 {
                // A bare token among comments: the single-token format, if it is the file's only token.
                guard bare == nil, tokens.isEmpty else {
                    throw refuse(
                        "a bare token (one field) is only allowed as the file's only token; fix: write it as "
                            + "NAME SCOPE TOKEN, \(example)")
                }
                bare = (number, Array(first))
                continue
            }
            guard fields.count == 3 else {
                throw refuse(
                    "\(fields.count) fields; each line is NAME SCOPE TOKEN (SCOPE read or write, the token printable "
                        + "ASCII without spaces and at least \(minimumTokenLength) characters); fix: \(example)")
            }
            if let bare {
                throw TokenFileError(
                    description: "\(path):\(bare.line): error: a bare token (one field) is only allowed as the file's "
                        + "only token; fix: write it as NAME SCOPE TOKEN, \(example)")
            }
            let name = String(decoding: fields[0], as: UTF8.self)
            let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-".utf8)
            guard fields[0].count <= maximumNameLength, fields[0].allSatisfy(allowed.contains) else {
                throw refuse(
                    "token name '\(UTF8Bound.prefix(name, bytes: maximumNameLength))' must be letters, digits, '.', '_' or '-', at "
                        + "most \(maximumNameLength) characters; fix: \(example)")
            }
            guard let scope = AdminToken.Scope(rawValue: String(decoding: fields[1], as: UTF8.self)) else {
                throw refuse(
                    "scope '\(String(decoding: fields[1].prefix(16), as: UTF8.self))' of token '\(name)' is neither "
                        + "read nor write; fix: \(name) read <token> or \(name) write <token>")
            }
            guard fields[2].count >= minimumTokenLength else {
                throw refuse(
                    "token '\(name)' has \(fields[2].count) characters, fewer than \(minimumTokenLength); fix: a "
                        + "random one, e.g. \(name) \(scope.rawValue) $(openssl rand -hex 32)")
            }
            if let earlier = names[name] {
                throw refuse(
                    "token name '\(name)' is already used on line \(earlier); fix: give each token its own name")
            }
            let token = AdminToken(name: name, scope: scope, bytes: Array(fields[2]))
            if let earlier = digests[token.digest] {
                throw refuse(
                    "token '\(name)' is the same token as line \(earlier)'s; fix: give each holder its own, e.g. "
                        + "\(name) \(scope.rawValue) $(openssl rand -hex 32)")
            }
            guard tokens.count < maximumTokens else {
                throw refuse("more than \(maximumTokens) tokens; fix: remove the tokens no one uses")
            }
            names[name] = number
            digests[token.digest] = number
            tokens.append(token)
        }
        if let bare { return [AdminToken(name: "admin", scope: .write, bytes: bare.token)] }
        guard !tokens.isEmpty else {
            throw TokenFileError(
                description: "\(path): error: the admin token file holds no token, only comments and blank lines; "
                    + "fix: add a line NAME SCOPE TOKEN, \(example)")
        }
        return tokens
    }
}
