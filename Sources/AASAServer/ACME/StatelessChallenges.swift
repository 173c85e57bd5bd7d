/// The http-01 answer every replica gives for any order of the fleet's account, whichever replica placed it: the key
/// authorization is the token and the account key's thumbprint (RFC 8555 §8.1), so a replica needs no word of the
/// order to answer it (§8.3 lets a client answer "statelessly"). The CA's validation may reach any replica behind the
/// load balancer.
///
/// Answered only for host names that are configured domains, and only for tokens of the form the CAs use (43
/// base64url characters: 256 bits, as Let's Encrypt and pebble issue); anything else is 404 as without ACME.
public struct StatelessChallenges: Sendable {
    /// The account key's JWK thumbprint (RFC 7638), base64url.
    public let thumbprint: String
    /// Whether a host name is a configured domain.
    public let isConfigured: @Sendable (String) -> Bool

    /// The length of the tokens answered.
    public static let tokenLength = 43

    /// Answers for the account whose key has `thumbprint`, on the hosts `isConfigured` accepts.
    public init(thumbprint: String, isConfigured: @escaping @Sendable (String) -> Bool) {
        self.thumbprint = thumbprint
        self.isConfigured = isConfigured
    }

    /// The key authorization for `token` on `host`, or `nil` when either is not one this server answers.
    public func answer(host: String, token: String) -> String? {
        guard token.utf8.count == Self.tokenLength, ACMEClient.isToken(token), isConfigured(host) else { return nil }
        return token + "." + thumbprint
    }
}
