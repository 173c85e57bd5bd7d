public import AASACore
import Foundation

/// What the tenant API reads of the served `/status` (``TenantAPI/init(repository:states:status:logger:)``'s
/// closures): each domain's state and certificate state, and one domain's entry.
extension ServerStatus {
    /// Each domain's state and its certificate's state (from `live` when ACME knows it, else from the load).
    public func tenantStates(live: LiveView = LiveView()) -> [String: TenantAPI.DomainState] {
        Dictionary(
            domains.map { domain in
                let certificate = live.certificates[domain.domain] ?? domain.certificate
                return (
                    domain.domain,
                    TenantAPI.DomainState(state: domain.state.rawValue, certificate: certificate?.state.rawValue)
                )
            }, uniquingKeysWith: { first, _ in first })
    }

    /// The member of `/status`' `domains` for `name`, exactly as `/status` gives it, or `nil` when the server has
    /// no such domain: made from that domain's state alone, so each call costs the same at any number of domains.
    public func tenantStatus(_ name: String, live: LiveView = LiveView()) -> JSONValue? {
        guard let state = domainState(name) else { return nil }
        let formatter = Self.makeFormatter()
        return state.jsonValue(live: live) { date in date.map { .string(formatter.string(from: $0)) } ?? .null }
    }
}
