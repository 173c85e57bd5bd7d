/// A TXT record written for one dns-01 challenge: kept (with the domain's ACME history) until it is removed, so a
/// record left by a crash is removed at the next start.
public struct DNSChallengeRecord: Sendable, Hashable, Codable {
    /// The domain whose authorization it answers.
    public var domain: String
    /// The name written (where `_acme-challenge.<domain>`'s CNAMEs lead), without its final dot.
    public var name: String
    public var value: String
    /// The zone it was written in (`nil` when a hook wrote it).
    public var zone: String?
}
