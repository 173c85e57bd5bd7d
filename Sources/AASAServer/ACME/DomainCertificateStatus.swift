public import Foundation

/// Where one domain's certificate comes from and stands: the `certificate` member of its entry in `/status`.
public struct DomainCertificateStatus: Sendable, Equatable {
    /// Who provides the certificate.
    public enum Source: String, Sendable {
        /// The operator's files in the certificate folder: the server never replaces them.
        case files
        /// Obtained and renewed by the server (`serve --acme`).
        case acme
    }

    /// Where it stands.
    public enum State: String, Sendable {
        /// A trusted certificate covering the domain is served.
        case valid
        /// None yet: an order is queued or running, and a temporary self-signed certificate is served meanwhile.
        case pending
        /// The served certificate is being renewed.
        case renewing
        /// The last attempt failed (``lastProblem`` says why), or the operator's certificate is expired or missing;
        /// a certificate still valid keeps being served.
        case failed
    }

    /// Who provides it.
    public var source: Source
    /// Where it stands.
    public var state: State
    /// When the served certificate expires; `nil` when none covers the domain.
    public var expiry: Date?
    /// When the server renews it (or retries after a failure); `nil` for the operator's certificates.
    public var nextRenewal: Date?
    /// The last failure, in words, with its fix.
    public var lastError: String?
    /// The CA's last problem document, verbatim.
    public var lastProblem: String?
    /// While the domain's order waits for its turn under the CA's limits: its place in the queue of new orders
    /// (1 is next), and when it is expected to be placed (``ACMEQueueStatus``).
    public var queuePosition: Int?
    public var eta: Date?
    /// The directory URL of the CA that issued the served certificate, when the server obtained it.
    public var issuer: String?
    /// How the CA validates the name: `http-01` or `dns-01` (``ACMESettings/dns``); `nil` for the operator's
    /// certificates.
    public var challenge: String?
    /// For dns-01: where the challenge record goes and whether the server can write it, as last looked up.
    public var delegation: DNSDelegation?
    /// The wildcard certificate that covers the domain (`*.shop.example`, ``DNSChallengeSettings/wildcards``), whose
    /// status this is.
    public var wildcard: String?

    /// Creates a status.
    public init(
        source: Source, state: State, expiry: Date? = nil, nextRenewal: Date? = nil, lastError: String? = nil,
        lastProblem: String? = nil
    ) {
        self.source = source
        self.state = state
        self.expiry = expiry
        self.nextRenewal = nextRenewal
        self.lastError = lastError
        self.lastProblem = lastProblem
    }
}
