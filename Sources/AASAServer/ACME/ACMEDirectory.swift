import AASACore

/// An ACME server's directory (RFC 8555 §7.1.1): the URLs of its resources and what it requires.
public struct ACMEDirectory: Sendable {
    /// Where the directory was read.
    public var url: String
    /// `newNonce`: a HEAD gives a fresh `Replay-Nonce`.
    public var newNonce: String
    /// `newAccount`.
    public var newAccount: String
    /// `newOrder`.
    public var newOrder: String
    /// `renewalInfo` (ACME Renewal Information, RFC 9773), when the server offers it.
    public var renewalInfo: String?
    /// `meta.termsOfService`: the terms an account must agree to, when the server has them.
    public var termsOfService: String?
    /// `meta.externalAccountRequired`: accounts need a binding to an account outside ACME.
    public var externalAccountRequired: Bool
    /// `meta.profiles` (ACME profiles, draft-aaron-acme-profiles): the name and description of each certificate
    /// profile a new order may ask for; empty when the server lists none.
    public var profiles: [String: String]

    /// Reads the directory document `body` fetched from `url`.
    ///
    /// Throws a ``ACMEFailure/Kind/protocolViolation`` failure when it is not JSON or lacks newNonce, newAccount
    /// or newOrder (the URL is then not an ACME directory), or when one of them or renewalInfo is not `https://`.
    init(url: String, body: [UInt8]) throws(ACMEFailure) {
        let json = JSONValue.parse(body)
        let resource = { (name: String) in json?[member: name]?.stringValue }
        guard let newNonce = resource("newNonce"), let newAccount = resource("newAccount"),
            let newOrder = resource("newOrder")
        else {
            throw ACMEFailure(
                .protocolViolation,
                json == nil
                    ? "the directory URL did not answer JSON: it is not an ACME directory"
                    : "the directory has no newNonce, newAccount or newOrder: it is not an ACME directory",
                url: url,
                hint:
                    "pass the directory URL itself with --acme-directory (Let's Encrypt: https://acme-v02.api.letsencrypt.org/directory)"
            )
        }
        for resource in [newNonce, newAccount, newOrder] + [resource("renewalInfo")].compactMap({ $0 }) {
            try ACMEClient.requireHTTPS(resource)
        }
        self.url = url
        self.newNonce = newNonce
        self.newAccount = newAccount
        self.newOrder = newOrder
        renewalInfo = resource("renewalInfo")
        let meta = json?[member: "meta"]
        termsOfService = meta?[member: "termsOfService"]?.stringValue
        if case .bool(true) = meta?[member: "externalAccountRequired"] {
            externalAccountRequired = true
        } else {
            externalAccountRequired = false
        }
        var profiles: [String: String] = [:]
        if case .object(let listed) = meta?[member: "profiles"] {
            for member in listed { profiles[member.key] = member.value.value.stringValue ?? "" }
        }
        self.profiles = profiles
    }
}
