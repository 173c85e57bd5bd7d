public import AASACore
public import Foundation

/// What Apple's CDN (or Google's Digital Asset Links API) held for a domain when it was asked, compared with what
/// the domain serves: the state, and the evidence for it.
public struct CDNObservation: Sendable, Equatable {
    /// Where the copy was read.
    public enum Source: String, Sendable {
        /// Apple's CDN (`app-site-association.cdn-apple.com/a/v1/<domain>`), which devices read since iOS 14.
        case apple
        /// Google's Digital Asset Links API (`statements:list`), what Android's verifier reads.
        case google
    }

    /// How the copy compares with what is served.
    public enum State: String, Sendable, CaseIterable {
        /// Equivalent to what is served (as JSON values, not bytes).
        case inSync = "in-sync"
        /// It differs: ``differences`` says how.
        case stale
        /// It holds a failure: ``failureReason`` and the other evidence say which.
        case failed
        /// It never fetched the file (a 404 without a failure reason; no statements from Google).
        case absent
        /// It could not be asked (network, DNS, TLS): ``error`` says why.
        case unreachable
    }

    /// Where the copy was read.
    public var source: Source
    /// The domain.
    public var domain: String
    /// How it compares.
    public var state: State
    /// When it was asked.
    public var checked: Date
    /// The URL asked.
    public var url: String
    /// The HTTP status of the answer, when there was one.
    public var status: Int?
    /// Apple's `Apple-Failure-Reason`, `Apple-Failure-Details` and `Apple-Try-Direct` headers; Google's error codes
    /// and debug string.
    public var failureReason: String?
    public var failureDetails: String?
    public var tryDirect: String?
    /// What the failure most likely means and what to do.
    public var hint: String?
    /// For `stale`: which services, app entries, packages or fingerprints differ (`+` only in the copy, `-` only
    /// in what is served).
    public var differences: [String] = []
    /// For Apple's `stale`: the classes of URLs whose answer on iOS 13+ differs between the copy and what is
    /// served (the semantic diff, ``DomainDiff``), each with an example; empty when no URL's answer differs.
    public var urlChanges: [String] = []
    /// Since when what is served now has been published, when known.
    public var publishedSince: Date?
    /// The copy's `Age` (seconds) and `Cache-Control` headers, and when it is due to be refreshed by them.
    public var age: Int?
    public var cacheControl: String?
    public var nextRefresh: Date?
    /// Why the copy could not be asked for.
    public var error: String?

    /// Creates an observation.
    public init(source: Source, domain: String, state: State, checked: Date, url: String) {
        self.source = source
        self.domain = domain
        self.state = state
        self.checked = checked
        self.url = url
    }

    /// The observation as a JSON object, dates in ISO 8601 (`cdn --json`, `/status`).
    public func jsonValue(date: (Date?) -> JSONValue) -> JSONValue {
        func text(_ value: String?) -> JSONValue { value.map { .string($0) } ?? .null }
        return .members([
            ("state", .string(state.rawValue)), ("checked", date(checked)), ("url", .string(url)),
            ("status", status.map { .number(Double($0)) } ?? .null), ("failureReason", text(failureReason)),
            ("failureDetails", text(failureDetails)), ("tryDirect", text(tryDirect)), ("hint", text(hint)),
            ("differences", .strings(differences)), ("urlChanges", .strings(urlChanges)),
            ("publishedSince", date(publishedSince)),
            ("age", age.map { .number(Double($0)) } ?? .null), ("cacheControl", text(cacheControl)),
            ("nextRefresh", date(nextRefresh)), ("error", text(error)),
        ])
    }

    /// One line for logs and the command's text output.
    public var summary: String {
        var parts = ["\(domain): \(source == .apple ? "Apple CDN" : "Google") \(state.rawValue)"]
        if let status { parts.append("HTTP \(status)") }
        if let failureReason { parts.append("reason: \(failureReason)") }
        if let failureDetails { parts.append("details: \(failureDetails)") }
        if let tryDirect { parts.append("try direct: \(tryDirect)") }
        if !differences.isEmpty { parts.append("differs: " + differences.joined(separator: "; ")) }
        if state == .stale {
            parts.append(
                urlChanges.isEmpty
                    ? "no URL's answer differs" : "URLs answered differently: " + urlChanges.joined(separator: "; "))
        }
        if let error { parts.append(error) }
        if let hint { parts.append("hint: \(hint)") }
        let formatter = ISO8601DateFormatter()
        if let publishedSince, state == .stale {
            parts.append("served since \(formatter.string(from: publishedSince))")
        }
        if let age { parts.append("age \(age)s") }
        if let cacheControl { parts.append("cache-control: \(cacheControl)") }
        if let nextRefresh { parts.append("next refresh by \(formatter.string(from: nextRefresh))") }
        return parts.joined(separator: "; ")
    }
}
