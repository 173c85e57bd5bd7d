/// One diagnostic rule: its stable id, its usual severity, what it means, and where the docs explain it.
///
/// Each rule is a static member declared in an `extension Rule` beside the check that reports it, in that check's
/// file, with the name of every type that reports it. Each area (JSON, pages, certificates, …) lists its rules in a
/// `package static let <area>Rules`, and `Rule.all` (AASAServer, `Rule+Catalogue.swift`, the module that sees every
/// check) joins those lists in the order of the table in docs/configuration.md#errors-and-warnings;
/// `RuleCatalogueTests` fails when the docs, the catalogue and the declarations disagree. Adding a rule:
/// CONTRIBUTING.md, "Adding a lint rule".
public struct Rule: Sendable, Hashable, CustomStringConvertible {
    /// The stable id scripts and tests key on, e.g. `app-id-format`.
    public let id: String
    /// The severity it is reported with unless the finding says otherwise (some rules warn or err by case).
    public let severity: Diagnostic.Severity
    /// What it means, in one line.
    public let summary: String
    /// Where the docs explain it, relative to `docs/` (`configuration.md#errors-and-warnings`).
    public let documentation: String

    /// A rule for a check of this package; `summary` is the meaning the docs table gives it.
    package init(
        _ id: String, _ severity: Diagnostic.Severity, _ summary: String,
        docs: String = "configuration.md#errors-and-warnings"
    ) {
        self.id = id
        self.severity = severity
        self.summary = summary
        self.documentation = docs
    }

    /// The id.
    public var description: String { id }
}
