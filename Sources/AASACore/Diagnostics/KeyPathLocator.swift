/// Makes a diagnostic about the value at a key path, at that value's line and column when the JSON it came from
/// is known, unlocated (key path only) when it is not: the one way findings about keys are made.
public struct KeyPathLocator: Sendable {
    /// The source text, when the value came from a file.
    public var source: SourceText?
    /// The parsed document of ``source``, to find where each key path's value is.
    public var root: JSONNode?

    /// Creates a locator; without both `source` and `root`, findings carry only their key path.
    public init(source: SourceText?, root: JSONNode?) {
        self.source = source
        self.root = root
    }

    /// A diagnostic about the value at `path`.
    public func diagnostic(
        _ severity: Diagnostic.Severity, rule: Rule, _ message: String, at path: KeyPath, hint: String? = nil
    ) -> Diagnostic {
        guard let source, let root else {
            return Diagnostic(severity, rule: rule, message, keyPath: path.description, hint: hint)
        }
        return source.diagnostic(
            severity, rule: rule, message, at: root.offset(of: path), keyPath: path.description, hint: hint)
    }
}
