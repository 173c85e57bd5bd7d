internal import CLDNS
import Foundation

/// Queries and RFC 2136 updates through ldns: to one named server, or to the system's resolvers
/// (`/etc/resolv.conf`). Each call makes its own ldns resolver, so a client is safe to share between threads.
public struct DNSClient: Sendable {
    /// The server asked; `nil`: the system's resolvers.
    public var server: DNSServerAddress?
    /// How long each try of a message waits for its answer; a message is tried twice.
    public var timeout: Duration

    public init(server: DNSServerAddress? = nil, timeout: Duration = .seconds(5)) {
        self.server = server
        self.timeout = timeout
    }

    /// Where the messages go, for messages and logs.
    public var serverName: String { server?.description ?? "the system's resolvers" }

    /// Asks for `name`'s records of `kind`, with recursion desired unless `recursive` is false (a question to an
    /// authoritative server). An answer with any response code is returned; no answer is an error.
    public func query(_ name: String, _ kind: DNSRecord.Kind, recursive: Bool = true) throws(DNSError) -> DNSAnswer {
        guard DNSName.isValid(name) else {
            throw DNSError(
                .configuration, "'\(name)' is not a domain name", hint: "give a name of letters, digits and -")
        }
        let resolver = try makeResolver()
        defer { ldns_resolver_deep_free(resolver) }
        ldns_resolver_set_recursive(resolver, recursive ? 1 : 0)
        guard let owner = ldns_dname_new_frm_str(DNSName.absolute(name)) else {
            throw DNSError(
                .configuration, "'\(name)' is not a domain name", hint: "give a name of letters, digits and -")
        }
        defer { ldns_rdf_deep_free(owner) }
        var packet: UnsafeMutablePointer<ldns_pkt>?
        let status = ldns_resolver_send(
            &packet, resolver, owner, Self.type(kind), LDNS_RR_CLASS_IN, recursive ? UInt16(LDNS_RD) : 0)
        guard status == LDNS_STATUS_OK, let packet else {
            throw DNSError(
                .network,
                "no answer from \(serverName) to \(DNSName.relative(name)) \(kind.rawValue): \(Self.text(status))",
                hint: "check that the DNS server is up and reachable from this host")
        }
        defer { ldns_pkt_free(packet) }
        return DNSAnswer(
            rcode: Self.rcode(ldns_pkt_get_rcode(packet)), answer: Self.records(ldns_pkt_answer(packet)),
            authority: Self.records(ldns_pkt_authority(packet)))
    }

    /// Sends one dynamic update (RFC 2136) for `zone` to ``server``: removes each record of `deleting` (that exact
    /// value; others at the name stay) and adds each of `adding`, signed with `key` when given (RFC 8945). The
    /// server applies all of it or none. With nothing to add or delete it changes nothing, and still answers whether
    /// it is authoritative for the zone and accepts the key: a check that updates would be taken.
    public func update(zone: String, adding: [DNSRecord], deleting: [DNSRecord], key: TSIGKey?) throws(DNSError) {
        guard DNSName.isValid(zone) else {
            throw DNSError(
                .configuration, "'\(zone)' is not a zone name", hint: "give the zone's apex, e.g. example.com")
        }
        // A name read back (a CNAME's target, a state file) is written into the record's text: only a plain name
        // may be, so it cannot add fields of its own.
        for record in adding + deleting where !DNSName.isValid(record.name) {
            throw DNSError(
                .configuration, "'\(record.name)' is not a name a record is written at",
                hint: "use names of letters, digits, - and _ (the CNAME's target, or the state file's record)")
        }
        for record in adding + deleting where !DNSName.isWithin(record.name, zone: zone) {
            throw DNSError(
                .configuration, "\(DNSName.relative(record.name)) is not in zone \(DNSName.relative(zone))",
                hint: "update each name through the zone that holds it")
        }
        let resolver = try makeResolver()
        defer { ldns_resolver_deep_free(resolver) }
        guard let list = ldns_rr_list_new() else {
            throw DNSError(.configuration, "out of memory", hint: "give the server more memory")
        }
        defer { ldns_rr_list_deep_free(list) }
        for (record, removes) in deleting.map({ ($0, true) }) + adding.map({ ($0, false) }) {
            var made: UnsafeMutablePointer<ldns_rr>?
            let status = ldns_rr_new_frm_str(&made, record.description, 0, nil, nil)
            guard status == LDNS_STATUS_OK, let made else {
                throw DNSError(
                    .configuration, "cannot write the record \(record): \(Self.text(status))",
                    hint: "give a record of a valid name and value")
            }
            if removes {
                // RFC 2136 §2.5.4: class NONE and TTL 0 delete the record with exactly this data.
                ldns_rr_set_class(made, LDNS_RR_CLASS_NONE)
                ldns_rr_set_ttl(made, 0)
            }
            _ = ldns_rr_list_push_rr(list, made)
        }
        guard let zoneName = ldns_dname_new_frm_str(DNSName.absolute(zone)),
            // Takes zoneName, copies the list.
            let packet = ldns_update_pkt_new(zoneName, LDNS_RR_CLASS_IN, nil, list, nil)
        else {
            throw DNSError(.configuration, "cannot make the update for \(zone)", hint: "report this")
        }
        defer { ldns_pkt_free(packet) }
        if let key {
            ldns_resolver_set_tsig_keyname(resolver, key.name)
            ldns_resolver_set_tsig_algorithm(resolver, key.algorithm)
            ldns_resolver_set_tsig_keydata(resolver, key.secret)
            let signed = ldns_update_pkt_tsig_add(packet, resolver)
            guard signed == LDNS_STATUS_OK else {
                throw DNSError(
                    .key, "cannot sign the update with \(key): \(Self.text(signed))",
                    hint: "check the key file's algorithm and secret")
            }
        }
        var answer: UnsafeMutablePointer<ldns_pkt>?
        let status = ldns_resolver_send_pkt(&answer, resolver, packet)
        defer { if let answer { ldns_pkt_free(answer) } }
        let changed = Set((adding + deleting).map { DNSName.relative($0.name) }).sorted().joined(separator: ", ")
        let names = changed.isEmpty ? "zone \(DNSName.relative(zone)) (changing nothing)" : changed
        if let answer, ldns_pkt_get_rcode(answer) != LDNS_RCODE_NOERROR {
            let rcode = Self.rcode(ldns_pkt_get_rcode(answer))
            throw Self.refusal(rcode, server: serverName, zone: DNSName.relative(zone), names: names, key: key)
        }
        guard status == LDNS_STATUS_OK, answer != nil else {
            if status == LDNS_STATUS_CRYPTO_TSIG_BOGUS || status == LDNS_STATUS_CRYPTO_TSIG_ERR {
                throw DNSError(
                    .key,
                    "\(serverName) did not accept the update of \(names) signed with \(key.map(\.description) ?? "no key"): "
                        + "its answer carries no valid signature, as when it does not know the key or holds another secret",
                    hint:
                        "give the key file the server's configuration holds (tsig-keygen's output, name and secret alike)"
                )
            }
            throw DNSError(
                .network, "no answer from \(serverName) to the update of \(names): \(Self.text(status))",
                hint: "check that the primary DNS server (--acme-dns-server) is up and reachable from this host")
        }
    }

    /// The error for an update the server answered with `rcode`.
    private static func refusal(_ rcode: String, server: String, zone: String, names: String, key: TSIGKey?)
        -> DNSError
    {
        let message = "\(server) answered \(rcode) to the update of \(names) in zone \(zone)"
        switch (rcode, key) {
        case ("NOTAUTH", let key?):
            return DNSError(
                .key, message + ": it does not accept \(key) (an unknown key, or a wrong secret or algorithm)",
                hint:
                    "give the key file the server's configuration holds (tsig-keygen's output, name and secret alike)",
                rcode: rcode)
        case ("NOTAUTH", nil):
            return DNSError(
                .answered, message + ": it is not authoritative for the zone, or wants a signed update",
                hint: "send updates to the zone's primary server, with its TSIG key (--acme-dns-tsig-key-file)",
                rcode: rcode)
        case ("REFUSED", _):
            return DNSError(
                .answered, message + ": its policy does not let \(key?.description ?? "an unsigned update") change it",
                hint:
                    "allow the key to update TXT records in the zone (BIND: update-policy { grant KEY zonesub TXT; };)",
                rcode: rcode)
        case ("NOTZONE", _):
            return DNSError(
                .answered, message + ": the name is not in that zone",
                hint: "give the zone that holds the name (--acme-dns-zone), or leave the zone to the SOA lookup",
                rcode: rcode)
        default:
            return DNSError(.answered, message, hint: "see the DNS server's log", rcode: rcode)
        }
    }

    /// A resolver for ``server`` (or the system's), with ``timeout`` and two tries.
    private func makeResolver() throws(DNSError) -> UnsafeMutablePointer<ldns_resolver> {
        let resolver: UnsafeMutablePointer<ldns_resolver>
        if let server {
            guard let made = ldns_resolver_new() else {
                throw DNSError(.configuration, "out of memory", hint: "give the server more memory")
            }
            resolver = made
            let addresses = Self.addresses(of: server.host)
            guard !addresses.isEmpty else {
                ldns_resolver_deep_free(resolver)
                throw DNSError(
                    .network, "the DNS server \(server) has no address",
                    hint: "give its IP address, or a resolvable name")
            }
            for address in addresses {
                guard
                    let rdf = ldns_rdf_new_frm_str(
                        address.contains(":") ? LDNS_RDF_TYPE_AAAA : LDNS_RDF_TYPE_A, address)
                else { continue }
                _ = ldns_resolver_push_nameserver(resolver, rdf)
                ldns_rdf_deep_free(rdf)
            }
            ldns_resolver_set_port(resolver, server.port)
        } else {
            var made: UnsafeMutablePointer<ldns_resolver>?
            let status = ldns_resolver_new_frm_file(&made, nil)
            guard status == LDNS_STATUS_OK, let made else {
                throw DNSError(
                    .configuration, "cannot read the system's resolvers (/etc/resolv.conf): \(Self.text(status))",
                    hint: "give a resolver with --acme-dns-resolver HOST:PORT")
            }
            resolver = made
        }
        let microseconds = max(
            100_000, timeout.components.seconds * 1_000_000 + timeout.components.attoseconds / 1_000_000_000_000)
        ldns_resolver_set_timeout(
            resolver, timeval(tv_sec: Int(microseconds / 1_000_000), tv_usec: Int(microseconds % 1_000_000)))
        ldns_resolver_set_retry(resolver, 2)
        ldns_resolver_set_retrans(resolver, 1)
        ldns_resolver_set_dnssec(resolver, 0)
        ldns_resolver_set_fallback(resolver, 1)
        return resolver
    }

    /// The addresses of `host`: itself when it is an IP address, else what the system resolves it to.
    private static func addresses(of host: String) -> [String] {
        var probe = in6_addr()
        if inet_pton(AF_INET, host, &probe) == 1 || inet_pton(AF_INET6, host, &probe) == 1 { return [host] }
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else { return [] }
        defer { freeaddrinfo(list) }
        var found: [String] = []
        for entry in sequence(first: first, next: { $0.pointee.ai_next }) {
            var text = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            if getnameinfo(
                entry.pointee.ai_addr, entry.pointee.ai_addrlen, &text, socklen_t(text.count), nil, 0, NI_NUMERICHOST)
                == 0
            {
                let address = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                if !found.contains(address) { found.append(address) }
            }
        }
        return found
    }

    /// The records of an ldns list (a packet's section).
    private static func records(_ list: UnsafeMutablePointer<ldns_rr_list>?) -> [DNSRecord] {
        guard let list else { return [] }
        return (0..<ldns_rr_list_rr_count(list)).compactMap { index -> DNSRecord? in
            guard let rr = ldns_rr_list_rr(list, index),
                let kind = DNSRecord.Kind.allCases.first(where: { type($0) == ldns_rr_get_type(rr) })
            else { return nil }
            let value: String
            if kind == .txt {
                value = (0..<ldns_rr_rd_count(rr)).map { DNSName.unquoted(text(ldns_rr_rdf(rr, $0))) }.joined()
            } else {
                value = text(ldns_rr_rdf(rr, 0))
            }
            return DNSRecord(name: text(ldns_rr_owner(rr)), kind: kind, ttl: ldns_rr_ttl(rr), value: value)
        }
    }

    private static func text(_ rdf: UnsafeMutablePointer<ldns_rdf>?) -> String {
        guard let rdf, let characters = ldns_rdf2str(rdf) else { return "" }
        defer { free(characters) }
        return String(cString: characters)
    }

    private static func text(_ status: ldns_status) -> String {
        ldns_get_errorstr_by_id(status).map { String(cString: $0) } ?? "ldns status \(status.rawValue)"
    }

    private static func type(_ kind: DNSRecord.Kind) -> ldns_rr_type {
        switch kind {
        case .a: LDNS_RR_TYPE_A
        case .aaaa: LDNS_RR_TYPE_AAAA
        case .ns: LDNS_RR_TYPE_NS
        case .cname: LDNS_RR_TYPE_CNAME
        case .soa: LDNS_RR_TYPE_SOA
        case .txt: LDNS_RR_TYPE_TXT
        }
    }

    private static func rcode(_ code: ldns_pkt_rcode) -> String {
        let names = [
            "NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMPL", "REFUSED", "YXDOMAIN", "YXRRSET", "NXRRSET",
            "NOTAUTH", "NOTZONE",
        ]
        let value = Int(code.rawValue)
        return value < names.count ? names[value] : "RCODE\(value)"
    }
}
