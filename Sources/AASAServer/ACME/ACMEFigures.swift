/// What the admin routes read of ACME at request time (``AdminRoutes/Live/acme``).
public struct ACMEFigures: Sendable {
    /// Every domain's certificate status.
    public var statuses: [String: DomainCertificateStatus]
    /// Orders finished so far by result (``ACMEOrderResult``).
    public var orders: [String: Int]
    /// The queue of new orders.
    public var queue: ACMEQueueStatus

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
