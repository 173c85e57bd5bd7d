internal import CLibPQ

/// What a statement returned, copied out of libpq: its rows of cells (bytes, or `nil` for SQL `NULL`), the column
/// names, the command tag and the number of rows it changed.
///
/// Cells hold the text form of each value, except `bytea` columns, whose cells hold the raw bytes.
public struct PostgresResult: Sendable {
    /// The column names, in order.
    public let columns: [String]
    /// The number of rows.
    public let rowCount: Int
    /// The rows a `INSERT`, `UPDATE`, `DELETE`, `MERGE`, `SELECT` or `COPY` touched (0 for other statements).
    public let affectedRows: Int
    /// The command tag the server answered with (`INSERT 0 1`, `COMMIT`, `ROLLBACK`, …).
    public let commandTag: String
    private let cells: [[UInt8]?]

    /// The `bytea` type's object id: its cells are unescaped to raw bytes.
    private static let byteaOID: Oid = 17

    /// Copies `result` (which the caller still owns and clears).
    init(_ result: OpaquePointer) {
        let rows = Int(PQntuples(result))
        let columnCount = Int(PQnfields(result))
        columns = (0..<columnCount).map { String(cString: PQfname(result, Int32($0))) }
        rowCount = rows
        commandTag = String(cString: PQcmdStatus(result))
        affectedRows = Int(String(cString: PQcmdTuples(result))) ?? 0
        var cells: [[UInt8]?] = []
        cells.reserveCapacity(rows * columnCount)
        let unescaped = (0..<columnCount).map {
            PQftype(result, Int32($0)) == Self.byteaOID && PQfformat(result, Int32($0)) == 0
        }
        for row in 0..<Int32(rows) {
            for column in 0..<Int32(columnCount) {
                guard PQgetisnull(result, row, column) == 0, let value = PQgetvalue(result, row, column) else {
                    cells.append(nil)
                    continue
                }
                if unescaped[Int(column)] {
                    var length = 0
                    guard
                        let bytes = PQunescapeBytea(
                            UnsafeRawPointer(value).assumingMemoryBound(to: UInt8.self), &length)
                    else {
                        cells.append(nil)
                        continue
                    }
                    cells.append(Array(UnsafeBufferPointer(start: bytes, count: length)))
                    PQfreemem(bytes)
                } else {
                    let length = Int(PQgetlength(result, row, column))
                    cells.append(Array(UnsafeRawBufferPointer(start: value, count: length)))
                }
            }
        }
        self.cells = cells
    }

    /// The bytes of the cell at `row`, `column` (raw bytes for `bytea`, the text form otherwise), or `nil` for
    /// `NULL`.
    public func bytes(_ row: Int, _ column: Int) -> [UInt8]? {
        precondition(row >= 0 && row < rowCount && column >= 0 && column < columns.count, "cell out of range")
        return cells[row * columns.count + column]
    }

    /// The cell at `row`, `column` as UTF-8 text, or `nil` for `NULL`.
    public func text(_ row: Int, _ column: Int) -> String? {
        bytes(row, column).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The index of the column named `name`, if there is one.
    public func column(named name: String) -> Int? { columns.firstIndex(of: name) }
}
