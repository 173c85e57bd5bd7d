public import Foundation

/// What the admin route `POST /acme/retry?domain=D` (and the dashboard's retry button) did for one domain
/// (``ACMEManager/retryNow(_:now:)``).
public enum ACMERetryOutcome: Sendable, Equatable {
    /// The domain's order is due now: it takes `position` in the queue of new orders (1 is next), or is placed at
    /// once when `position` is `nil`.
    case queued(position: Int?)
    /// An order for the domain is running now (on this replica or another).
    case inProgress
    /// No configured domain has that name.
    case unknownDomain
    /// The domain's certificate is the operator's (files, or a pushed certificate), which the server never replaces.
    case notManaged(reason: String)
    /// The name failed validation too often in the last hour (at most 5, as Let's Encrypt allows): retry after
    /// `until`.
    case tooManyFailures(until: Date)
}
