/// Why a request got no answer, with a stable code, the URL, and the reason in libcurl's words.
///
/// Equality compares the code.
public struct HTTPClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure.
    public enum Code: String, Sendable {
        /// The name did not resolve.
        case resolve = "dns"
        /// The connection was refused or could not be made.
        case connect
        /// The TLS handshake failed or the server's certificate did not verify.
        case tls
        /// No answer in time.
        case timeout
        /// The response was larger than the client accepts.
        case tooLarge = "too-large"
        /// The URL or the request cannot be sent (bad URL, unsupported scheme).
        case request
        /// Anything else libcurl reports.
        case other
    }

    /// What kind of failure.
    public let code: Code
    /// The URL asked for.
    public let url: String
    /// What went wrong, in libcurl's words.
    public let reason: String

    /// Creates an error.
    public init(_ code: Code, url: String, reason: String) {
        self.code = code
        self.url = url
        self.reason = reason
    }

    /// `[code] url: reason`.
    public var description: String { "[\(code.rawValue)] \(url): \(reason)" }

    /// Errors are equal when their codes are.
    public static func == (lhs: HTTPClientError, rhs: HTTPClientError) -> Bool { lhs.code == rhs.code }
}
