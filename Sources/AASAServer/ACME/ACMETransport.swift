public import AASACurl
import Foundation

/// Sends requests to an ACME server: libcurl in the server (``CurlACMETransport``), recorded exchanges in tests.
///
/// Everything RFC 8555 sends is a GET of the directory, a HEAD of newNonce, or a JWS POST
/// (`Content-Type: application/jose+json`), as ``HTTPClientRequest`` values.
public protocol ACMETransport: Sendable {
    /// Sends `request`; throws a ``ACMEFailure/Kind/network`` failure when no answer came.
    func send(_ request: HTTPClientRequest) throws(ACMEFailure) -> HTTPClientResponse
}

extension HTTPClientResponse {
    /// The longest wait a `Retry-After` sets: a CA asking for more is read as asking for this.
    static let longestRetryAfter: TimeInterval = 30 * 86_400

    /// When `Retry-After` (RFC 9110 §10.2.3: seconds or an HTTP date) says to come back, from `now`: never before
    /// `now`, never later than ``longestRetryAfter`` after it.
    func retryAfter(now: Date = Date()) -> Date? {
        guard let value = header("Retry-After")?.trimmingCharacters(in: .whitespaces) else { return nil }
        let seconds: TimeInterval
        if let whole = Int(value), whole >= 0 {
            seconds = TimeInterval(whole)
        } else {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
            guard let date = formatter.date(from: value) else { return nil }
            seconds = date.timeIntervalSince(now)
        }
        // A value past the bound (or not finite) waits the longest; one in the past, not at all.
        let bounded = seconds.isNaN ? Self.longestRetryAfter : min(max(seconds, 0), Self.longestRetryAfter)
        return now.addingTimeInterval(bounded)
    }
}
