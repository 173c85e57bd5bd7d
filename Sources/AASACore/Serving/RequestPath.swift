/// A request path made safe to look up in a page folder: the ONE place a raw request path is decoded.
///
/// The raw path is percent-decoded exactly once and then refused, rather than repaired, when it could
/// name anything outside the folder or anything hidden: `.` and `..` segments (raw or encoded), encoded
/// `/` or any `\`, NUL and other control bytes, a `%` that is not followed by two hex digits, an encoded
/// `%` (so nothing double-encoded such as `%252e` survives to be decoded again by anyone), bytes that are not valid UTF-8 (overlong forms such
/// as `%c0%ae` included), empty segments (`//`) and segments starting with `.` (dotfiles; only a first
/// segment `.well-known` is allowed, RFC 8615). A refused path is answered with 404, never a redirect.
public struct RequestPath: Sendable, Hashable, CustomStringConvertible {
    /// The decoded segments, none empty, none `.`/`..`, none hidden.
    public let segments: [String]
    /// Whether the path ended in `/` (a folder: `index.html` is served).
    public let isDirectory: Bool

    /// The longest raw path considered; longer ones are refused.
    public static let maximumLength = 4096

    /// Decodes and checks `raw` (the path as sent, without query); `nil` when it is refused.
    public init?(raw: UnsafeRawBufferPointer) {
        let count = raw.count
        guard count > 0, count <= Self.maximumLength, raw[0] == UInt8(ascii: "/") else { return nil }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(count)
        var index = 0
        var segments: [String] = []
        var segmentStart = 0
        func closeSegment() -> Bool {
            let bytes = decoded[segmentStart...]
            guard !bytes.isEmpty, bytes.first != UInt8(ascii: "."),
                let text = String(validating: bytes, as: UTF8.self)
            else {
                // `.well-known` is the one hidden name with a standard meaning, and only at the top.
                if segments.isEmpty, bytes.elementsEqual(".well-known".utf8) {
                    segments.append(".well-known")
                    return true
                }
                return false
            }
            segments.append(text)
            return true
        }
        index = 1
        segmentStart = 0
        while index < count {
            var byte = raw[index]
            if byte == UInt8(ascii: "/") {
                guard closeSegment() else { return nil }
                decoded.removeAll(keepingCapacity: true)
                segmentStart = 0
                index += 1
                continue
            }
            if byte == UInt8(ascii: "%") {
                guard index + 2 < count, let high = Self.hexValue(raw[index + 1]),
                    let low = Self.hexValue(raw[index + 2])
                else { return nil }
                byte = high << 4 | low
                // An encoded separator or escape is never a file name character.
                if byte == UInt8(ascii: "/") || byte == UInt8(ascii: "%") { return nil }
                index += 3
            } else {
                index += 1
            }
            if byte < 0x20 || byte == 0x7F || byte == UInt8(ascii: "\\") { return nil }
            decoded.append(byte)
        }
        if decoded.isEmpty {
            isDirectory = true
        } else {
            guard closeSegment() else { return nil }
            isDirectory = false
        }
        self.segments = segments
    }

    /// `init(raw:)` for a Swift string (tests, tools).
    public init?(_ text: String) {
        var bytes = Array(text.utf8)
        guard let path = bytes.withUnsafeMutableBytes({ RequestPath(raw: UnsafeRawBufferPointer($0)) }) else {
            return nil
        }
        self = path
    }

    /// The decoded path, e.g. `/about/` or `/img/logo.png`.
    public var description: String {
        "/" + segments.joined(separator: "/") + (isDirectory && !segments.isEmpty ? "/" : "")
    }

    /// The keys a page folder is looked up with, best first: the file itself, then the folder's `index.html`.
    public var lookupKeys: [String] {
        let joined = "/" + segments.joined(separator: "/")
        if isDirectory { return [segments.isEmpty ? "/index.html" : joined + "/index.html"] }
        return [joined, joined + "/index.html"]
    }

    /// The value of one hex digit of a percent-escape (either case), or `nil` for any other byte.
    public static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
