/// A second CA (`--acme-fallback-directory`): an order that fails at the primary CA for the CA's own reason (a server
/// error, the CA unreachable) or meets a rate-limit pause longer than ``after`` is placed here. Validation failures
/// (the tenant's DNS, port 80) never switch CA. The fallback account signs with the same key as the primary's.
public struct ACMEFallback: Sendable {
    /// The fallback CA's directory URL.
    public var directoryURL: String
    /// PEM file of the trust anchors of the fallback CA's own HTTPS (`--acme-fallback-ca-file`); `nil`: the system's.
    public var caFile: String?
    /// The binding of the account at the fallback CA (`--acme-fallback-eab-kid`, `--acme-fallback-eab-hmac-key-file`).
    public var externalAccountBinding: ExternalAccountBinding?
    /// A rate-limit pause at the primary longer than this sends new orders to the fallback (`--acme-fallback-after`).
    public var after: Duration = .seconds(3600)

    /// The fallback CA at `directoryURL`.
    public init(directoryURL: String, caFile: String? = nil) {
        self.directoryURL = directoryURL
        self.caFile = caFile
    }
}
