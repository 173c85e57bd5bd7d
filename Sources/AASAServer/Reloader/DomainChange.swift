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
    /// `cdn` have (``ComparisonBudget/Limits/standard``); one cut short says so (``DomainDiff/tooComplex``). `nil`
    /// when the two are the same to the comparison (``DiffSide`` compared whole, with `==`): a new version that
    /// changed only what no client's answer reads (its pages, its HSTS header) changes no URL.
    static func compare(_ old: PublishedDomain, _ new: PublishedDomain) -> DomainDiff? {
        let before = DiffSide(published: old)
        let after = DiffSide(published: new)
        guard before != after else { return nil }
        return DomainDiff(domain: new.domain, old: before, new: after, limits: .standard)
    }
}
