import AASADNS
import AASATestSupport
import Foundation
import Testing

/// Lookups and signed dynamic updates against a real BIND: an authoritative server with a TSIG key, and a forwarding
/// resolver in front of it.
@Suite(.serialized) struct DNSClientTests {
    static func bind() throws -> BindDNS {
        try #require(BindDNS.isInstalled, "install bind9 and bind9-dnsutils: scripts/setup.sh --test")
        return try BindDNS(
            zones: [
                "provider.test": ["ns IN A 127.0.0.1"],
                "tenant.test": ["_acme-challenge.shop IN CNAME shop.tenant.test.provider.test."],
                "locked.test": [],
            ], updatable: ["provider.test", "tenant.test"])
    }

    @Test func anUpdateSignedWithTheKeyAddsAndRemovesExactlyOneValue() throws {
        let bind = try Self.bind()
        let client = DNSClient(server: try DNSServerAddress(parsing: bind.server))
        let key = try TSIGKey(contentsOf: bind.keyFile)
        let first = DNSRecord(name: "_acme-challenge.provider.test", kind: .txt, ttl: 5, value: "first-value")
        let second = DNSRecord(name: "_acme-challenge.provider.test", kind: .txt, ttl: 5, value: "second \"quoted\"")
        try client.update(zone: "provider.test", adding: [first, second], deleting: [], key: key)
        #expect(
            Set(bind.dig("_acme-challenge.provider.test", "TXT", resolver: false)) == [
                "first-value", #"second \"quoted\""#,
            ])
        // The client reads them back as written, quotes and all.
        let answer = try client.query("_acme-challenge.provider.test", .txt)
        #expect(
            Set(answer.records(.txt, of: "_acme-challenge.provider.test").map(\.value)) == [
                "first-value", "second \"quoted\"",
            ])
        try client.update(zone: "provider.test", adding: [], deleting: [first], key: key)
        #expect(bind.dig("_acme-challenge.provider.test", "TXT", resolver: false) == [#"second \"quoted\""#])
    }

    @Test func theResolverFollowsACNAMEIntoAnotherZoneAndTheAuthorityNamesTheZone() throws {
        let bind = try Self.bind()
        try bind.update("update add shop.tenant.test.provider.test 2 TXT \"delegated\"")
        let resolver = DNSClient(server: try DNSServerAddress(parsing: bind.resolver))
        let cname = try resolver.query("_acme-challenge.shop.tenant.test", .cname)
        #expect(
            cname.records(.cname, of: "_acme-challenge.shop.tenant.test").map(\.value) == [
                "shop.tenant.test.provider.test."
            ])
        let txt = try resolver.query("_acme-challenge.shop.tenant.test", .txt)
        #expect(txt.records(.txt, of: "shop.tenant.test.provider.test").map(\.value) == ["delegated"])
        // A name that does not exist: NXDOMAIN, with its zone's SOA in the authority section.
        let missing = try resolver.query("nothing.here.tenant.test", .soa)
        #expect(missing.rcode == "NXDOMAIN")
        #expect(missing.authority.filter { $0.kind == .soa }.map(\.name) == ["tenant.test."])
        #expect(missing.authority.first?.value == "ns.provider.test.")
    }

    @Test func aKeyTheServerDoesNotKnowIsANamedErrorWithoutItsSecret() throws {
        let bind = try Self.bind()
        let client = DNSClient(server: try DNSServerAddress(parsing: bind.server))
        let wrong = try TSIGKey(contentsOf: bind.unknownKeyFile)
        let record = DNSRecord(name: "_acme-challenge.provider.test", kind: .txt, ttl: 5, value: "x")
        let error = try #require(throws: DNSError.self) {
            try client.update(zone: "provider.test", adding: [record], deleting: [], key: wrong)
        }
        #expect(error.kind == .key, "\(error)")
        #expect(
            error.description.contains(
                "did not accept the update of _acme-challenge.provider.test signed with TSIG key 'acme'"), "\(error)")
        let secret = try #require(
            try String(contentsOfFile: bind.unknownKeyFile, encoding: .utf8).split(separator: "\"").dropFirst(3).first)
        #expect(!error.description.contains(secret))
        #expect(!"\(wrong)".contains(secret) && !String(reflecting: wrong).contains(secret))
        #expect(bind.dig("_acme-challenge.provider.test", "TXT", resolver: false).isEmpty)
    }

    @Test func aNameThatIsNotPlainIsNeverWrittenIntoAnUpdate() throws {
        let bind = try Self.bind()
        let client = DNSClient(server: try DNSServerAddress(parsing: bind.server))
        let key = try TSIGKey(contentsOf: bind.keyFile)
        // A name read back from a tampered state file, trying to turn the record into an address record.
        let crafted = DNSRecord(name: "x.provider.test 60 IN A 192.0.2.1 ;", kind: .txt, ttl: 5, value: "v")
        let error = try #require(throws: DNSError.self) {
            try client.update(zone: "provider.test", adding: [crafted], deleting: [], key: key)
        }
        #expect(error.message.contains("is not a name a record is written at"), "\(error)")
        #expect(bind.dig("x.provider.test", "A", resolver: false).isEmpty)
    }

    @Test func aZoneTheKeyMayNotChangeIsRefusedWithTheFix() throws {
        let bind = try Self.bind()
        let client = DNSClient(server: try DNSServerAddress(parsing: bind.server))
        let key = try TSIGKey(contentsOf: bind.keyFile)
        let record = DNSRecord(name: "_acme-challenge.locked.test", kind: .txt, ttl: 5, value: "x")
        let error = try #require(throws: DNSError.self) {
            try client.update(zone: "locked.test", adding: [record], deleting: [], key: key)
        }
        #expect(error.rcode == "REFUSED", "\(error)")
        #expect(error.description.contains("update-policy"), "\(error)")
    }

    @Test func aServerThatDoesNotAnswerFailsWithinTheTimeout() throws {
        // A bound UDP port that nobody reads: the question is never answered.
        let port = freePort()
        let socket = boundUDPSocket(port: port)
        defer { close(socket) }
        let client = DNSClient(server: DNSServerAddress(host: "127.0.0.1", port: port), timeout: .milliseconds(300))
        let started = Date()
        let error = try #require(throws: DNSError.self) { try client.query("shop.example", .txt) }
        #expect(error.kind == .network, "\(error)")
        #expect(error.description.contains("127.0.0.1:\(port)"), "\(error)")
        #expect(Date().timeIntervalSince(started) < 5)
    }
}

/// A UDP socket bound to `port` on loopback.
private func boundUDPSocket(port: UInt16) -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    _ = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    return fd
}
