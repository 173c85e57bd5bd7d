import Testing

@testable import AASACore

@Suite struct SourceTextTests {
    /// Line and column by walking every byte from the start: what SourceText's checkpoints must agree with.
    func walk(to offset: Int, in bytes: [UInt8]) -> (line: Int, column: Int) {
        var line = 1
        var column = 1
        for byte in bytes[..<offset] {
            if byte == UInt8(ascii: "\n") {
                (line, column) = (line + 1, 1)
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return (line, column)
    }

    @Test(arguments: [
        // A long line of 1-, 2- and 4-byte characters between two short ones, crossing many 4096-byte checkpoints.
        Array("{\n\"".utf8) + Array(String(repeating: "aé😀", count: 3_000).utf8) + Array("\"\n}".utf8),
        // Exactly two checkpoints long, so the end of the file falls on one.
        Array(String(repeating: "é", count: 4_096).utf8),
        Array(String(repeating: "x", count: 8_192).utf8),
        [],
    ])
    func columnsCountCharactersOnLongLines(bytes: [UInt8]) {
        let source = SourceText(name: "t.json", bytes: bytes)
        let offsets = Set(
            [0, 1, 4_095, 4_096, 4_097, 8_191, 8_192, bytes.count - 1, bytes.count]
                + Array(stride(from: 0, to: bytes.count, by: 997)))
        for offset in offsets.sorted() where (0...bytes.count).contains(offset) {
            let expected = walk(to: offset, in: bytes)
            #expect(source.position(of: offset) == expected, "offset \(offset)")
        }
    }
}
