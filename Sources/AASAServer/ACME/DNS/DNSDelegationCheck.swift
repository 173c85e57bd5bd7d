public import AASACore
import AASADNS
import Logging

/// What `check` says of each dns-01 domain's delegation (rule `acme-dns-delegation`): where its challenge record is
/// written (a note), the CNAME the tenant must add (an error), or why the lookups failed (a warning).
public struct DNSDelegationCheck {
    public let settings: DNSChallengeSettings

    public init(settings: DNSChallengeSettings) { self.settings = settings }

    /// One finding per name the server orders with dns-01 for `domains`: each domain dns-01 answers, and each wildcard
    /// base once for the domains it covers.
    public func check(domains: [String]) -> [Diagnostic] {
        let challenges = DNSChallenges(settings: settings, logger: Logger(label: "aasa-server.check"))
        var names: [String] = []
        for domain in domains.sorted() {
            let name = settings.wildcard(covering: domain) ?? domain
            if settings.answers(name), !names.contains(name) { names.append(name) }
        }
        return names.map { name in
            let delegation = challenges.delegation(of: name)
            let subject = settings.isWildcardBase(name) ? "\(name) and *.\(name)" : name
            switch delegation.state {
            case .inPlace where delegation.updatable == false, .direct where delegation.updatable == false:
                return Diagnostic(
                    .error, rule: .acmeDNSDelegation, "\(subject): dns-01: \(delegation.message)",
                    hint: delegation.fix)
            case .inPlace, .direct:
                return Diagnostic(
                    .note, rule: .acmeDNSDelegation, "\(subject): dns-01: \(delegation.message)",
                    hint: "nothing to do: the certificate is ordered through this record")
            case .missing:
                return Diagnostic(
                    .error, rule: .acmeDNSDelegation, "\(subject): dns-01: \(delegation.message)",
                    hint: delegation.fix + "; the certificate is ordered once it is there")
            case .unknown:
                return Diagnostic(
                    .warning, rule: .acmeDNSDelegation,
                    "\(subject): dns-01: the delegation could not be looked up: \(delegation.message)",
                    hint: "check the resolver (--acme-dns-resolver) and run check again")
            }
        }
    }
}

extension Rule {
    /// Reported by ``DNSDelegationCheck`` (`check` with the dns-01 options).
    public static let acmeDNSDelegation = Rule(
        "acme-dns-delegation", .error,
        "A dns-01 domain's `_acme-challenge` record cannot be written: the CNAME into `--acme-dns-zone` is missing or points elsewhere (error, naming the record to add), or the lookups failed (warning); a note says where it is written when it can be."
    )
}
