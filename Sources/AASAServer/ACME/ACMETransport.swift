import Foundation

/// One request to an ACME server: everything RFC 8555 sends is a GET of the directory, a HEAD of newNonce, or a
/// JWS POST.
public struct ACMERequest: Sendable {
    /// The request method.
    public enum Method: String, Sendable {
        case get = "GET"
        case head = "HEAD"
        case post = "POST"
    }

    /// The method.
    public var method: Method
    /// The absolute URL.
    public var url: String
    /// The flattened JWS (POST only), sent as `application/jose+json`.
    public var body: [UInt8]
    /// The `Accept` header, when one matters (`application/pem-certificate-chain` for the certificate download).
    public var accept: String?

    /// Creates a request.
    public init(_ method: Method, url: String, body: [UInt8] = [], accept: String? = nil) {
        self.method = method
        self.url = url
        self.body = body
        self.accept = accept
    }
}

/// An ACME server's answer.
public struct ACMEResponse: Sendable {
    /// The HTTP status.
    public var status: Int
    /// The header fields, in order.
    public var headers: [(name: String, value: String)]
    /// The body.
    public var body: [UInt8]

    /// Creates a response.
    public init(status: Int, headers: [(name: String, value: String)], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The first value of header `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

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

/// Sends requests to an ACME server: libcurl in the server (``CurlACMETransport``), recorded exchanges in tests.
public protocol ACMETransport: Sendable {
    /// Sends `request`; throws a ``ACMEFailure/Kind/network`` failure when no answer came.
    func send(_ request: ACMERequest) throws(ACMEFailure) -> ACMEResponse
}
