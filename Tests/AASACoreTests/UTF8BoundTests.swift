import AASACore
import Testing

@Suite struct UTF8BoundTests {
    /// One letter and 1,000 combining acute accents: 2,001 bytes, one character.
    static let marks = "a" + String(repeating: "\u{301}", count: 1_000)

    @Test(arguments: [
        ("plain", 10, "plain"),
        ("plain", 3, "pla"),
        ("caf\u{e9}", 4, "caf"),  // é is two bytes: a cut inside it drops it
        ("caf\u{e9}", 5, "caf\u{e9}"),
        ("\u{1F600}x", 3, ""),  // a four-byte scalar is never split
        ("\u{1F600}x", 4, "\u{1F600}"),
        ("abc", 0, ""),
    ])
    func prefixCutsAtAScalarBoundary(text: String, bytes: Int, expected: String) {
        #expect(UTF8Bound.prefix(text, bytes: bytes) == expected)
    }

    @Test func aCharacterOfManyScalarsIsCutInBytes() {
        #expect(Self.marks.count == 1)
        let cut = UTF8Bound.cut(Self.marks, bytes: 100)
        #expect(cut.utf8.count <= 100)
        #expect(cut.hasSuffix(UTF8Bound.ellipsis))
        #expect(UTF8Bound.cut("short", bytes: 100) == "short")
    }

    @Test func anExcerptIsBoundedInBytes() {
        let excerpt = LogEscaping.excerpt(Self.marks)
        #expect(excerpt.utf8.count <= 80)
        #expect(LogEscaping.excerpt(String(repeating: "\u{1b}", count: 500)).utf8.count <= 80)
        #expect(LogEscaping.excerpt("a\u{1b}b") == "a\\x1bb")
    }
}
