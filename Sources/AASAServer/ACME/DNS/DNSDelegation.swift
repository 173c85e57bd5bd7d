import AASADNS

/// Where a domain's dns-01 TXT record goes, and whether the server can write it there: `_acme-challenge.<domain>`
/// itself, or the name its CNAMEs lead to (a tenant delegating the challenge into a zone the provider controls).
public struct DNSDelegation: Sendable, Equatable {
    /// Whether the record can be written.
    public enum State: String, Sendable {
        /// `_acme-challenge.<domain>` is a CNAME into the zone the server updates.
        case inPlace = "in-place"
        /// No CNAME: the record is written at `_acme-challenge.<domain>` itself, in the domain's own zone.
        case direct
        /// The CNAME the server needs is not there (or points elsewhere): ``record`` is what to add.
        case missing
        /// The lookups failed: ``message`` says why.
        case unknown
    }

    public var domain: String
    public var state: State
    /// `_acme-challenge.<domain>`, and where its CNAMEs lead (the same name without one), without final dots.
    public var name: String
    public var target: String
    /// The zone the server writes the record in, when known.
    public var zone: String?
    /// The record the tenant adds, in zone file form, when ``state`` is ``State/missing``.
    public var record: String?
    /// What was found, in words.
    public var message: String

    /// Whether the server can write the record now.
    public var isUsable: Bool { state == .inPlace || state == .direct }

    /// The name of the challenge record of `domain`.
    static func challengeName(of domain: String) -> String { "_acme-challenge." + DNSName.relative(domain) }
}
