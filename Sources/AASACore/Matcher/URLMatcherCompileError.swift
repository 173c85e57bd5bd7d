/// Thrown by ``URLMatcher/init(validating:mode:)`` when a pattern cannot be compiled.
public struct URLMatcherCompileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Every diagnostic found, errors and warnings, in file order.
    public var diagnostics: [PatternDiagnostic]

    /// Creates an error.
    public init(diagnostics: [PatternDiagnostic]) {
        self.diagnostics = diagnostics
    }

    /// The error-severity diagnostics.
    public var errors: [PatternDiagnostic] {
        diagnostics.filter { $0.severity == .error }
    }

    /// One diagnostic per line.
    public var description: String {
        errors.map(\.description).joined(separator: "\n")
    }
}
