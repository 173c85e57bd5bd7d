import Synchronization

/// Source bytes plus a line table, turning byte offsets into 1-based line and character columns.
public struct SourceText: Sendable {
    /// The file name used in diagnostics, as the user named it.
    public let name: String
    /// The raw bytes.
    public let bytes: [UInt8]
    /// The line table, made when the first position is asked for: most files are read with nothing to report,
    /// and a start at 100,000 domains indexed every site.json for no finding (1 % of its CPU time). Copies share
    /// it.
    private let table = LazyTable()

    /// Where each line starts, and how many UTF-8 continuation bytes come before each multiple of
    /// ``checkpointStride``.
    private struct Table {
        var lineStarts: [Int]
        /// Empty for pure ASCII. A minified file is one long line, and a diagnostic per array element must not
        /// rescan that line from its start each time (a 10⁵-element array of wrong types would take minutes;
        /// `HostileInputTests` holds such a file).
        var continuationsBefore: [Int]
    }

    /// A table made once, by whichever thread first needs it.
    private final class LazyTable: Sendable {
        let made = Mutex<Table?>(nil)
    }

    private static let checkpointStride = 4096

    /// A source of `bytes` named `name`.
    public init(name: String, bytes: [UInt8]) {
        self.name = name
        self.bytes = bytes
    }

    /// The line table of `bytes`.
    private static func index(_ bytes: [UInt8]) -> Table {
        var starts = [0]
        var checkpoints: [Int] = []
        var continuations = 0
        var sawNonASCII = false
        for (index, byte) in bytes.enumerated() {
            if index % Self.checkpointStride == 0 { checkpoints.append(continuations) }
            if byte == UInt8(ascii: "\n") {
                starts.append(index + 1)
            } else if byte >= 0x80 {
                sawNonASCII = true
                if byte & 0xC0 == 0x80 { continuations += 1 }
            }
        }
        // A checkpoint at the end too when it falls on a stride boundary, so every offset up to `bytes.count` has one.
        if bytes.count % Self.checkpointStride == 0 { checkpoints.append(continuations) }
        return Table(lineStarts: starts, continuationsBefore: sawNonASCII ? checkpoints : [])
    }

    /// 1-based line and column (counting characters, not bytes) of `offset`.
    public func position(of offset: Int) -> (line: Int, column: Int) {
        let table = self.table.made.withLock { made in
            if let made { return made }
            let table = Self.index(bytes)
            made = table
            return table
        }
        let lineStarts = table.lineStarts
        let clamped = max(0, min(offset, bytes.count))
        var low = 0
        var high = lineStarts.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if lineStarts[mid] <= clamped { low = mid } else { high = mid - 1 }
        }
        let lineStart = lineStarts[low]
        // A multi-byte character is one column: count UTF-8 lead bytes only.
        let before = { continuations(before: $0, checkpoints: table.continuationsBefore) }
        let column = clamped - lineStart - (before(clamped) - before(lineStart)) + 1
        return (low + 1, column)
    }

    /// UTF-8 continuation bytes in `bytes[..<offset]`, scanning at most one stride from the checkpoint before it.
    private func continuations(before offset: Int, checkpoints: [Int]) -> Int {
        guard !checkpoints.isEmpty else { return 0 }
        let checkpoint = offset / Self.checkpointStride
        var count = checkpoints[checkpoint]
        for index in (checkpoint * Self.checkpointStride)..<offset where bytes[index] & 0xC0 == 0x80 { count += 1 }
        return count
    }

    /// A diagnostic located at `offset` in this source.
    public func diagnostic(
        _ severity: Diagnostic.Severity, rule: Rule, _ message: String, at offset: Int,
        keyPath: String? = nil, hint: String? = nil
    ) -> Diagnostic {
        let (line, column) = position(of: offset)
        return Diagnostic(
            severity, rule: rule, message, file: name, line: line, column: column, keyPath: keyPath, hint: hint)
    }
}
