/// Why a PostgreSQL operation failed: a stable code, the server it was for (`host:port/database`, never the
/// password), the SQLSTATE and message when the server refused a statement, and the statement's first line.
///
/// ``description`` is meant for logs: it holds no password and no parameter value (a value the server quotes back in
/// its message is replaced by its placeholder, `$1`). Equality compares the code and the SQLSTATE.
public struct PostgresError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure.
    public enum Code: String, Sendable {
        /// The connection URI is not one libpq accepts.
        case invalidURI = "invalid-uri"
        /// No connection could be made (server down, refused, timed out, authentication failed).
        case connect
        /// The connection broke during an operation; a new connection is needed.
        case connectionLost = "connection-lost"
        /// The server refused the statement; ``PostgresError/sqlState`` says why.
        case statement
        /// A name to be spelled in SQL (a `LISTEN` channel) is not a plain lowercase identifier.
        case invalidIdentifier = "invalid-identifier"
        /// A parameter cannot be sent (text with a NUL byte, a value over the size PostgreSQL accepts).
        case invalidParameter = "invalid-parameter"
        /// The connection was closed with ``PostgresConnection/close()`` (before or during the operation).
        case closed
    }

    /// What kind of failure.
    public let code: Code
    /// The server, as `host:port/database` from the connection URI.
    public let server: String
    /// The server's five-character SQLSTATE (`23505` for a unique violation), when it refused a statement.
    public let sqlState: String?
    /// What went wrong, in the server's or libpq's words, on one line.
    public let message: String
    /// The first line of the statement that failed, when a statement failed.
    public let statement: String?

    /// Creates an error; `message` is folded onto one line.
    public init(_ code: Code, server: String, message: String, sqlState: String? = nil, statement: String? = nil) {
        self.code = code
        self.server = server
        self.message = message.split(whereSeparator: \.isNewline).map { $0.trimmingSpaces() }.filter { !$0.isEmpty }
            .joined(separator: " ")
        self.sqlState = sqlState
        self.statement = statement.map(Self.firstLine)
    }

    /// `[code] postgres host:port/db: message (SQLSTATE xxxxx) in: first line of the statement`.
    public var description: String {
        var text = "[\(code.rawValue)] postgres \(server): \(message)"
        if let sqlState { text += " (SQLSTATE \(sqlState))" }
        if let statement { text += " in: \(statement)" }
        return text
    }

    /// Errors are equal when their codes and SQLSTATEs are.
    public static func == (lhs: PostgresError, rhs: PostgresError) -> Bool {
        lhs.code == rhs.code && lhs.sqlState == rhs.sqlState
    }

    /// The first non-empty line of `sql`, trimmed and cut at 200 characters (a log line, not a dump).
    static func firstLine(_ sql: String) -> String {
        let line = sql.split(whereSeparator: \.isNewline).map { $0.trimmingSpaces() }.first { !$0.isEmpty } ?? ""
        return line.count > 200 ? line.prefix(200) + "…" : line
    }
}

extension Substring {
    /// The text without leading and trailing spaces and tabs.
    fileprivate func trimmingSpaces() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
