/// One finding about a file: compiler-style, with where it is and how to fix it.
///
/// Rendered as `path:line:column: error: [rule-id] message (at key.path); fix: hint`.
/// Equality compares everything, so tests can assert exact diagnostics.
public struct Diagnostic: Sendable, Hashable, Error, CustomStringConvertible {
    /// How bad a finding is.
    public enum Severity: String, Sendable, Hashable, Comparable {
        case error, warning, note

        private var rank: Int {
            switch self {
            case .error: 2
            case .warning: 1
            case .note: 0
            }
        }

        /// Errors sort above warnings above notes.
        public static func < (lhs: Severity, rhs: Severity) -> Bool { lhs.rank < rhs.rank }
    }

    /// Error, warning or note.
    public var severity: Severity
    /// The rule it breaks (``Rule``); its id, e.g. `app-id-format`, is what scripts and tests key on.
    public var rule: Rule
    /// What is wrong, naming the offending value.
    public var message: String
    /// The file the finding is in, as the user named it; `nil` for findings about no file.
    public var file: String?
    /// 1-based line, or 0 when unknown.
    public var line: Int
    /// 1-based column in characters, or 0 when unknown.
    public var column: Int
    /// JSON key path such as `universalLinks.apps[0].rules[2].path`, when the finding is about a key.
    public var keyPath: String?
    /// How to fix it, when there is a clear fix.
    public var hint: String?

    /// Creates a diagnostic.
    public init(
        _ severity: Severity, rule: Rule, _ message: String, file: String? = nil, line: Int = 0,
        column: Int = 0, keyPath: String? = nil, hint: String? = nil
    ) {
        self.severity = severity
        self.rule = rule
        self.message = message
        self.file = file
        self.line = line
        self.column = column
        self.keyPath = keyPath
        self.hint = hint
    }

    /// The compiler-style line, e.g. `site-config/a/site.json:3:5: error: [unknown-key] …`.
    public var description: String {
        var text = ""
        if let file {
            text += file + ":"
            if line > 0 { text += "\(line):\(column):" }
            text += " "
        }
        text += "\(severity.rawValue): [\(rule)] \(message)"
        if let keyPath, !keyPath.isEmpty { text += " (at \(keyPath))" }
        if let hint { text += "; fix: \(hint)" }
        return text
    }
}

extension Array where Element == Diagnostic {
    /// Whether any finding is an error.
    public var hasErrors: Bool { contains { $0.severity == .error } }
    /// Only the errors.
    public var errors: [Diagnostic] { filter { $0.severity == .error } }
    /// Only the warnings.
    public var warnings: [Diagnostic] { filter { $0.severity == .warning } }
}

/// A failure carrying every diagnostic that caused it (at least one error).
public struct DiagnosticsError: Error, Sendable, CustomStringConvertible {
    /// All findings, errors first in file order.
    public var diagnostics: [Diagnostic]

    /// Wraps findings that contain at least one error.
    public init(_ diagnostics: [Diagnostic]) {
        self.diagnostics = diagnostics
    }

    /// One diagnostic per line.
    public var description: String { diagnostics.map(\.description).joined(separator: "\n") }
}
