import AASACore

/// A store operation that cannot go on, in words for the operator (the server, never a password, and the fix).
public struct StoreError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public var description: String
    /// The rule a load reports it under when it is one row's refusal (``Rule/storedValue``); `nil`: the refusal of
    /// a row over a folder's caps.
    var rule: Rule?
    /// How to fix it, when it is one row's refusal.
    var hint: String?

    /// An error saying `description`.
    public init(_ description: String) { self.description = description }

    /// The refusal of one row, reported under `rule` with `hint`.
    init(_ description: String, rule: Rule, hint: String) {
        self.description = description
        self.rule = rule
        self.hint = hint
    }
}
