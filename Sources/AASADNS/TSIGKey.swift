import Foundation

/// A TSIG key (RFC 8945) that signs dynamic updates: its name, algorithm and shared secret, read from a file in BIND's
/// `key` format, as `tsig-keygen` writes it and Knot, PowerDNS and managed DNS services hand it out:
///
///     key "acme" {
///         algorithm hmac-sha256;
///         secret "base64…";
///     };
///
/// The secret is never printed: ``description`` names the key and its algorithm only.
public struct TSIGKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The key's name, which the server's configuration gives it (absolute, with its final dot).
    public var name: String
    /// The HMAC algorithm, as TSIG names it (`hmac-sha256.`).
    public var algorithm: String
    /// The shared secret as base64 text, checked to decode.
    var secret: String

    /// The algorithms a key may use.
    public static let algorithms = ["hmac-sha1", "hmac-sha224", "hmac-sha256", "hmac-sha384", "hmac-sha512"]

    /// The largest key file read: a key file is under 200 bytes.
    public static let maximumFileSize = 4096

    public var description: String { "TSIG key '\(DNSName.relative(name))' (\(DNSName.relative(algorithm)))" }
    public var debugDescription: String { description }

    /// Reads the one key in the file at `path`; the error names the file, the line and the fix.
    public init(contentsOf path: String) throws(DNSError) {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw DNSError(
                .configuration, "\(path): cannot read the TSIG key file",
                hint:
                    "give the file BIND's tsig-keygen wrote (key \"name\" { algorithm …; secret \"…\"; };), readable by "
                    + "the server")
        }
        defer { try? handle.close() }
        let bytes = (try? handle.read(upToCount: Self.maximumFileSize + 1)) ?? Data()
        guard bytes.count <= Self.maximumFileSize else {
            throw DNSError(
                .configuration, "\(path): larger than \(Self.maximumFileSize) bytes, which no TSIG key file is",
                hint: "give the file holding one key statement")
        }
        try self.init(parsing: String(decoding: bytes, as: UTF8.self), path: path)
    }

    /// Reads the one `key` statement of `text`, a key file's contents; `path` names it in errors.
    public init(parsing text: String, path: String) throws(DNSError) {
        var tokens = KeyFileTokens(text)
        func failure(_ message: String, line: Int? = nil) -> DNSError {
            DNSError(
                .configuration, "\(path):\(line ?? tokens.line): \(message)",
                hint: "write the key as tsig-keygen does: key \"name\" { algorithm hmac-sha256; secret \"base64\"; };")
        }
        func expect(_ token: String) throws(DNSError) {
            let next = tokens.next()
            guard next == token else {
                throw failure("expected '\(token)', found \(next.map { "'\($0)'" } ?? "the end")")
            }
        }
        guard tokens.next() == "key" else { throw failure("no key statement") }
        guard let name = tokens.next(), name != "{", let keyName = Self.unquoted(name), DNSName.isValid(keyName) else {
            throw failure("the key has no valid name")
        }
        try expect("{")
        var algorithm: String?
        var secret: String?
        while let field = tokens.next(), field != "}" {
            let line = tokens.line
            guard let value = tokens.next() else { throw failure("'\(field)' has no value") }
            try expect(";")
            switch field {
            case "algorithm": algorithm = Self.unquoted(value)?.lowercased()
            case "secret": secret = Self.unquoted(value)
            default: throw failure("unknown field '\(field)' (a key has algorithm and secret)", line: line)
            }
        }
        try expect(";")
        if let extra = tokens.next() { throw failure("'\(extra)' after the key statement: give a file with one key") }
        guard let algorithm else { throw failure("the key has no algorithm") }
        let bare = algorithm.hasSuffix(".") ? String(algorithm.dropLast()) : algorithm
        guard Self.algorithms.contains(bare) else {
            throw failure(
                "algorithm '\(algorithm)' is not supported (\(Self.algorithms.joined(separator: ", "))); hmac-md5 is "
                    + "obsolete")
        }
        guard let secret, let decoded = Data(base64Encoded: secret), decoded.count >= 16 else {
            throw failure("the key has no secret of at least 16 bytes in base64")
        }
        self.name = DNSName.absolute(keyName.lowercased())
        self.algorithm = bare + "."
        self.secret = secret
    }

    private static func unquoted(_ token: String) -> String? {
        guard token.hasPrefix("\"") else { return token }
        guard token.count >= 2, token.hasSuffix("\"") else { return nil }
        return String(token.dropFirst().dropLast())
    }
}

/// The tokens of a BIND configuration snippet: words, quoted strings, `{`, `}` and `;`, with `#`, `//` and `/* */`
/// comments left out; ``line`` is the line of the last token.
struct KeyFileTokens {
    private let bytes: [UInt8]
    private var index = 0
    private(set) var line = 1

    init(_ text: String) { bytes = Array(text.utf8) }

    mutating func next() -> String? {
        skipBlanks()
        guard index < bytes.count else { return nil }
        let start = index
        let byte = bytes[index]
        if byte == UInt8(ascii: "{") || byte == UInt8(ascii: "}") || byte == UInt8(ascii: ";") {
            index += 1
        } else if byte == UInt8(ascii: "\"") {
            index += 1
            while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\n") {
                index += 1
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "\"") { index += 1 }
        } else {
            while index < bytes.count, !Self.isDelimiter(bytes[index]) { index += 1 }
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    private static func isDelimiter(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == UInt8(ascii: "{")
            || byte == UInt8(ascii: "}") || byte == UInt8(ascii: ";") || byte == UInt8(ascii: "\"")
    }

    private mutating func skipBlanks() {
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0x0A {
                line += 1
                index += 1
            } else if byte == 0x20 || byte == 0x09 || byte == 0x0D {
                index += 1
            } else if byte == UInt8(ascii: "#")
                || (byte == UInt8(ascii: "/") && index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "/"))
            {
                while index < bytes.count, bytes[index] != 0x0A { index += 1 }
            } else if byte == UInt8(ascii: "/"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "*") {
                index += 2
                while index + 1 < bytes.count,
                    !(bytes[index] == UInt8(ascii: "*") && bytes[index + 1] == UInt8(ascii: "/"))
                {
                    if bytes[index] == 0x0A { line += 1 }
                    index += 1
                }
                index = min(index + 2, bytes.count)
            } else {
                return
            }
        }
    }
}
