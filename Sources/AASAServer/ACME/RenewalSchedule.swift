import AASACore
public import Foundation

/// When a certificate is renewed and when a failed order is tried again.
///
/// Renewal starts when a third of the lifetime remains, moved earlier by a spread that is fixed for each domain and
/// certificate, so thousands of domains issued together do not renew in the same minute; a window the CA suggests
/// (ACME Renewal Information, RFC 9773) wins over that, and the operator's ``renewBefore`` over both. Failures are retried after
/// ``minimumRetry``, ten and a hundred times that, then every ``maximumRetry``, never before the CA's `Retry-After`.
public struct RenewalSchedule: Sendable {
    /// Renew when less than this remains; `nil`: a third of the lifetime.
    public var renewBefore: Duration?
    /// The wait after a first failure.
    public var minimumRetry: Duration
    /// The longest wait after failures.
    public var maximumRetry: Duration

    /// Creates a schedule.
    public init(
        renewBefore: Duration? = nil, minimumRetry: Duration = .seconds(60), maximumRetry: Duration = .seconds(86_400)
    ) {
        self.renewBefore = renewBefore
        self.minimumRetry = minimumRetry
        self.maximumRetry = maximumRetry
    }

    /// When to renew the certificate of `domain` valid from `notBefore` to `notAfter`.
    ///
    /// - `suggested`: the CA's renewal window, when it gave one; a point in it, fixed per domain, is chosen (unless
    ///   ``renewBefore`` is set).
    /// - `issuedHere`: when this process obtained that certificate: it is not renewed again before a tenth of its
    ///   lifetime has passed, so a renewal window wider than the lifetime (`--acme-renew-before`) renews each
    ///   certificate once per start instead of in a loop.
    public func renewal(
        domain: String, notBefore: Date, notAfter: Date, suggested: ClosedRange<Date>? = nil, issuedHere: Date? = nil
    ) -> Date {
        let lifetime = max(notAfter.timeIntervalSince(notBefore), 60)
        let fraction = Self.spread(domain, notAfter)
        let due: Date
        if let suggested, renewBefore == nil {
            due = suggested.lowerBound.addingTimeInterval(
                suggested.upperBound.timeIntervalSince(suggested.lowerBound) * fraction)
        } else {
            let window = renewBefore?.timeInterval ?? lifetime / 3
            due = notAfter.addingTimeInterval(-window - window / 10 * fraction)
        }
        guard let issuedHere else { return due }
        return max(due, issuedHere.addingTimeInterval(max(lifetime / 10, 60)))
    }

    /// When to try again after the `failures`-th failure in a row at `now`, as Let's Encrypt's integration guide
    /// asks: ``minimumRetry`` (1 minute), ten times that, a hundred times that, then ``maximumRetry`` (a day); never
    /// before `retryAfter`.
    public func retry(failures: Int, now: Date, retryAfter: Date?) -> Date {
        let delay =
            failures <= 3
            ? minimumRetry.timeInterval * [1, 10, 100][max(failures, 1) - 1] : maximumRetry.timeInterval
        return max(now.addingTimeInterval(min(delay, maximumRetry.timeInterval)), retryAfter ?? .distantPast)
    }

    /// A fraction in [0, 1) fixed by the domain and the certificate (FNV-1a): the same on every restart.
    static func spread(_ domain: String, _ notAfter: Date) -> Double {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        let seconds = CheckedNumber.clamped(notAfter.timeIntervalSince1970, to: Int.min...Int.max)
        for byte in Array(domain.utf8) + Array(String(seconds).utf8) {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return Double(hash >> 11) / Double(1 << 53)
    }
}
