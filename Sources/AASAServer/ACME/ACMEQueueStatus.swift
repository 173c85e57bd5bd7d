public import Foundation

/// The queue of new orders waiting for their turn under the CA's limits: `/status`' `acme.queue`, the dashboard's
/// queue panel and `aasa_acme_queue_pending`/`aasa_acme_paused`.
public struct ACMEQueueStatus: Sendable, Equatable {
    /// Orders due and waiting for a slot of the order rate or for a pause to end.
    public var pending: Int
    /// New orders per hour the fleet places at most (``OrderRate``); `nil` when pacing is off (`--acme-order-rate 0`).
    public var ratePerHour: Double?
    /// Until when every new order of the fleet waits, after the CA answered a rate limit (or was unavailable) with
    /// `Retry-After`; `nil` when not paused.
    public var pausedUntil: Date?
    /// Why the orders are paused: the CA's problem, naming the URL.
    public var pauseReason: String?
    /// Seconds until the last pending order is expected to be placed at the current rate (and after the pause);
    /// `nil` when nothing is pending.
    public var etaSeconds: Int?

    /// Creates a queue status.
    public init(
        pending: Int = 0, ratePerHour: Double? = nil, pausedUntil: Date? = nil, pauseReason: String? = nil,
        etaSeconds: Int? = nil
    ) {
        self.pending = pending
        self.ratePerHour = ratePerHour
        self.pausedUntil = pausedUntil
        self.pauseReason = pauseReason
        self.etaSeconds = etaSeconds
    }
}
