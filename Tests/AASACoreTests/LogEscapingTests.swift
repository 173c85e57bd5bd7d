import AASACore
import Testing

@Suite struct LogEscapingTests {
    @Test(arguments: [
        ("plain text", "plain text"),
        ("", ""),
        ("caf\u{e9} \u{1F600} \u{A0}", "caf\u{e9} \u{1F600} \u{A0}"),  // UTF-8 beyond C1 is kept
        ("a\u{1b}[31mred", "a\\x1b[31mred"),
        ("bell\u{7}", "bell\\x07"),
        ("line\r\nforged 200", "line\\x0d\\x0aforged 200"),
        ("nul\u{0}tab\t", "nul\\x00tab\\x09"),
        ("del\u{7f}", "del\\x7f"),
        ("c1 \u{80} \u{85} \u{9b}2J \u{9f}", "c1 \\x80 \\x85 \\x9b2J \\x9f"),
        ("back\\slash \\x1b", "back\\\\slash \\\\x1b"),
        ("\u{c2}\u{a0}", "\u{c2}\u{a0}"),  // Â and NBSP: a C2 byte not followed by a C1 continuation
    ])
    func controlCharactersAndBackslashesAreEscaped(input: String, expected: String) {
        #expect(LogEscaping.escape(input) == expected)
    }

    @Test func invalidUTF8BecomesReplacementCharacters() {
        let bytes: [UInt8] = [0x61, 0xC2, 0x1B, 0xFF, 0x62]
        let escaped = bytes.withUnsafeBytes { LogEscaping.escape($0) }
        #expect(escaped == "a\u{FFFD}\\x1b\u{FFFD}b")
    }

    @Test func nothingEscapedIsEverAControlCharacter() {
        let every = String(String.UnicodeScalarView((0...0x2FF).compactMap(Unicode.Scalar.init)))
        let escaped = LogEscaping.escape(every)
        #expect(!escaped.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
    }
}
