import Testing

@testable import AASACore

@Suite struct JSONParserTests {
    func parse(_ text: String) throws(Diagnostic) -> JSONParser.Result {
        try JSONParser().parse(SourceText(name: "t.json", bytes: Array(text.utf8)))
    }

    func failure(_ text: String) -> Diagnostic? {
        do {
            _ = try parse(text)
            return nil
        } catch {
            return error
        }
    }

    /// Object keys are the same key when their bytes are (RFC 8259 §8.3, as Apple's and Android's readers compare
    /// them): `é` composed and decomposed, the Kelvin and ohm signs against `K` and `Ω`, are other keys, though `==`
    /// finds the texts equal.
    @Test(arguments: [
        ("\u{E9}", "e\u{301}", false), ("\u{212A}ey", "Key", false), ("\u{2126}", "\u{3A9}", false),
        ("apps", "apps", true), ("apps", "appIDs", false), ("", "", true), ("", "a", false), ("path", "Path", false),
        ("\u{E9}t\u{E9}", "\u{E9}t\u{E9}", true), ("caf\u{E9}", "cafe", false),
    ])
    func keysAreTheSameKeyWhenTheirBytesAre(_ one: String, _ other: String, same: Bool) {
        #expect(one.isKey(other) == same && other.isKey(one) == same)
        #expect([other, "x"].containsKey(one) == same)
        #expect((JSONKey(text: one) == JSONKey(text: other)) == same)
        #expect(Set([JSONKey(text: one), JSONKey(text: other)]).count == (same ? 1 : 2))
    }

    /// Keys are hashed by their bytes, as they are compared: spellings of one text (combining marks in every
    /// order, composed and decomposed) hash apart, where the text's own hash, that of its canonical form, would put
    /// a hostile object's thousands of them in one bucket of the parser's map, each lookup comparing it with all.
    @Test func spellingsOfOneTextHashApart() throws {
        // a with a cedilla (combining class 202), a dot below (220), a grave (230) and a horn (216): every order of
        // marks of distinct classes is the same canonical text.
        let marks: [Unicode.Scalar] = ["\u{327}", "\u{323}", "\u{300}", "\u{31B}"]
        var spellings: [String] = []
        func permute(_ rest: [Unicode.Scalar], _ prefix: String) {
            if rest.isEmpty { spellings.append(prefix) }
            for index in rest.indices {
                var left = rest
                let mark = left.remove(at: index)
                permute(left, prefix + String(mark))
            }
        }
        permute(marks, "a")
        #expect(spellings.count == 24)
        #expect(Set(spellings).count == 1)  // canonically equivalent: one String
        #expect(Set(spellings.map { JSONKey(text: $0) }).count == 24)
        #expect(Set(spellings.map { JSONKey(text: $0).hashValue }).count == 24)
        #expect(JSONKey(text: "caf\u{E9}").hashValue != JSONKey(text: "cafe\u{301}").hashValue)
        // The parser's map (objects of 16 members or more) finds none of them a repeat, and a real repeat still.
        let members = spellings.map { "\"\($0)\": 1" }
        #expect(try parse("{" + members.joined(separator: ", ") + "}").diagnostics.isEmpty)
        let repeated = try parse("{" + (members + [members[5]]).joined(separator: ", ") + "}")
        #expect(repeated.diagnostics.map(\.rule) == [.duplicateKey])
    }

    /// Whether a key is repeated does not depend on the object's size: in a small object the parser scans the keys
    /// so far, in a large one it looks them up in a map, and both compare bytes.
    @Test(arguments: [0, 20])
    func repeatsAreTheSameBytesWhateverTheObjectsSize(otherMembers: Int) throws {
        let others = (0..<otherMembers).map { "\"k\($0)\": \($0)," }.joined()
        let twoSpellings = try parse("{\(others)\"caf\u{E9}\": 1, \"cafe\u{301}\": 2}")
        #expect(twoSpellings.diagnostics.isEmpty)
        let repeated = try parse("{\(others)\"caf\u{E9}\": 1, \"caf\u{E9}\": 2}")
        #expect(repeated.diagnostics.map(\.rule) == [.duplicateKey])
    }

    @Test func parsesNestedValuesKeepingMemberOrder() throws {
        let result = try parse(#"{"b": [1, 2.5, -3e2], "a": {"x": null, "y": true}, "s": "\u00e9\ud83d\ude00\n"}"#)
        guard case .object(let members) = result.root.value else {
            Issue.record("not an object")
            return
        }
        #expect(members.map(\.key) == ["b", "a", "s"])
        #expect(members[2].value.value == .string("é😀\n"))
        #expect(
            members[0].value.value
                == .array([
                    JSONNode(.number(1), offset: 7), JSONNode(.number(2.5), offset: 10),
                    JSONNode(.number(-300), offset: 15),
                ]))
    }

    @Test(arguments: [
        ("{\"a\": 1,}", "trailing comma before '}'", 1, 8),
        ("[1, 2,\n]", "trailing comma before ']'", 1, 6),
        ("{\n  // note\n  \"a\": 1\n}", "comments are not allowed in JSON", 2, 3),
        ("{\"a\": \u{201C}x\u{201D}}", "typographic quote '\u{201C}' where JSON needs a straight double quote", 1, 7),
        ("{'a': 1}", "single quotes are not JSON", 1, 2),
        ("{a: 1}", "object keys must be double-quoted strings", 1, 2),
        ("{\"a\": 1 \"b\": 2}", "missing ',' between object members", 1, 9),
        ("{\"a\": 01}", "numbers may not have leading zeros", 1, 7),
        ("{\"a\": \"x}", "string is never closed", 1, 7),
        ("{} x", "unexpected 'x' after the end of the JSON value", 1, 4),
        ("", "file is empty; expected a JSON value", 1, 1),
    ])
    func reportsCommonMistakesWithPosition(text: String, message: String, line: Int, column: Int) {
        let diagnostic = failure(text)
        #expect(diagnostic?.message == message)
        #expect(diagnostic?.line == line)
        #expect(diagnostic?.column == column)
        #expect(diagnostic?.rule == .invalidJSON)
    }

    @Test func warnsAboutByteOrderMarkButParses() throws {
        let result = try JSONParser().parse(SourceText(name: "b.json", bytes: [0xEF, 0xBB, 0xBF] + Array("{}".utf8)))
        #expect(result.diagnostics.map(\.rule) == [.bom])
        #expect(result.root.value == .object([]))
    }

    @Test func rejectsInvalidUTF8WithPosition() {
        let diagnostic: Diagnostic?
        do {
            _ = try JSONParser().parse(
                SourceText(name: "u.json", bytes: Array("{\"a\":\n \"".utf8) + [0xE9] + Array("\"}".utf8)))
            diagnostic = nil
        } catch { diagnostic = error }
        #expect(diagnostic?.rule == .notUTF8)
        #expect(diagnostic?.line == 2)
    }

    /// The first byte that breaks UTF-8 is found wherever it is: in or after runs of ASCII read eight bytes at a
    /// time, and valid multi-byte characters of every length are passed.
    @Test func findsTheFirstInvalidByteAtEveryOffset() {
        let valid = Array("{\"é\": \"€ 𝄞 ok\"}".utf8)
        #expect(JSONParser.firstInvalidUTF8Offset(valid) == nil)
        for length in 0..<40 {
            let prefix = Array(String(repeating: "a", count: length).utf8)
            for bad: [UInt8] in [[0xFF], [0xC0, 0x80], [0xE2, 0x82], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80]] {
                #expect(JSONParser.firstInvalidUTF8Offset(prefix + bad + prefix) == length, "\(length) \(bad)")
                #expect(JSONParser.firstInvalidUTF8Offset(prefix + valid + bad) == length + valid.count)
            }
            #expect(JSONParser.firstInvalidUTF8Offset(prefix + valid + prefix) == nil)
        }
    }

    /// The parser keeps where each key of the path starts, not the key: a finding's path reads each key again from
    /// the source, decoded as the parser decoded it (escapes, a key of many bytes, a key that needs quoting).
    @Test func aFindingsKeyPathSpellsEachKeyAsItWasRead() throws {
        let long = String(repeating: "k", count: 40)
        let repeated = try parse(#"{"a\u0062": [0, {"c\"d": {"\#(long)": [{"x": 1, "x": 2}]}}]}"#)
        #expect(repeated.diagnostics.map(\.keyPath) == [#"ab[1]."c"d".\#(long)[0].x"#])
        // An invalid byte's path is found by parsing the file again up to it.
        let bytes = Array(#"{"a\u0062": [0, {"c\"d": {"\#(long)": [{"x": ""#.utf8) + [0xFF] + Array(#""}]}}]}"#.utf8)
        let invalid = #expect(throws: Diagnostic.self) {
            try JSONParser().parse(SourceText(name: "t.json", bytes: bytes))
        }
        #expect(invalid?.rule == .notUTF8)
        #expect(invalid?.keyPath == #"ab[1]."c"d".\#(long)[0].x"#)
        let deep = "{\"e\\u0301\": " + String(repeating: "[", count: 100) + String(repeating: "]", count: 100) + "}"
        #expect(failure(deep)?.keyPath?.hasPrefix("e\u{301}[0][0]") == true)
    }

    @Test func refusesDeepNestingWithoutCrashing() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(failure(deep)?.rule == .jsonTooDeep)
    }

    @Test func columnsCountCharactersNotBytes() {
        #expect(failure("{\"é\": x}")?.column == 7)
    }

    /// Strings read eight bytes at a time end where they end, whatever their length and wherever the quote, the
    /// escape or the byte above 0x7F falls in a word.
    @Test func stringsOfEveryLengthReadWhole() throws {
        // Each middle as written in the JSON, and as the string reads.
        let middles: [(written: String, read: String)] = [
            ("", ""), ("\\n", "\n"), ("\\u00e9", "é"), ("é", "é"), ("’", "’"), ("\\\"", "\""),
        ]
        for length in 0..<40 {
            let plain = String(repeating: "a", count: length)
            for middle in middles {
                let parsed = try parse("{\"k\": \"\(plain + middle.written + plain)\", \"n\": 1}")
                guard case .object(let members) = parsed.root.value, members.count == 2,
                    case .string(let value) = members[0].value.value
                else {
                    Issue.record("not an object of a string and a number: \(length), \(middle.written)")
                    continue
                }
                #expect(value == plain + middle.read + plain, "\(length), \(middle.written)")
            }
        }
    }
}
