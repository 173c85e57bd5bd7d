public import AASADNS

/// How dns-01 challenges are answered (RFC 8555 §8.4): for which names, through which DNS, and how long the server
/// waits for a TXT record to be seen.
public struct DNSChallengeSettings: Sendable {
    /// How the TXT record is published.
    public enum Publisher: Sendable {
        /// RFC 2136 dynamic updates to the zone's primary server (`--acme-dns-server`), signed with the key
        /// (`--acme-dns-tsig-key-file`).
        case update(server: DNSServerAddress, key: TSIGKey?)
        /// A program run as `PATH present|cleanup FQDN VALUE` (`--acme-dns-hook`), with a time limit.
        case hook(path: String, timeout: Duration)
    }

    /// Where a TXT record must be seen before the CA is asked to look.
    public enum Propagation: String, Sendable, CaseIterable {
        /// Through the resolver and at every authoritative name server of the zone (port 53).
        case all
        /// Through the resolver only.
        case resolver
    }

    /// The names obtained with dns-01 (`--acme-dns-names`); wildcard certificates always are.
    public var names: DNSNamePatterns
    public var publisher: Publisher
    /// The zone records are written in (`--acme-dns-zone`), and where tenants point their CNAMEs; `nil`: each name's
    /// zone is found by an SOA lookup.
    public var zone: String?
    /// Where lookups go (`--acme-dns-resolver`); `nil`: the system's resolvers.
    public var resolver: DNSServerAddress?
    public var propagation: Propagation = .all
    /// How long the server waits for a TXT record to be seen (`--acme-dns-propagation-timeout`).
    public var propagationTimeout: Duration = .seconds(180)
    /// How often it looks meanwhile.
    public var propagationInterval: Duration = .seconds(2)
    /// The TTL of the TXT records written.
    public var ttl: UInt32 = 60
    /// The base names of wildcard certificates (`--acme-wildcard`), lower-case: one certificate for `name` and
    /// `*.name` each.
    public var wildcards: Set<String> = []

    public init(names: DNSNamePatterns, publisher: Publisher) {
        self.names = names
        self.publisher = publisher
    }

    /// Whether `domain`'s authorizations are answered with dns-01.
    public func answers(_ domain: String) -> Bool {
        names.matches(domain) || isWildcardBase(domain)
    }

    /// Whether `domain` (in any case) is the base of a wildcard certificate.
    public func isWildcardBase(_ domain: String) -> Bool { wildcards.contains(domain.lowercased()) }

    /// The base of the wildcard certificate that covers `domain` (in any case): `domain` itself when it is a base,
    /// else the name one label above it when that is; `nil` when none covers it. Two lookups, whatever the number of
    /// wildcards.
    public func wildcard(covering domain: String) -> String? {
        let domain = domain.lowercased()
        if wildcards.contains(domain) { return domain }
        guard let dot = domain.firstIndex(of: "."), dot > domain.startIndex else { return nil }
        let parent = String(domain[domain.index(after: dot)...])
        return wildcards.contains(parent) ? parent : nil
    }
}
