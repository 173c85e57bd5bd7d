public import AASACore

/// Makes an http-01 answer reachable at `http://<domain>/.well-known/acme-challenge/<token>` (RFC 8555 §8.3) while
/// the CA validates, and takes it away afterwards.
public protocol ChallengeResponder: Sendable {
    /// Answers `keyAuthorization` for `token` on `domain` from now on.
    func publish(token: String, keyAuthorization: String, domain: String) throws(ACMEFailure)
    /// Stops answering `token` on `domain`.
    func withdraw(token: String, domain: String)
}

/// Publishes a dns-01 answer (RFC 8555 §8.4) as a TXT record at `_acme-challenge.<domain>` (or where its CNAMEs
/// lead) while the CA validates, and removes it afterwards.
public protocol DNSChallengeResponder: Sendable {
    /// Whether `domain`'s authorizations are answered with dns-01 rather than http-01.
    func answers(_ domain: String) -> Bool
    /// Writes `value` and returns once the CA can see it.
    func present(domain: String, value: String) throws(ACMEFailure) -> DNSChallengeRecord
    /// Removes what ``present(domain:value:)`` wrote.
    func cleanup(_ record: DNSChallengeRecord)
}
