public import AASACore
import AASADNS
import Foundation
public import Logging
import Synchronization

/// Answers dns-01 challenges (RFC 8555 §8.4): finds where `_acme-challenge.<domain>` leads (CNAME delegation),
/// writes the TXT record there (an RFC 2136 update signed with TSIG, or the operator's hook), waits until it is seen
/// (through the resolver, and at every authoritative name server of the zone unless told otherwise), and removes it
/// once the CA has looked.
public final class DNSChallenges: DNSChallengeResponder, Sendable {
    public let settings: DNSChallengeSettings
    /// Where lookups go.
    let resolver: DNSClient
    let logger: Logger
    private let hook: DNSHook?
    private let counts = Mutex(DNSChallengeFigures())
    private let stopped = Mutex(false)

    /// The most CNAMEs followed from `_acme-challenge.<domain>`.
    static let maximumCNAMEs = 8

    public init(settings: DNSChallengeSettings, logger: Logger) {
        self.settings = settings
        self.logger = logger
        resolver = DNSClient(server: settings.resolver, timeout: .seconds(3))
        if case .hook(let path, let timeout) = settings.publisher {
            hook = DNSHook(path: path, timeout: timeout, logger: logger)
        } else {
            hook = nil
        }
    }

    /// What the challenges did so far, for `/metrics`.
    public var figures: DNSChallengeFigures { counts.withLock { $0 } }

    public func answers(_ domain: String) -> Bool { settings.answers(domain) }

    /// Ends every propagation wait at its next look, with a failure (the server is stopping).
    public func stop() { stopped.withLock { $0 = true } }

    // MARK: Delegation

    /// Where `domain`'s challenge record goes and whether the server can write it, from the resolver's answers.
    public func delegation(of domain: String) -> DNSDelegation {
        let name = DNSDelegation.challengeName(of: domain)
        var delegation = DNSDelegation(
            domain: domain, state: .unknown, name: name, target: name, message: "")
        var chain = [name]
        do {
            for _ in 0..<Self.maximumCNAMEs {
                // A name in the zone the server writes is where the record goes. It is not asked: a resolver asked
                // about a name before its record exists keeps it absent for the zone's negative TTL, and would not
                // see the record when it is written.
                if let zone = settings.zone, DNSName.isWithin(chain.last!, zone: zone) { break }
                let answer = try cnameAnswer(chain.last!)
                guard answer.rcode == "NOERROR" || answer.rcode == "NXDOMAIN" else {
                    delegation.message =
                        "the resolver (\(resolver.serverName)) answered \(answer.rcode) for "
                        + "\(chain.last!) CNAME"
                    return delegation
                }
                guard let next = answer.records(.cname, of: chain.last!).first.map({ DNSName.relative($0.value) })
                else { break }
                guard !chain.contains(next) else {
                    delegation.message = "the CNAMEs from \(name) loop: " + (chain + [next]).joined(separator: " → ")
                    return delegation
                }
                chain.append(next)
            }
        } catch {
            delegation.message = error.description
            return delegation
        }
        delegation.target = chain.last!
        if chain.count > Self.maximumCNAMEs {
            delegation.message = "more than \(Self.maximumCNAMEs) CNAMEs from \(name)"
            return delegation
        }
        let through = chain.count > 1 ? " (CNAME " + chain.dropFirst().joined(separator: " → ") + ")" : ""
        if let zone = settings.zone.map(DNSName.relative) {
            delegation.zone = zone
            if DNSName.isWithin(delegation.target, zone: zone) {
                delegation.state = chain.count > 1 ? .inPlace : .direct
                delegation.message = "\(name) is written in zone \(zone)\(through)"
                checkUpdates(&delegation)
            } else {
                let expected = DNSName.relative(domain) + "." + zone
                delegation.state = .missing
                delegation.record = "\(name). IN CNAME \(expected)."
                delegation.message =
                    (chain.count > 1
                        ? "\(name) points to \(delegation.target), outside zone \(zone)"
                        : "\(name) has no CNAME into zone \(zone)") + ": add \(delegation.record!)"
            }
            return delegation
        }
        if case .hook = settings.publisher {
            delegation.state = chain.count > 1 ? .inPlace : .direct
            delegation.message = "the hook writes \(delegation.target)\(through)"
            return delegation
        }
        do {
            delegation.zone = try zone(of: delegation.target)
            delegation.state = chain.count > 1 ? .inPlace : .direct
            delegation.message = "\(delegation.target) is written in zone \(delegation.zone!)\(through)"
            checkUpdates(&delegation)
        } catch {
            delegation.message = error.description
        }
        return delegation
    }

    /// Asks the DNS server to take an empty update of the delegation's zone, signed with the key: sets
    /// ``DNSDelegation/updatable``, and says why not in the message.
    private func checkUpdates(_ delegation: inout DNSDelegation) {
        guard case .update(let server, let key) = settings.publisher, let zone = delegation.zone else { return }
        do {
            try DNSClient(server: server, timeout: .seconds(3)).update(zone: zone, adding: [], deleting: [], key: key)
            delegation.updatable = true
        } catch {
            delegation.updatable = false
            delegation.message += "; but the server cannot update zone \(zone): \(error.message)"
        }
    }

    /// The answer to `name`'s CNAME question: from the server that takes the updates when it is authoritative for the
    /// name (asked without recursion, so no resolver caches the answer: the record may be written at that name, and
    /// must not be kept absent before it is), else from the resolver.
    private func cnameAnswer(_ name: String) throws(DNSError) -> DNSAnswer {
        if case .update(let server, _) = settings.publisher,
            let answer = try? DNSClient(server: server, timeout: .seconds(3)).query(name, .cname, recursive: false),
            answer.rcode == "NXDOMAIN" || (answer.rcode == "NOERROR" && !answer.authority.contains { $0.kind == .ns })
        {
            return answer
        }
        return try resolver.query(name, .cname)
    }

    /// The zone holding `name`, from the SOA of the name above it (in the answer, or in the authority section of a
    /// name that does not exist). `name` itself is not asked: the record is about to be written there, and a resolver
    /// keeps a name it found absent so for the zone's negative TTL.
    func zone(of name: String) throws(DNSError) -> String {
        let labels = DNSName.relative(name).split(separator: ".", maxSplits: 1)
        let answer = try resolver.query(labels.count == 2 ? String(labels[1]) : name, .soa)
        if let soa = (answer.answer + answer.authority).first(where: { $0.kind == .soa }) {
            return DNSName.relative(soa.name)
        }
        throw DNSError(
            .answered,
            "no zone found for \(name): the resolver (\(resolver.serverName)) answered \(answer.rcode) without an SOA",
            hint: "give the zone with --acme-dns-zone, or check the resolver (--acme-dns-resolver)")
    }

    // MARK: Presenting

    public func present(domain: String, value: String) throws(ACMEFailure) -> DNSChallengeRecord {
        let record = try prepare(domain: domain, value: value)
        try publish(record)
        return record
    }

    public func cleanup(_ record: DNSChallengeRecord) { _ = try? remove(record) }

    /// The record that answers `value` for `domain`: where its delegation leads; fails when the server cannot write
    /// there (the tenant's CNAME missing, the lookups failing).
    func prepare(domain: String, value: String) throws(ACMEFailure) -> DNSChallengeRecord {
        let delegation = delegation(of: domain)
        guard delegation.isUsable else {
            throw ACMEFailure(
                .dns, "\(domain): dns-01 cannot be answered: \(delegation.message)",
                hint: delegation.fix)
        }
        return DNSChallengeRecord(
            domain: domain, name: delegation.target, value: value, zone: hook == nil ? delegation.zone : nil)
    }

    /// Writes `record` and returns once it is seen where ``DNSChallengeSettings/propagation`` says; a record not
    /// seen in time is removed again, and the failure names where it was missing.
    func publish(_ record: DNSChallengeRecord) throws(ACMEFailure) {
        try write(record, adding: true)
        counts.withLock { $0.records += 1 }
        let started = ContinuousClock.now
        do {
            try waitUntilSeen(record, zone: record.zone)
        } catch {
            _ = try? remove(record)
            counts.withLock { $0.propagationFailures += 1 }
            throw error
        }
        let waited = ContinuousClock.now - started
        counts.withLock {
            $0.propagationWaits += 1
            $0.propagationSeconds += waited.timeInterval
        }
        logger.info(
            "ACME: dns-01 record seen",
            metadata: ["domain": "\(record.domain)", "name": "\(record.name)", "seconds": "\(waited.timeInterval)"])
    }

    /// Removes `record`; a failure is logged, counted and thrown.
    func remove(_ record: DNSChallengeRecord) throws(ACMEFailure) {
        do {
            try write(record, adding: false)
        } catch {
            counts.withLock { $0.cleanupFailures += 1 }
            logger.warning(
                "ACME: could not remove a dns-01 record", metadata: ["name": "\(record.name)", "error": "\(error)"])
            throw error
        }
        counts.withLock { $0.records = max(0, $0.records - 1) }
    }

    /// Adds or removes `record`'s TXT value.
    private func write(_ record: DNSChallengeRecord, adding: Bool) throws(ACMEFailure) {
        if let hook {
            try hook.run(adding ? "present" : "cleanup", name: record.name, value: record.value)
            return
        }
        guard case .update(let server, let key) = settings.publisher, let zone = record.zone else { return }
        let txt = DNSRecord(name: record.name, kind: .txt, ttl: settings.ttl, value: record.value)
        do {
            try DNSClient(server: server, timeout: .seconds(5)).update(
                zone: zone, adding: adding ? [txt] : [], deleting: adding ? [] : [txt], key: key)
        } catch {
            throw ACMEFailure(
                .dns,
                "\(record.domain): could not \(adding ? "write" : "remove") the TXT record \(record.name): "
                    + error.message, hint: error.hint)
        }
    }

    // MARK: Propagation

    /// Returns once `record` is seen everywhere ``DNSChallengeSettings/propagation`` says; fails after
    /// ``DNSChallengeSettings/propagationTimeout`` naming where it is not. The zone's name servers are looked up
    /// once; each look then asks only for the TXT record.
    private func waitUntilSeen(_ record: DNSChallengeRecord, zone: String?) throws(ACMEFailure) {
        let deadline = ContinuousClock.now + settings.propagationTimeout
        let servers = settings.propagation == .all ? nameServers(of: zone, for: record.name) : .success([])
        while true {
            let missing = whereMissing(record, servers: servers, deadline: deadline)
            if missing.isEmpty { return }
            if ContinuousClock.now >= deadline || stopped.withLock({ $0 }) {
                throw ACMEFailure(
                    .dns,
                    "\(record.domain): the TXT record \(record.name) was not seen "
                        + missing.joined(separator: ", ") + " within \(settings.propagationTimeout)",
                    hint: "check that the update reached every name server of the zone; raise "
                        + "--acme-dns-propagation-timeout, or use --acme-dns-propagation resolver when the name servers "
                        + "cannot be reached from here")
            }
            Thread.sleep(forTimeInterval: settings.propagationInterval.timeInterval)
        }
    }

    /// A name server of a zone, and one of its addresses.
    private struct NameServer {
        var host: String
        var address: String
    }

    /// Why a zone's name servers could not be asked, in words.
    private struct NameServerProblem: Error {
        var text: String
    }

    /// The most name servers asked, and addresses of each: a zone with more (a tenant's own, in direct mode) costs
    /// no more than this per look.
    static let maximumNameServers = 8
    static let maximumAddresses = 2

    /// The addresses of the authoritative name servers of `zone` (found from `name` when `nil`), at most
    /// ``maximumNameServers`` with ``maximumAddresses`` each.
    private func nameServers(of zone: String?, for name: String) -> Result<[NameServer], NameServerProblem> {
        guard let zone = zone ?? (try? self.zone(of: name)) else {
            return .failure(NameServerProblem(text: "at the zone's name servers (the zone of \(name) was not found)"))
        }
        let hosts = ((try? resolver.query(zone, .ns))?.records(.ns, of: zone) ?? []).map(\.value)
        guard !hosts.isEmpty else {
            return .failure(NameServerProblem(text: "at the name servers of \(zone) (none found)"))
        }
        var servers: [NameServer] = []
        for host in hosts.prefix(Self.maximumNameServers) {
            let addresses = [DNSRecord.Kind.a, .aaaa].flatMap { kind in
                ((try? resolver.query(host, kind))?.records(kind, of: host) ?? []).map(\.value)
            }
            guard !addresses.isEmpty else {
                return .failure(NameServerProblem(text: "at \(DNSName.relative(host)) (no address)"))
            }
            servers += addresses.prefix(Self.maximumAddresses).map {
                NameServer(host: DNSName.relative(host), address: $0)
            }
        }
        return .success(servers)
    }

    /// Where `record` is not seen yet, in words; empty when it is seen everywhere. Past `deadline`, the servers not
    /// asked yet count as not seeing it.
    private func whereMissing(
        _ record: DNSChallengeRecord, servers: Result<[NameServer], NameServerProblem>,
        deadline: ContinuousClock.Instant
    ) -> [String] {
        var missing: [String] = []
        // Asked by the name the CA asks: the resolver follows the CNAMEs as the CA's does.
        let asked = DNSDelegation.challengeName(of: record.domain)
        let seen = (try? resolver.query(asked, .txt))?.records(.txt, of: record.name).contains {
            $0.value == record.value
        }
        if seen != true { missing.append("through the resolver (\(resolver.serverName))") }
        let found: [NameServer]
        switch servers {
        case .success(let servers): found = servers
        case .failure(let problem): return missing + [problem.text]
        }
        for server in found {
            let client = DNSClient(server: DNSServerAddress(host: server.address), timeout: .seconds(2))
            let answer = ContinuousClock.now < deadline ? try? client.query(record.name, .txt, recursive: false) : nil
            if answer?.records(.txt, of: record.name).contains(where: { $0.value == record.value }) != true {
                missing.append("at \(server.host) (\(server.address))")
            }
        }
        return missing
    }
}

/// What the dns-01 challenges did: `/metrics`.
public struct DNSChallengeFigures: Sendable, Equatable {
    /// TXT records written and not yet removed.
    public var records = 0
    /// Records seen everywhere they had to be, and the seconds those waits took in all.
    public var propagationWaits = 0
    public var propagationSeconds = 0.0
    /// Records not seen within the time limit.
    public var propagationFailures = 0
    /// Records that could not be removed.
    public var cleanupFailures = 0
}
