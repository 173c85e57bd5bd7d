import AASACore
import AASAOpenSSL
import Foundation

/// The last good certificate of every certificate folder, which one covers each domain, and what the most recent
/// load found: the certificates' part of the ``Catalog``. A value: the HTTPS listener makes its SNI table of it
/// (`CertificateTable(serving:temporary:)`).
///
/// Persistent dictionaries: a load starts from a copy of the previous certificates and changes the folders it
/// read, which copies a few buckets, not every folder's entry.
struct CertificateCatalog: Sendable {
    /// What each certificate folder serves: its newest good certificate.
    var served = PersistentDictionary<String, ServedCertificate>()
    /// The errors and warnings of each certificate folder that has any, from its most recent load.
    var findings = PersistentDictionary<String, [Diagnostic]>()

    /// The state of the certificate folder `folder` after the most recent load, made from what it serves and
    /// what was found in it (a folder that serves nothing has an error); `nil` for no such folder. Made when
    /// asked rather than kept beside them: about 17 MB at 100,000 folders.
    func state(_ folder: String) -> ServerStatus.CertificateState? {
        let serving = served[folder]
        let found = findings[folder] ?? []
        guard serving != nil || !found.isEmpty else { return nil }
        return ServerStatus.CertificateState(
            folder: folder, names: serving?.names ?? [], serving: serving != nil,
            fingerprint: serving?.fingerprint.description, notAfter: serving?.notAfter,
            lastGoodLoad: serving?.loadedAt,
            errors: found.errors + (serving?.handshakeFailure.map { [$0] } ?? []), warnings: found.warnings)
    }

    /// The state of every certificate folder, in no particular order.
    var states: [ServerStatus.CertificateState] {
        Set(served.keys).union(findings.keys).compactMap(state)
    }
    /// The domains no certificate covers that get a temporary self-signed one while ACME obtains theirs
    /// (``TemporaryCertificates``).
    var temporary: Set<String> = []
    /// Which folder covers a name, by the names of the certificates ``served`` (``folder(covering:)``).
    var coverage = CertificateCoverage()
    /// What handshakes without (or with an unknown) SNI get; `nil`: nothing to serve, no HTTPS yet.
    var defaultEntry: CertificateEntryID?
    /// The folder of the certificate covering each configured domain the folder named after it does not cover
    /// (`nil`: no folder covers it), as the last load found it. A domain its own folder covers, as nearly every one
    /// is, has no entry: ``coveringFolder(of:)`` tells it by ``served`` (a map of every domain would be about 10 MB
    /// at 100,000 domains).
    private(set) var coveredOtherwise = PersistentDictionary<String, String?>()
    /// The domains each certificate folder covers besides the one it is named after: the covering folders the
    /// other way round (``domains(coveredBy:)``), so a reload that changes a certificate finds the domains it
    /// covers without a walk over every domain. Most folders cover just their own domain, and need no entry.
    private(set) var otherCoveredDomains = PersistentDictionary<String, Set<String>>()

    /// The folder whose certificate the SNI table serves for `name` (``CertificateCoverage``); `nil` when none covers it.
    func folder(covering name: String) -> String? {
        Self.folder(covering: name, coverage: coverage, served: served)
    }

    /// ``folder(covering:)`` of a catalog whose coverage is `coverage` and whose certificates are `served`.
    static func folder(
        covering name: String, coverage: CertificateCoverage,
        served: PersistentDictionary<String, ServedCertificate>
    ) -> String? {
        coverage.folder(covering: name) { folder in
            served.withValue(for: folder) { CertificateCoverage.listsOwnName(folder, names: $0.names) } ?? false
        }
    }

    /// The folder of the certificate covering the configured `domain` (the entry its handshakes get), as the last
    /// load found it; `nil` when none does.
    func coveringFolder(of domain: String) -> String? {
        if let otherwise = coveredOtherwise[domain] { return otherwise }
        return served[domain] != nil ? domain : nil
    }

    /// Records that `folder` covers `domain` (`nil`: no folder does), in both directions.
    mutating func setCovering(_ domain: String, by folder: String?) {
        let entry = coveredOtherwise[domain]
        // Unchanged: no bucket copied from the catalog before.
        guard folder == domain ? entry != nil : entry != .some(folder) else { return }
        if let old = entry ?? nil {
            var domains = otherCoveredDomains[old] ?? []
            domains.remove(domain)
            otherCoveredDomains[old] = domains.isEmpty ? nil : domains
        }
        if let folder, folder != domain { otherCoveredDomains[folder, default: []].insert(domain) }
        // `.some(folder)`: an entry even for no folder (`nil`), which the subscript would take for a removal.
        coveredOtherwise[domain] = folder == domain ? nil : .some(folder)
    }

    /// Forgets which folder covers every domain, before each is worked out again.
    mutating func resetCovering() {
        coveredOtherwise = PersistentDictionary()
        otherCoveredDomains = PersistentDictionary()
    }

    /// The domains the certificate of `folder` covers.
    func domains(coveredBy folder: String) -> Set<String> {
        var domains = otherCoveredDomains[folder] ?? []
        if coveringFolder(of: folder) == folder { domains.insert(folder) }
        return domains
    }

    /// What `domain`'s handshakes get, by the certificates served: `files` (ACME reports its own domains
    /// over this, ``ACMEManager/statuses``); `nil` without HTTPS.
    func domainStatus(_ domain: String, at now: Date) -> DomainCertificateStatus? {
        guard defaultEntry != nil else { return nil }
        let covering = coveringFolder(of: domain).flatMap { served[$0] }
        let problem: String? =
            switch covering {
            case nil: "no certificate in the certificate folder covers \(domain)"
            case let covering? where covering.notAfter <= now:
                "the certificate of \(domain) (folder '\(covering.folderName)') has expired"
            case let covering?: covering.handshakeFailure?.message
            }
        return DomainCertificateStatus(
            source: .files, state: problem == nil ? .valid : .failed, expiry: covering?.notAfter,
            lastError: problem)
    }
}

/// Whose an entry of the SNI table is: a certificate folder's, or the temporary certificate of a domain waiting
/// for its first ACME certificate. The table keys its entries by string (``CertificateTable/Entry/id``);
/// ``tableID`` is the one place that string is made.
enum CertificateEntryID: Hashable, Sendable {
    case folder(String)
    case temporary(domain: String)

    /// The marker before a temporary certificate's domain: no folder name has a `/`.
    private static let temporaryPrefix = "/temporary/"

    /// The entry's id in the table.
    var tableID: String {
        switch self {
        case .folder(let name): name
        case .temporary(let domain): Self.temporaryPrefix + domain
        }
    }

    /// The certificate folder; `nil` for a temporary certificate.
    var folder: String? {
        if case .folder(let name) = self { name } else { nil }
    }
}
