import AASACore

/// Checks that findings about a file point into it: the user goes to that line and column.
enum DiagnosticLocations {
    static func check(_ diagnostics: [Diagnostic], in source: SourceText, target: FuzzTarget) throws(InvariantViolation)
    {
        let lines = source.bytes.reduce(1) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
        for diagnostic in diagnostics where diagnostic.file == source.name && diagnostic.line > 0 {
            guard diagnostic.line <= lines, diagnostic.column >= 1 else {
                throw InvariantViolation(target, "finding outside the file (\(lines) lines): \(diagnostic)")
            }
        }
        // Columns count characters; checked against a plain scan at a few offsets (SourceText indexes long lines).
        for offset in [0, source.bytes.count / 3, source.bytes.count / 2, source.bytes.count] {
            let expected = naivePosition(of: offset, in: source.bytes)
            let actual = source.position(of: offset)
            guard actual == expected else {
                throw InvariantViolation(target, "position of offset \(offset) is \(actual), expected \(expected)")
            }
        }
    }

    static func naivePosition(of offset: Int, in bytes: [UInt8]) -> (line: Int, column: Int) {
        var line = 1
        var column = 1
        for byte in bytes[..<offset] {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return (line, column)
    }
}
