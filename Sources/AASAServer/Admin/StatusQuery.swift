import AASACore
import Foundation

/// Which domains a `GET /status` request asks for, and in which order: the query parameters `q` (part of the
/// name), `state` (comma-separated states), `sort` (`name`, `state`, `loaded`, `expiry`, `changed`), `order`
/// (`asc`, `desc`), `offset` and `limit`.
///
/// Without any of them `/status` lists every domain by name, as it always has. With any, the document also
/// gets a `page` member (`offset`, `limit`, `matching`, `total`) and lists only the page's domains and the
/// certificate folders they use, so a dashboard over 100,000 domains reads fifty at a time.
public struct StatusQuery: Sendable, Equatable {
    /// The orders domains can be listed in; ties are broken by name.
    public enum Sort: String, Sendable, CaseIterable {
        /// By name.
        case name
        /// Worst first: failed, stale, removing, published.
        case state
        /// By when the served version was loaded, never-loaded first.
        case loaded
        /// By certificate expiry, soonest first; a domain no certificate covers comes before all.
        case expiry
        /// By when the domain last changed, unchanged first.
        case changed
    }

    /// A case-insensitive part of the name, or `nil` for any.
    public var text: String?
    /// The states listed, or `nil` for all.
    public var states: Set<ServerStatus.DomainState.State>?
    /// The order.
    public var sort: Sort = .name
    /// Whether the order is reversed.
    public var descending = false
    /// How many matching domains to skip.
    public var offset = 0
    /// How many to list at most; `nil` for all.
    public var limit: Int?
    /// Whether any parameter was given: the document then has a `page` member and only the page's certificates.
    public var isPaged = false

    /// Every domain, by name: `/status` without parameters.
    public static let all = StatusQuery()

    /// The most a page may hold.
    public static let maximumLimit = 1000

    /// Creates the query for every domain by name.
    public init() {}

    /// Why a query was refused: the parameter, the value and what is accepted.
    public struct Error: Swift.Error, CustomStringConvertible, Sendable {
        /// The message.
        public var description: String
    }

    /// Reads the parameters of a raw query string.
    ///
    /// - Throws: ``Error`` naming the parameter when a value is not one of those accepted.
    public init(rawQuery: String?) throws(Error) {
        func value(_ name: String) -> String? {
            guard let value = QueryString.value(name, in: rawQuery) else { return nil }
            isPaged = true
            return value
        }
        func count(_ name: String, _ range: ClosedRange<Int>) throws(Error) -> Int? {
            guard let text = value(name) else { return nil }
            guard let number = Int(text), range.contains(number) else {
                throw Error(
                    description:
                        "\(name)=\(text): expected a whole number from \(range.lowerBound) to \(range.upperBound)")
            }
            return number
        }
        if let text = value("q"), !text.isEmpty { self.text = text.lowercased() }
        if let list = value("state"), !list.isEmpty {
            var states: Set<ServerStatus.DomainState.State> = []
            for name in list.split(separator: ",") {
                guard let state = ServerStatus.DomainState.State(rawValue: String(name)) else {
                    throw Error(
                        description: "state=\(list): '\(name)' is not a state; use "
                            + ServerStatus.DomainState.State.allCases.map(\.rawValue).joined(separator: ", "))
                }
                states.insert(state)
            }
            self.states = states
        }
        if let name = value("sort") {
            guard let sort = Sort(rawValue: name) else {
                throw Error(
                    description: "sort=\(name): use one of " + Sort.allCases.map(\.rawValue).joined(separator: ", "))
            }
            self.sort = sort
        }
        if let order = value("order") {
            guard order == "asc" || order == "desc" else { throw Error(description: "order=\(order): use asc or desc") }
            descending = order == "desc"
        }
        offset = try count("offset", 0...Int(Int32.max)) ?? 0
        limit = try count("limit", 0...Self.maximumLimit)
    }

    /// The domains of the page, in order, and how many matched before paging.
    func select(_ domains: [ServerStatus.DomainState], certificates: [String: DomainCertificateStatus])
        -> (page: [ServerStatus.DomainState], matching: Int)
    {
        var matching = domains.filter { domain in
            (states?.contains(domain.state) ?? true) && (text.map { domain.domain.contains($0) } ?? true)
        }
        if sort != .name || descending {
            func expiry(_ domain: ServerStatus.DomainState) -> Date? {
                (certificates[domain.domain] ?? domain.certificate)?.expiry
            }
            matching.sort { left, right in
                let order: Bool?
                switch sort {
                case .name: order = nil
                case .state: order = Self.ordered(left.state.severity, right.state.severity)
                case .loaded: order = Self.ordered(left.lastGoodLoad, right.lastGoodLoad)
                case .expiry: order = Self.ordered(expiry(left), expiry(right))
                case .changed: order = Self.ordered(left.lastChange?.time, right.lastChange?.time)
                }
                return descending
                    ? (order.map(!) ?? (left.domain > right.domain)) : (order ?? (left.domain < right.domain))
            }
        }
        let start = min(offset, matching.count)
        let end = limit.map { min(matching.count, start + $0) } ?? matching.count
        return (Array(matching[start..<end]), matching.count)
    }

    /// Whether `left` comes before `right` (`nil` first), or `nil` when they are equal.
    private static func ordered<Value: Comparable>(_ left: Value?, _ right: Value?) -> Bool? {
        switch (left, right) {
        case (nil, nil): nil
        case (nil, _): true
        case (_, nil): false
        case (let left?, let right?): left == right ? nil : left < right
        }
    }
}

extension ServerStatus.DomainState.State {
    /// Worst first, for sorting by state.
    var severity: Int {
        switch self {
        case .failed: 0
        case .stale: 1
        case .removing: 2
        case .published: 3
        }
    }
}
