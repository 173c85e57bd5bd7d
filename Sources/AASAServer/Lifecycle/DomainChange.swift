public import AASACore
public import Foundation

/// What one new version of a domain did to URLs, compared with the version it replaced: logged by the reload
/// that publishes it, and shown as the domain's `lastChange` in `/status`.
public struct DomainChange: Sendable {
    /// When the version was loaded.
    public var time: Date
    public var diff: DomainDiff

    /// How many classes of URLs `/status` lists per domain (the summary counts them all).
    static let listed = 10

    /// The comparison of two published versions, rules named in site.json terms, within the budget `diff` and
    /// `cdn` have (``ComparisonBudget/Limits/standard``); one cut short says so (``DomainDiff/tooComplex``).
    static func compare(_ old: PublishedDomain, _ new: PublishedDomain) -> DomainDiff {
        DomainDiff(
            domain: new.domain, old: DiffSide(published: old), new: DiffSide(published: new), limits: .standard)
    }
}
