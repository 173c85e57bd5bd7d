public import Foundation

/// Why an ACME operation did not end with a certificate: what happened, at which URL, the CA's problem document
/// when it sent one, and what to do about it. Every failure leaves what is served as it was.
public struct ACMEFailure: Error, Sendable, CustomStringConvertible {
    /// What kind of failure, for logs, metrics and retries.
    public enum Kind: String, Sendable {
        /// The ACME server could not be reached (DNS, connection, TLS, timeout).
        case network
        /// The ACME server answered with a problem document.
        case problem
        /// The ACME server answered something that is not ACME (not JSON, a missing field, an unknown status).
        case protocolViolation = "protocol"
        /// The CA could not validate the challenge for a name.
        case challenge
        /// The options or the environment are wrong (no contact email, terms not accepted, no HTTP listener).
        case configuration
        /// A file could not be read or written (the account key, the issued certificate).
        case storage
        /// A dns-01 record could not be written, removed or seen (the DNS server, its key, the hook, a delegation).
        case dns
    }

    /// What kind of failure.
    public var kind: Kind
    /// What happened, naming the domain when there is one.
    public var message: String
    /// The URL that failed, when a request did.
    public var url: String?
    /// What to do about it.
    public var hint: String
    /// The CA's problem document, verbatim, when it sent one.
    public var problem: ACMEProblem?
    /// The earliest time the CA allows another attempt (`Retry-After`), when it said.
    public var retryAfter: Date?

    /// Creates a failure.
    public init(
        _ kind: Kind, _ message: String, url: String? = nil, hint: String, problem: ACMEProblem? = nil,
        retryAfter: Date? = nil
    ) {
        self.kind = kind
        self.message = message
        self.url = url
        self.hint = hint
        self.problem = problem
        self.retryAfter = retryAfter
    }

    /// `message (url): hint`.
    public var description: String {
        message + (url.map { " (\($0))" } ?? "") + "; " + hint
    }

    /// The same failure with `domain` named in front of its message.
    func about(_ domain: String) -> ACMEFailure {
        var named = self
        if !message.hasPrefix(domain + ": ") { named.message = domain + ": " + message }
        return named
    }
}
