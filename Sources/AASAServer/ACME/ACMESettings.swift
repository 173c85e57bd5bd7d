/// How the server obtains and renews certificates by ACME (`serve --acme`, `certs acme`).
public struct ACMESettings: Sendable {
    /// Let's Encrypt's production directory: the default CA.
    public static let letsEncrypt = "https://acme-v02.api.letsencrypt.org/directory"

    /// The CA's directory URL (`--acme-directory`).
    public var directoryURL: String = letsEncrypt
    /// The contact address registered with the account (`--acme-email`).
    public var email: String?
    /// Whether the operator agreed to the CA's terms of service (`--acme-agree-tos`).
    public var agreesToTerms = false
    /// PEM file of the trust anchors for the ACME server's own HTTPS (`--acme-ca-file`); `nil`: the system's.
    public var caFile: String?
    /// Renew when less than this remains (`--acme-renew-before`); `nil`: when a third of the lifetime remains.
    public var renewBefore: Duration?
    /// The wait after a first failure (`--acme-retry-min`), doubled at each further one up to ``maximumRetry``.
    public var minimumRetry: Duration = .seconds(60)
    /// The longest wait between two attempts for one domain.
    public var maximumRetry: Duration = .seconds(86_400)
    /// Most orders at once (`--acme-concurrency`): more domains queue.
    public var concurrency = 3
    /// How long one authorization or order may stay pending before the attempt fails.
    public var pollTimeout: Duration = .seconds(300)
    /// New orders per period at most, shared by the fleet (`--acme-order-rate`); `nil`: not paced (a private CA).
    public var orderRate: OrderRate? = .letsEncrypt
    /// The second CA, for orders the primary cannot issue (`--acme-fallback-directory`).
    public var fallback: ACMEFallback?
    /// The certificate profile asked for in each new order (`--acme-profile`), one the directory's
    /// `meta.profiles` lists; `nil`: the CA's default.
    public var profile: String?
    /// The binding of the account to an account at the CA (`--acme-eab-kid`, `--acme-eab-hmac-key-file`), for CAs
    /// that require one.
    public var externalAccountBinding: ExternalAccountBinding?
    /// How dns-01 challenges are answered (`--acme-dns-*`, `--acme-wildcard`); `nil`: every name with http-01.
    public var dns: DNSChallengeSettings?

    /// The defaults: Let's Encrypt, no contact, terms not accepted.
    public init() {}
}
