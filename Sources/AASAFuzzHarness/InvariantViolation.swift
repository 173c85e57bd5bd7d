/// A property a fuzz target checks that did not hold: a bug, even though nothing crashed. The fuzz
/// executables turn it into a crash so libFuzzer keeps the input; tests record it as a failure.
public struct InvariantViolation: Error, Sendable, CustomStringConvertible {
    /// The fuzz target that found it.
    public var target: FuzzTarget
    /// What was expected and what happened instead.
    public var message: String

    /// Creates a violation.
    public init(_ target: FuzzTarget, _ message: String) {
        self.target = target
        self.message = message
    }

    /// `matcher: …`.
    public var description: String { "\(target.rawValue): \(message)" }
}
