/// Makes an http-01 answer reachable at `http://<domain>/.well-known/acme-challenge/<token>` (RFC 8555 §8.3) while
/// the CA validates, and takes it away afterwards.
public protocol ChallengeResponder: Sendable {
    /// Answers `keyAuthorization` for `token` on `domain` from now on.
    func publish(token: String, keyAuthorization: String, domain: String) throws(ACMEFailure)
    /// Stops answering `token` on `domain`.
    func withdraw(token: String, domain: String)
}
