/// A TXT record written for one dns-01 challenge. It is kept in its domain's ``ACMEHistory`` from just before it is
/// written until it is removed, so a record a crash left behind is removed at the next start.
public struct DNSChallengeRecord: Sendable, Hashable {
    /// The domain whose authorization it answers.
    public var domain: String
    /// The name written (where `_acme-challenge.<domain>`'s CNAMEs lead), without its final dot.
    public var name: String
    public var value: String
    /// The zone it was written in (`nil` when a hook wrote it).
    public var zone: String?

    public init(domain: String, name: String, value: String, zone: String?) {
        self.domain = domain
        self.name = name
        self.value = value
        self.zone = zone
    }

    /// The record as stored.
    package var json: JSONValue {
        .members([
            ("domain", .string(domain)), ("name", .string(name)), ("value", .string(value)),
            ("zone", zone.map { .string($0) } ?? .null),
        ])
    }

    /// A stored record; `nil` when a member is missing.
    package init?(json: JSONValue) {
        guard let domain = json[member: "domain"]?.stringValue, let name = json[member: "name"]?.stringValue,
            let value = json[member: "value"]?.stringValue
        else { return nil }
        self.init(domain: domain, name: name, value: value, zone: json[member: "zone"]?.stringValue)
    }
}
