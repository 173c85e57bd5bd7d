/// Serialises ``JSONValue`` deterministically: members in the order given, UTF-8 without BOM,
/// `/` never escaped, so the same input always gives the same bytes (and the same ETag).
public struct JSONWriter: Sendable {
    /// Output layout.
    public enum Style: Sendable {
        /// No whitespace at all: what we serve (spec §3.5: serialise compactly).
        case compact
        /// Two-space indentation and a final newline: what we write for people to edit.
        case pretty
    }

    /// The layout used.
    public var style: Style

    /// Creates a writer.
    public init(style: Style = .compact) {
        self.style = style
    }

    /// The serialised bytes of `value`.
    public func bytes(_ value: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(value, indent: 0, into: &out)
        if style == .pretty { out.append(0x0A) }
        // Exactly as long as the text: generated files are kept for as long as they are served, thousands of them,
        // and a grown array holds up to twice its length.
        return out.withUnsafeBufferPointer { Array($0) }
    }

    /// The serialised text of `value`.
    public func string(_ value: JSONValue) -> String {
        String(decoding: bytes(value), as: UTF8.self)
    }

    private func newline(_ indent: Int, into out: inout [UInt8]) {
        guard style == .pretty else { return }
        out.append(0x0A)
        out.append(contentsOf: repeatElement(0x20, count: indent * 2))
    }

    private func write(_ value: JSONValue, indent: Int, into out: inout [UInt8]) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let flag): out.append(contentsOf: (flag ? "true" : "false").utf8)
        case .number(let number): out.append(contentsOf: Self.format(number).utf8)
        case .string(let text): Self.writeString(text, into: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            // Short arrays of scalars stay on one line in pretty output: easier to read in site.json.
            let inline = style == .pretty && elements.allSatisfy(\.value.isScalar) && elements.count <= 4
            for (index, element) in elements.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")); if inline { out.append(0x20) } }
                if !inline { newline(indent + 1, into: &out) }
                write(element.value, indent: indent + 1, into: &out)
            }
            if !elements.isEmpty && !inline { newline(indent, into: &out) }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (index, member) in members.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                newline(indent + 1, into: &out)
                Self.writeString(member.key, into: &out)
                out.append(UInt8(ascii: ":"))
                if style == .pretty { out.append(0x20) }
                write(member.value.value, indent: indent + 1, into: &out)
            }
            if !members.isEmpty { newline(indent, into: &out) }
            out.append(UInt8(ascii: "}"))
        }
    }

    static func format(_ number: Double) -> String {
        if number.isFinite, number == number.rounded(), abs(number) < 1e15 {
            return String(Int64(number))
        }
        return number.isFinite ? "\(number)" : "null"
    }

    /// Whether any of the eight bytes of `word` may need an escape: one the parser's string scan looks at (a quote,
    /// a backslash, a control character, or, looked at one by one then, any byte above 0x7F), or DEL.
    static func mayNeedEscape(_ word: UInt64) -> Bool {
        JSONParser.needsLook(word) || ByteWord.hasByte(0x7F, in: word)
    }

    /// Appends `text` as a JSON string literal (RFC 8259 §7: escape `"`, `\` and controls only).
    public static func writeString(_ text: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Most strings need no escape: looked at and copied whole, as the contiguous bytes a string holds (read in
        // place: `withUTF8` wants a copy of the string to call on, a retain and a release for every string written).
        let copied = text.utf8.withContiguousStorageIfAvailable { bytes in
            var index = 0
            // Eight bytes at a time while none may need an escape (``mayNeedEscape(_:)``), then byte by byte.
            while index + 8 <= bytes.count,
                !Self.mayNeedEscape(UnsafeRawPointer(bytes.baseAddress! + index).loadUnaligned(as: UInt64.self))
            {
                index += 8
            }
            for byte in bytes[index...]
            where byte < 0x20 || byte == 0x7F || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                return false
            }
            out.append(contentsOf: bytes)
            return true
        }
        if copied == true {
            out.append(UInt8(ascii: "\""))
            return
        }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): out.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0x00..<0x20, 0x7F:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

extension JSONValue {
    /// Whether this is neither an array nor an object.
    public var isScalar: Bool {
        switch self {
        case .array, .object: false
        default: true
        }
    }

    /// Builds an object from key/value pairs in the given order.
    public static func members(_ pairs: [(String, JSONValue)]) -> JSONValue {
        .object(pairs.map { JSONMember(key: $0.0, value: JSONNode($0.1)) })
    }

    /// Builds an array of strings.
    public static func strings(_ values: [String]) -> JSONValue {
        .array(values.map { JSONNode(.string($0)) })
    }
}
