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
    /// When `Retry-After` (RFC 9110 §10.2.3: seconds or an HTTP date) says to come back, from `now`.
    func retryAfter(now: Date = Date()) -> Date? {
        guard let value = header("Retry-After")?.trimmingCharacters(in: .whitespaces) else { return nil }
        if let seconds = Int(value), seconds >= 0 { return now.addingTimeInterval(TimeInterval(seconds)) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: value)
    }
}
