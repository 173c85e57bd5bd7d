import Foundation

/// What ``ACMEManager`` keeps about one domain: its status, when it next has something to do, and the state of its
/// retries and renewal window.
struct ManagedDomain: Sendable {
    var status: DomainCertificateStatus
    /// When to order (or renew); `nil`: nothing to do (the operator's certificate).
    var due: Date?
    var inProgress = false
    /// Failures in a row.
    var failures = 0
    /// When this process obtained the domain's current certificate.
    var issuedHere: Date?
    /// The CA's suggested renewal window for the served certificate, and when to ask for it next (RFC 9773
    /// §4.3); `nil` without a certificate of the server's own.
    var suggested: ClosedRange<Date>?
    var nextCheck: Date?
    /// The served certificate this entry was planned for, to notice a new one.
    var notAfter: Date?

    /// The certificate must be replaced whatever its dates (it came from another CA).
    var forced = false
    /// The expiry of a certificate just written that no reload has served yet.
    var awaitingReload: Date?

    init(status: DomainCertificateStatus) {
        self.status = status
    }

    /// When a worker next has something to do for the domain: order or renew, or ask the renewal window.
    var wake: Date? {
        guard let due else { return nil }
        guard awaitingReload == nil else { return nil }
        return failures == 0 ? min(due, nextCheck ?? due) : due
    }

    /// When a worker takes the domain: ``wake``, unless a worker has it already.
    var dueForWorker: Date? { inProgress ? nil : wake }

    /// Marks the domain taken by a worker at `now`: in progress, and pending or renewing when an order is due.
    mutating func claim(at now: Date) {
        inProgress = true
        if due.map({ $0 <= now }) == true, status.source == .acme {
            status.state = status.expiry == nil ? .pending : .renewing
        }
    }
}
