/// What the admin routes read of ACME at request time (``AdminRoutes/Live/acme``).
public struct ACMEFigures: Sendable {
    /// Every domain's certificate status.
    public var statuses: [String: DomainCertificateStatus]
    /// Orders finished so far by result (``ACMEOrderResult``).
    public var orders: [String: Int]
    /// The queue of new orders.
    public var queue: ACMEQueueStatus
    /// With dns-01: its orders finished by result, what its records did, and its domains by delegation state.
    public var dns: DNSFigures?

    /// What dns-01 did: `aasa_acme_dns_*` on `/metrics`.
    public struct DNSFigures: Sendable {
        public var orders: [String: Int] = [:]
        public var challenges = DNSChallengeFigures()
        public var delegations: [DNSDelegation.State: Int] = [:]
    }

    /// Creates the figures.
    public init(
        statuses: [String: DomainCertificateStatus] = [:], orders: [String: Int] = [:],
        queue: ACMEQueueStatus = ACMEQueueStatus()
    ) {
        self.statuses = statuses
        self.orders = orders
        self.queue = queue
    }
}
