/// Source bytes plus a line table, turning byte offsets into 1-based line and character columns.
public struct SourceText: Sendable {
    /// The file name used in diagnostics, as the user named it.
    public let name: String
    /// The raw bytes.
    public let bytes: [UInt8]
    private let lineStarts: [Int]

    /// Indexes `bytes` for line lookups.
    public init(name: String, bytes: [UInt8]) {
        self.name = name
        self.bytes = bytes
        var starts = [0]
        for (index, byte) in bytes.enumerated() where byte == UInt8(ascii: "\n") {
            starts.append(index + 1)
        }
        lineStarts = starts
    }

    /// 1-based line and column (counting characters, not bytes) of `offset`.
    public func position(of offset: Int) -> (line: Int, column: Int) {
        let clamped = max(0, min(offset, bytes.count))
        var low = 0
        var high = lineStarts.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if lineStarts[mid] <= clamped { low = mid } else { high = mid - 1 }
        }
        var column = 1
        var index = lineStarts[low]
        while index < clamped {
            // Count UTF-8 lead bytes only, so a multi-byte character is one column.
            if bytes[index] & 0xC0 != 0x80 { column += 1 }
            index += 1
        }
        return (low + 1, column)
    }

    /// A diagnostic located at `offset` in this source.
    public func diagnostic(
        _ severity: Diagnostic.Severity, rule: String, _ message: String, at offset: Int,
        keyPath: String? = nil, hint: String? = nil
    ) -> Diagnostic {
        let (line, column) = position(of: offset)
        return Diagnostic(
            severity, rule: rule, message, file: name, line: line, column: column, keyPath: keyPath, hint: hint)
    }
}
