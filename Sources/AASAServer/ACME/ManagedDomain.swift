import Foundation

/// What ``ACMEManager`` keeps about one domain: its status, when it next has something to do, and the state of its
/// retries, renewal window and place in the queue of new orders.
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
    /// The served certificate this entry was planned for, to notice a new one, and its record's issue date, to notice
    /// that another replica wrote a newer one.
    var notAfter: Date?
    var recordIssued: Date?

    /// The certificate must be replaced whatever its dates (it came from another CA).
    var forced = false
    /// The expiry of a certificate just written that no reload has served yet.
    var awaitingReload: Date?
    /// When the domain was first planned, as a sequence number: new domains are ordered in the order they appeared.
    var appeared = 0
    /// While the order waits for its turn under the order rate (or a pause): when it may be placed.
    var slot: Date?
    /// How the CA validates the name, and for dns-01 the delegation as last looked up.
    var challenge: String?
    var delegation: DNSDelegation?
    /// Lookups in a row that found the delegation unusable: each waits twice as long as the one before.
    var delegationWaits = 0

    init(status: DomainCertificateStatus, appeared: Int) {
        self.status = status
        self.appeared = appeared
    }

    /// When a worker next has something to do for the domain: order or renew (not before its ``slot``), or ask the
    /// renewal window.
    var wake: Date? {
        guard let due, awaitingReload == nil else { return nil }
        if failures == 0, let nextCheck, nextCheck < due { return nextCheck }
        return max(due, slot ?? due)
    }

    /// The status with the queue's place and time while the order waits.
    var currentStatus: DomainCertificateStatus {
        var current = status
        if current.source == .acme {
            current.challenge = challenge
            current.delegation = delegation
        }
        current.eta = slot
        if slot == nil { current.queuePosition = nil }
        return current
    }

    /// When a worker takes the domain: ``wake``, unless a worker has it already.
    var dueForWorker: Date? { inProgress ? nil : wake }

    /// Whether an order for the domain is due at `now` and waits for the order rate: due, not running, not waiting
    /// for a reload, and not a renewal the CA exempts (inside its renewal window, sent with `replaces`).
    func waitsForTurn(now: Date, exempt: Bool) -> Bool {
        guard let due, due <= now, !inProgress, awaitingReload == nil, status.source == .acme else { return false }
        return !exempt
    }

    /// Whether a renewal now is inside the CA's suggested window (RFC 9773): Let's Encrypt does not count it.
    func isExemptRenewal(now: Date) -> Bool {
        guard notAfter != nil, !forced, let suggested else { return false }
        return suggested.contains(now)
    }

    /// Marks the domain taken by a worker at `now`: in progress, and pending or renewing when an order is due.
    mutating func claim(at now: Date) {
        inProgress = true
        if due.map({ $0 <= now }) == true, status.source == .acme {
            status.state = status.expiry == nil ? .pending : .renewing
        }
    }
}
