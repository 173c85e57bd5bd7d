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
    /// Whether the DNS server took an empty update of ``zone`` signed with the key (it is the zone's primary and
    /// accepts the key); `nil` when not asked (a hook writes the records, or the zone is not known).
    public var updatable: Bool?
    /// What was found, in words.
    public var message: String

    /// What to do when the record cannot be written: the tenant's record to add, the key to give, or the DNS
    /// options to check.
    public var fix: String {
        if let record { return "the domain's owner adds \(record) to its DNS" }
        if updatable == false {
            return "give the key the zone's primary server accepts (--acme-dns-tsig-key-file) and send updates to it "
                + "(--acme-dns-server)"
        }
        return "check the DNS options (--acme-dns-resolver, --acme-dns-zone)"
    }

    /// Whether the server can write the record now.
    public var isUsable: Bool { (state == .inPlace || state == .direct) && updatable != false }

    /// The name of the challenge record of `domain`.
    static func challengeName(of domain: String) -> String { "_acme-challenge." + DNSName.relative(domain) }
}
