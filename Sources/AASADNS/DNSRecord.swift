/// One resource record, as the lookups and updates here use them: the owner name (absolute, with its final dot),
/// the type, the TTL and the data in presentation form (a TXT record's strings joined, unquoted).
public struct DNSRecord: Sendable, Hashable, CustomStringConvertible {
    /// The record types the server asks for and writes.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case a = "A"
        case aaaa = "AAAA"
        case ns = "NS"
        case cname = "CNAME"
        case soa = "SOA"
        case txt = "TXT"
    }

    public var name: String
    public var kind: Kind
    public var ttl: UInt32
    /// The data: an address, a target name (with its final dot), an SOA's primary name server, or a TXT value.
    public var value: String

    public init(name: String, kind: Kind, ttl: UInt32, value: String) {
        self.name = DNSName.absolute(name)
        self.kind = kind
        self.ttl = ttl
        self.value = value
    }

    /// The record as a zone file writes it, a TXT value quoted.
    public var description: String {
        "\(name) \(ttl) IN \(kind.rawValue) " + (kind == .txt ? DNSName.quoted(value) : value)
    }
}

/// The answer to one query.
public struct DNSAnswer: Sendable {
    /// `NOERROR`, `NXDOMAIN`, `SERVFAIL`, `REFUSED`, …
    public var rcode: String
    /// The answer section, and the authority section (where a zone's SOA comes with a name that does not exist).
    public var answer: [DNSRecord]
    public var authority: [DNSRecord]

    public init(rcode: String, answer: [DNSRecord], authority: [DNSRecord]) {
        self.rcode = rcode
        self.answer = answer
        self.authority = authority
    }

    /// The answer's records of `kind` owned by `name`.
    public func records(_ kind: DNSRecord.Kind, of name: String) -> [DNSRecord] {
        let owner = DNSName.absolute(name)
        return answer.filter { $0.kind == kind && DNSName.equal($0.name, owner) }
    }
}
