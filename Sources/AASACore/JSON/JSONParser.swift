/// A strict RFC 8259 parser that records positions and explains the mistakes people really make
/// in association files: comments, trailing commas, typographic quotes, unquoted keys, a BOM
/// (spec §8 items 1 and 6; corpus tags `js-comments`, `trailing-comma`, `smart-quotes`, …).
///
/// It never recurses deeper than ``maximumDepth`` and never reads past ``maximumBytes``, so hostile
/// input gets an error, not a crash or a hang.
public struct JSONParser: Sendable {
    /// The deepest nesting accepted; association files and configs need fewer than ten levels.
    public var maximumDepth = 64
    /// The largest input accepted.
    public var maximumBytes = 16 << 20

    /// Creates a parser with the default limits.
    public init() {}

    /// The parsed document and non-fatal findings (a BOM, duplicate keys).
    public struct Result: Sendable {
        /// The root value.
        public var root: JSONNode
        /// Findings that did not stop the parse: a BOM (warning), duplicate keys (errors).
        public var diagnostics: [Diagnostic]
    }

    /// Parses `source`, or throws a ``Diagnostic`` at the first point where it stops being JSON.
    public func parse(_ source: SourceText) throws(Diagnostic) -> Result {
        var scanner = Scanner(source: source, maximumDepth: maximumDepth)
        if source.bytes.count > maximumBytes {
            throw source.diagnostic(
                .error, rule: .fileTooLarge,
                "file is \(source.bytes.count) bytes; the limit is \(maximumBytes)", at: 0,
                hint: "check that this is the right file: association and config files are far smaller")
        }
        if let bad = Self.firstInvalidUTF8Offset(source.bytes) {
            throw source.diagnostic(
                .error, rule: .notUTF8,
                "file is not valid UTF-8 (byte 0x\(String(source.bytes[bad], radix: 16, uppercase: true)))",
                at: bad, keyPath: keyPath(before: bad, in: source)?.description,
                hint: "save the file as UTF-8 (it may be Latin-1 or Windows-1252)")
        }
        var diagnostics: [Diagnostic] = []
        if source.bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            diagnostics.append(
                source.diagnostic(
                    .warning, rule: .bom, "file starts with a UTF-8 byte order mark", at: 0,
                    hint: "save the file as UTF-8 without BOM; some JSON readers reject it"))
            scanner.index = 3
        }
        scanner.skipWhitespace()
        if scanner.atEnd {
            throw source.diagnostic(.error, rule: .invalidJSON, "file is empty; expected a JSON value", at: 0)
        }
        if let other = Self.otherFormat(source, at: scanner.index) { throw other }
        let root = try scanner.parseValue(depth: 0)
        scanner.skipWhitespace()
        if !scanner.atEnd {
            if case .string = root.value, scanner.current == UInt8(ascii: ":") {
                throw scanner.error(
                    "the file is a list of \"key\": value pairs without the outer { }", at: root.offset,
                    hint: "wrap the whole content in { and }")
            }
            throw scanner.error("unexpected \(scanner.describeCurrent()) after the end of the JSON value")
        }
        return Result(root: root, diagnostics: diagnostics + scanner.duplicateKeys)
    }

    /// The key path of the value being read at `offset`: the scanner runs on the bytes before it and stops there,
    /// which keeps the search off the normal path (only a file that fails gets it). `nil` before the first value.
    func keyPath(before offset: Int, in source: SourceText) -> KeyPath? {
        let prefix = SourceText(name: source.name, bytes: Array(source.bytes[..<offset]))
        var scanner = Scanner(source: prefix, maximumDepth: maximumDepth)
        if prefix.bytes.starts(with: [0xEF, 0xBB, 0xBF]) { scanner.index = 3 }
        scanner.skipWhitespace()
        do {
            _ = try scanner.parseValue(depth: 0)
        } catch {
            return scanner.path.isEmpty ? nil : KeyPath(scanner.pathComponents())
        }
        return nil
    }

    /// Recognises documents that are not JSON at all (corpus tags `rtf`, `html`, `front-matter`), so the
    /// message names the real problem instead of the first odd character.
    static func otherFormat(_ source: SourceText, at start: Int) -> Diagnostic? {
        let head = String(decoding: source.bytes[start..<min(source.bytes.count, start + 16)], as: UTF8.self)
        if head.hasPrefix("{\\rtf") {
            return source.diagnostic(
                .error, rule: .invalidJSON, "this is an RTF document, not JSON", at: start,
                hint: "save it as plain text (TextEdit: Format › Make Plain Text) with the JSON only")
        }
        if head.hasPrefix("<") {
            return source.diagnostic(
                .error, rule: .invalidJSON, "this is an HTML or XML document, not JSON", at: start,
                hint: "use the JSON file itself; a web server or framework may have answered with a page")
        }
        if head.hasPrefix("---") {
            return source.diagnostic(
                .error, rule: .invalidJSON, "the file starts with front matter (---), which is not JSON",
                at: start, hint: "remove the --- block; static site generators strip it, so import the file as served")
        }
        return nil
    }

    /// Offset of the first byte that breaks UTF-8, or `nil` when the bytes are valid.
    static func firstInvalidUTF8Offset(_ bytes: [UInt8]) -> Int? {
        bytes.withUnsafeBufferPointer { firstInvalidUTF8Offset(in: $0) }
    }

    private static func firstInvalidUTF8Offset(in bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        var index = 0
        while index < bytes.count {
            // Eight ASCII bytes at a time: a site.json is mostly ASCII.
            if index + 8 <= bytes.count,
                UnsafeRawPointer(bytes.baseAddress! + index).loadUnaligned(as: UInt64.self) & 0x8080_8080_8080_8080 == 0
            {
                index += 8
                continue
            }
            let lead = bytes[index]
            let length: Int
            switch lead {
            case 0x00...0x7F: index += 1; continue
            case 0xC2...0xDF: length = 2
            case 0xE0...0xEF: length = 3
            case 0xF0...0xF4: length = 4
            default: return index
            }
            guard index + length <= bytes.count else { return index }
            for k in 1..<length where bytes[index + k] & 0xC0 != 0x80 { return index }
            // Reject overlong forms, surrogates and code points above U+10FFFF.
            let second = bytes[index + 1]
            if lead == 0xE0 && second < 0xA0 { return index }
            if lead == 0xED && second > 0x9F { return index }
            if lead == 0xF0 && second < 0x90 { return index }
            if lead == 0xF4 && second > 0x8F { return index }
            index += length
        }
        return nil
    }
}

private struct Scanner {
    let source: SourceText
    let maximumDepth: Int
    var index = 0
    /// Offset of a typographic quote inside the last string read: a likely unclosed string (corpus 106).
    var smartQuoteInLastString: Int?
    /// Where the value being parsed sits, for the key path of a finding: each key by where it is in the source, read
    /// again only for a finding (a key kept here would be retained and released for every member of every object).
    var path: [PathStep] = []

    /// A step of ``path``.
    enum PathStep {
        /// The member whose key starts at this offset (its opening quote).
        case key(at: Int)
        /// The array element of this index.
        case index(Int)
    }
    /// The keys of ``path`` read again for findings, by where they start (``key(at:)``).
    var keysRead: [Int: String] = [:]
    /// One error per repeated key. Parsing goes on, so the rest of the file is still checked.
    var duplicateKeys: [Diagnostic] = []

    /// `source.bytes`, held directly: reading through `source` copies the whole struct per byte in a debug build.
    let bytes: [UInt8]

    init(source: SourceText, maximumDepth: Int) {
        self.source = source
        self.maximumDepth = maximumDepth
        self.bytes = source.bytes
    }

    /// ``path`` as key path components, each key read again from the source.
    mutating func pathComponents() -> [KeyPath.Component] {
        var components: [KeyPath.Component] = []
        components.reserveCapacity(path.count)
        for step in path {
            switch step {
            case .index(let index): components.append(.index(index))
            case .key(let offset): components.append(.key(key(at: offset)))
            }
        }
        return components
    }

    /// The key whose opening quote is at `offset`, read again from the source once and kept in ``keysRead``: a file of
    /// thousands of repeated keys below one long key reads that key once, not once per finding.
    mutating func key(at offset: Int) -> String {
        if let known = keysRead[offset] { return known }
        var scanner = self
        scanner.index = offset
        let key = (try? scanner.parseString()) ?? ""
        keysRead[offset] = key
        return key
    }

    var atEnd: Bool { index >= bytes.count }
    var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    func error(_ message: String, at offset: Int? = nil, hint: String? = nil) -> Diagnostic {
        source.diagnostic(.error, rule: .invalidJSON, message, at: offset ?? index, hint: hint)
    }

    /// A readable name for what stands at the cursor, e.g. `'}'` or `end of file`.
    func describeCurrent() -> String {
        guard let byte = current else { return "end of file" }
        if byte < 0x80 {
            if byte < 0x20 { return "control character 0x\(String(byte, radix: 16))" }
            return "'\(Character(Unicode.Scalar(byte)))'"
        }
        return "'\(characterAt(index))'"
    }

    func characterAt(_ offset: Int) -> String {
        var end = offset + 1
        while end < bytes.count && bytes[end] & 0xC0 == 0x80 { end += 1 }
        return String(decoding: bytes[offset..<end], as: UTF8.self)
    }

    mutating func skipWhitespace() {
        index = bytes.withUnsafeBufferPointer { buffer in
            var position = index
            while position < buffer.count {
                let byte = buffer[position]
                guard byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 else { break }
                position += 1
            }
            return position
        }
    }

    /// Explains a byte that cannot start a value or key: the common non-JSON habits get their own words.
    func unexpected(expecting what: String) -> Diagnostic {
        guard let byte = current else { return error("unexpected end of file; expected \(what)") }
        switch byte {
        case UInt8(ascii: "/")
        where index + 1 < bytes.count
            && (bytes[index + 1] == UInt8(ascii: "/") || bytes[index + 1] == UInt8(ascii: "*")):
            return error(
                "comments are not allowed in JSON", hint: "delete the comment, or move it into a \"comment\" key")
        case UInt8(ascii: "'"):
            return error("single quotes are not JSON", hint: "use double quotes (\")")
        case 0xE2:
            let character = characterAt(index)
            if ["\u{201C}", "\u{201D}", "\u{2018}", "\u{2019}", "\u{201E}"].contains(character) {
                return error(
                    "typographic quote '\(character)' where JSON needs a straight double quote",
                    hint: "replace curly quotes with \" (turn off smart quotes in your editor)")
            }
        case 0xC2 where index + 1 < bytes.count && bytes[index + 1] == 0xA0:
            return error("non-breaking space (U+00A0) is not JSON whitespace", hint: "replace it with a normal space")
        default:
            break
        }
        if let smart = smartQuoteInLastString {
            let (line, column) = source.position(of: smart)
            return error(
                "unexpected \(describeCurrent()); expected \(what)",
                hint:
                    "the string before it contains a typographic quote '\(characterAt(smart))' at \(line):\(column); replace it with \""
            )
        }
        return error("unexpected \(describeCurrent()); expected \(what)")
    }

    mutating func parseValue(depth: Int) throws(Diagnostic) -> JSONNode {
        skipWhitespace()
        let start = index
        guard let byte = current else { throw unexpected(expecting: "a value") }
        switch byte {
        case UInt8(ascii: "{"): return JSONNode(try parseObject(depth: depth + 1), offset: start)
        case UInt8(ascii: "["): return JSONNode(try parseArray(depth: depth + 1), offset: start)
        case UInt8(ascii: "\""): return JSONNode(.string(try parseString()), offset: start)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return JSONNode(try parseNumber(), offset: start)
        case UInt8(ascii: "t"): try expectWord("true"); return JSONNode(.bool(true), offset: start)
        case UInt8(ascii: "f"): try expectWord("false"); return JSONNode(.bool(false), offset: start)
        case UInt8(ascii: "n"): try expectWord("null"); return JSONNode(.null, offset: start)
        default: throw unexpected(expecting: "a value")
        }
    }

    mutating func expectWord(_ word: StaticString) throws(Diagnostic) {
        let start = index
        let count = word.utf8CodeUnitCount
        let matches = word.withUTF8Buffer { expected in
            index + count <= bytes.count && bytes[index..<index + count].elementsEqual(expected)
        }
        guard matches else { throw error("unexpected \(describeCurrent()); expected a value", at: start) }
        index += count
    }

    mutating func enter(_ depth: Int) throws(Diagnostic) {
        if depth > maximumDepth {
            throw source.diagnostic(
                .error, rule: .jsonTooDeep, "nesting is deeper than \(maximumDepth) levels", at: index,
                keyPath: KeyPath(pathComponents()).description,
                hint: "flatten the structure: association files and site.json need fewer than ten levels")
        }
    }

    mutating func parseObject(depth: Int) throws(Diagnostic) -> JSONValue {
        try enter(depth)
        index += 1  // {
        var members: [JSONMember] = []
        // Repeats (the same bytes, `String.isKey`) are found by scanning the members so far while the object is small
        // (hashing every key of every object cost more than the scan), and by a dictionary once it is not: a hostile
        // object of 10⁵ members stays linear.
        var firstOffsets: [JSONKey: Int]?
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            if current == UInt8(ascii: "}") && !members.isEmpty {
                throw error("trailing comma before '}'", at: lastComma(before: index), hint: "delete the last ','")
            }
            guard current == UInt8(ascii: "\"") else {
                if let byte = current, isIdentifierStart(byte) {
                    throw error("object keys must be double-quoted strings", hint: "write \"key\" with double quotes")
                }
                throw unexpected(expecting: "a \"key\" string")
            }
            let keyOffset = index
            let key = try parseString()
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw unexpected(expecting: "':' after the key \"\(key)\"") }
            index += 1
            if firstOffsets == nil, members.count >= 16 {
                firstOffsets = Dictionary(
                    members.lazy.map { (JSONKey(text: $0.key), $0.keyOffset) }, uniquingKeysWith: { first, _ in first })
            }
            let first =
                if let firstOffsets {
                    firstOffsets[JSONKey(text: key)]
                } else {
                    members.first { $0.key.isKey(key) }?.keyOffset
                }
            if let first {
                reportDuplicate(key, first: first, again: keyOffset)
            } else {
                firstOffsets?[JSONKey(text: key)] = keyOffset
            }
            path.append(.key(at: keyOffset))
            let value = try parseValue(depth: depth)
            path.removeLast()
            members.append(JSONMember(key: key, keyOffset: keyOffset, value: value))
            skipWhitespace()
            if current == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if current == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            }
            if current == UInt8(ascii: "\"") {
                throw error("missing ',' between object members", hint: "add a ',' after the previous value")
            }
            throw unexpected(expecting: "',' or '}'")
        }
    }

    mutating func parseArray(depth: Int) throws(Diagnostic) -> JSONValue {
        try enter(depth)
        index += 1  // [
        var elements: [JSONNode] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            if current == UInt8(ascii: "]") && !elements.isEmpty {
                throw error("trailing comma before ']'", at: lastComma(before: index), hint: "delete the last ','")
            }
            path.append(.index(elements.count))
            elements.append(try parseValue(depth: depth))
            path.removeLast()
            skipWhitespace()
            if current == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if current == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            }
            if let byte = current, byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[")
            {
                throw error("missing ',' between array elements", hint: "add a ',' after the previous value")
            }
            throw unexpected(expecting: "',' or ']'")
        }
    }

    /// RFC 8259 §4 leaves a repeated name's meaning to each reader, and readers differ (most keep the last,
    /// some the first, Apple's keeps one without a word), so the file means different things to different
    /// readers: an error, naming both places.
    mutating func reportDuplicate(_ key: String, first: Int, again: Int) {
        let (firstLine, firstColumn) = source.position(of: first)
        let (line, column) = source.position(of: again)
        let places =
            firstLine == line
            ? "first at column \(firstColumn), again at column \(column) of line \(line)"
            : "first on line \(firstLine), again on line \(line)"
        duplicateKeys.append(
            source.diagnostic(
                .error, rule: .duplicateKey,
                "key \"\(LogEscaping.excerpt(key))\" is repeated in the same object: \(places)",
                at: again, keyPath: KeyPath(pathComponents() + [.key(key)]).description,
                hint:
                    "delete one of them; JSON readers disagree on which one counts, and most drop the other without a word"
            ))
    }

    func lastComma(before offset: Int) -> Int {
        var position = offset - 1
        while position > 0 && bytes[position] != UInt8(ascii: ",") { position -= 1 }
        return position
    }

    func isIdentifierStart(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "$")
    }

    mutating func parseString() throws(Diagnostic) -> String {
        let open = index
        index += 1  // "
        smartQuoteInLastString = nil
        // Most strings hold no escape: they are their bytes, made into a string once, without a copy to grow,
        // scanned in place (every key and string of every site.json at each load).
        let start = index
        var smartQuote: Int?
        let scan = bytes.withUnsafeBufferPointer { buffer -> (stop: Int, string: String?) in
            var position = start
            while position < buffer.count {
                // Eight bytes at a time while none needs a look (``needsLook(_:)``): most of a string.
                while position + 8 <= buffer.count,
                    !JSONParser.needsLook(
                        UnsafeRawPointer(buffer.baseAddress! + position).loadUnaligned(as: UInt64.self))
                {
                    position += 8
                }
                guard position < buffer.count else { break }
                let byte = buffer[position]
                if byte == UInt8(ascii: "\"") {
                    return (
                        position,
                        String(decoding: UnsafeBufferPointer(rebasing: buffer[start..<position]), as: UTF8.self)
                    )
                }
                if byte == UInt8(ascii: "\\") || byte < 0x20 { break }
                if byte == 0xE2, position + 2 < buffer.count, buffer[position + 1] == 0x80,
                    (0x98...0x9D).contains(buffer[position + 2])
                {
                    smartQuote = position
                }
                position += 1
            }
            return (position, nil)
        }
        if let smartQuote { smartQuoteInLastString = smartQuote }
        index = scan.stop
        if let string = scan.string {
            index += 1
            return string
        }
        var utf8 = Array(bytes[start..<index])
        while true {
            guard let byte = current else {
                throw error("string is never closed", at: open, hint: "add the closing \"")
            }
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return String(decoding: utf8, as: UTF8.self)
            case UInt8(ascii: "\\"):
                index += 1
                guard let escape = current else { throw error("string is never closed", at: open) }
                index += 1
                switch escape {
                case UInt8(ascii: "\""): utf8.append(0x22)
                case UInt8(ascii: "\\"): utf8.append(0x5C)
                case UInt8(ascii: "/"): utf8.append(0x2F)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "u"): try appendUnicodeEscape(into: &utf8)
                default:
                    throw error(
                        "invalid escape '\\\(Character(Unicode.Scalar(escape)))' in string", at: index - 2,
                        hint: "write a backslash as \\\\")
                }
            case 0x00..<0x20:
                throw error(
                    byte == 0x0A
                        ? "string is never closed before the end of the line" : "unescaped control character in string",
                    at: byte == 0x0A ? open : index,
                    hint: byte == 0x0A ? "add the closing \"" : "escape it as \\u00XX")
            default:
                if byte == 0xE2, index + 2 < bytes.count, bytes[index + 1] == 0x80,
                    (0x98...0x9D).contains(bytes[index + 2])
                {
                    smartQuoteInLastString = index
                }
                utf8.append(byte)
                index += 1
            }
        }
    }

    mutating func readHex4() throws(Diagnostic) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("incomplete \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error("invalid hex digit in \\u escape")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    mutating func appendUnicodeEscape(into utf8: inout [UInt8]) throws(Diagnostic) {
        let start = index - 2
        var scalarValue = try readHex4()
        if (0xD800...0xDBFF).contains(scalarValue) {
            guard index + 6 <= bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
            else {
                throw error("unpaired surrogate in \\u escape", at: start)
            }
            index += 2
            let low = try readHex4()
            guard (0xDC00...0xDFFF).contains(low) else { throw error("unpaired surrogate in \\u escape", at: start) }
            scalarValue = 0x10000 + ((scalarValue - 0xD800) << 10) + (low - 0xDC00)
        } else if (0xDC00...0xDFFF).contains(scalarValue) {
            throw error("unpaired surrogate in \\u escape", at: start)
        }
        guard let scalar = Unicode.Scalar(scalarValue) else { throw error("invalid \\u escape", at: start) }
        utf8.append(contentsOf: String(Character(scalar)).utf8)
    }

    mutating func parseNumber() throws(Diagnostic) -> JSONValue {
        let start = index
        if current == UInt8(ascii: "-") { index += 1 }
        guard let first = current, first >= UInt8(ascii: "0") && first <= UInt8(ascii: "9") else {
            throw error("invalid number", at: start)
        }
        if first == UInt8(ascii: "0") {
            index += 1
            if let next = current, next >= UInt8(ascii: "0") && next <= UInt8(ascii: "9") {
                throw error("numbers may not have leading zeros", at: start)
            }
        } else {
            skipDigits()
        }
        if current == UInt8(ascii: ".") {
            index += 1
            guard skipDigits() > 0 else { throw error("invalid number: digits expected after '.'", at: start) }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard skipDigits() > 0 else { throw error("invalid number: digits expected in exponent", at: start) }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        return .number(Double(text) ?? .nan)
    }

    @discardableResult
    mutating func skipDigits() -> Int {
        let start = index
        while let byte = current, byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") { index += 1 }
        return index - start
    }
}

extension Rule {
    /// Reported by `JSONParser`.
    public static let notUTF8 = Rule(
        "not-utf8", .error, "The file is not UTF-8 (the first bad byte, and the key it is in).")

    /// Reported by `JSONParser`; also by `FileSigning`.
    public static let bom = Rule("bom", .warning, "The file starts with a byte order mark.")

    /// Reported by `JSONParser`; also by `DiffInput`.
    public static let invalidJSON = Rule(
        "invalid-json", .error, "Not valid JSON (comments, trailing comma, quotes, …).")

    /// Reported by `JSONParser`.
    public static let jsonTooDeep = Rule("json-too-deep", .error, "Nested more than 64 levels.")

    /// Reported by `JSONParser`.
    public static let duplicateKey = Rule(
        "duplicate-key", .error,
        "The same key (the same bytes: `é` composed and decomposed are two keys, as JSON and Apple's reader compare them) twice in one object, with both lines. Also in files given to `check --aasa` and `import`: Apple's reader keeps one copy without a word, so the file does not mean what it says and cannot be imported faithfully."
    )

    /// The rules of JSON syntax, keys and types (stages 1 and 2 of a load), in the order of the docs table: their part
    /// of `Rule.all`.
    package static let jsonRules: [Rule] = [
        .notUTF8,
        .bom,
        .invalidJSON,
        .jsonTooDeep,
        .unknownKey,
        .duplicateKey,
        .wrongType,
    ]
}

extension JSONParser {
    /// Whether any of the eight bytes of `word` is one a string's scan looks at: a quote, a backslash, a control
    /// character, or any byte above 0x7F (a smart quote starts with 0xE2).
    static func needsLook(_ word: UInt64) -> Bool {
        ByteWord.hasHighByte(word) || ByteWord.hasByte(below: 0x20, in: word) || ByteWord.hasByte(0x22, in: word)
            || ByteWord.hasByte(0x5C, in: word)
    }
}
