public import AASACore

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
    /// no such domain.
    public func tenantStatus(_ name: String, live: LiveView = LiveView()) -> JSONValue? {
        guard domainState(name) != nil else { return nil }
        // A page of one: the domain, after the names holding its name that sort before it.
        var query = StatusQuery()
        query.text = name
        query.isPaged = true
        query.offset = domains.count { $0.domain.contains(name) && $0.domain < name }
        query.limit = 1
        return JSONValue.parse(json(query: query, live: live))?[member: "domains"]?[member: name]
    }
}
