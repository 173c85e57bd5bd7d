public import AASACore
import Foundation

/// What taking in a read of the certificate folders did (``CertificateCatalog/take(_:only:domains:allDomains:isConfigured:temporary:location:at:)``),
/// for the load to report and log.
struct CertificateIntake: Sendable {
    /// Every finding: the source's own, each folder's, and why the read was not taken when it was not.
    var diagnostics: [Diagnostic] = []
    /// Folders whose new files failed, so their last good certificate stays.
    var keptLastGood: [String] = []
    /// Configured domains no certificate covers and no temporary one stands in for: their handshakes get the
    /// default certificate.
    var uncovered: [String] = []
    /// Why the catalog kept its certificates and took only the folders' findings; `nil` when it took the read.
    var refusal: Diagnostic?
    /// What changed of what the SNI table serves.
    var change = CertificateChange()
}

/// What a load changed of what the HTTPS listener's SNI table serves, for the listener to update its table with
/// only that (`CertificateTable.updating(to:change:temporary:)`).
struct CertificateChange: Sendable, Equatable {
    /// The certificate folders whose served certificate is new, replaced or gone; none at the first load, whose
    /// table is made whole.
    var folders: Set<String> = []
    /// The domains that got a temporary certificate, and those whose temporary one went.
    var addedTemporary: [String] = []
    var removedTemporary: [String] = []
    /// Whether the entry served without SNI is another.
    var defaultEntry = false

    /// Whether the table stays as it is.
    var isEmpty: Bool { self == CertificateChange() }
}

/// The certificate folders the source read (``ConfigSource/readCertificates(known:only:now:)``).
struct CertificateRead: Sendable {
    /// The folders read: every one, or those asked for that were found.
    var folders: [CertificateDirectory.Folder]
    /// Findings of no one folder (the development CA's key left in the folder).
    var findings: [Diagnostic] = []
    /// Why nothing could be read (the store unreachable): then ``folders`` says nothing, and every certificate stays
    /// as it is.
    var failure: Diagnostic?
}

extension CertificateCatalog {
    /// Takes in `read` (every folder, or with `only` just those folders): each folder keeps its last good certificate
    /// when its new files fail, each domain is covered by the certificate the SNI table picks for it, and the entry
    /// served without SNI is chosen (``updateCoverage``). With `temporary` (ACME), a configured domain no certificate
    /// covers gets a temporary one.
    ///
    /// `domains` are the domains whose coverage is worked out besides those of the changed certificates' names.
    /// `allDomains` gives every configured domain (default: `domains`), asked for only when every coverage must be
    /// redone; `isConfigured` tells those from other names the certificates list (default: whether `domains` has
    /// it). When nothing at all can be served, the catalog keeps its certificates and takes only the findings (at
    /// start there are none, and the start fails with the intake's refusal). `location` names the certificate folder
    /// in messages.
    mutating func take(
        _ read: CertificateRead, only: Set<String>? = nil, domains: @autoclosure () -> [String],
        allDomains: (() -> [String])? = nil, isConfigured: ((String) -> Bool)? = nil, temporary: Bool = false,
        location: String, at now: Date
    ) -> CertificateIntake {
        if let failure = read.failure {
            return CertificateIntake(diagnostics: [failure], refusal: failure)
        }
        let selection = CertificateSelection(folders: read.folders, read: only, previous: self, now: now)
        var intake = CertificateIntake(
            diagnostics: read.findings + selection.diagnostics, keptLastGood: selection.keptLastGood)
        let noCertificate = Diagnostic(
            .error, rule: .noCertificates, "no usable certificate in '\(location)'", file: location,
            hint:
                "add <domain>/fullchain.pem and privkey.pem, run `aasa-server certs dev`, start with --dev, or obtain certificates with --acme"
        )
        var next = self
        next.served = selection.served
        next.findings = selection.findings
        if !selection.served.isEmpty || temporary {
            let domains = domains()
            // Made only if asked for: a start, which redoes every coverage, never asks.
            var configured: Set<String>?
            func isListed(_ name: String) -> Bool {
                if configured == nil { configured = Set(domains) }
                return configured!.contains(name)
            }
            (intake.uncovered, intake.change) = Self.updateCoverage(
                &next, previous: self, changed: selection.changed, domains: domains,
                allDomains: allDomains ?? { domains }, isConfigured: isConfigured ?? isListed, temporary: temporary)
        }
        guard !selection.served.isEmpty || temporary, next.defaultEntry != nil else {
            findings = selection.findings
            intake.refusal = noCertificate
            intake.diagnostics.append(noCertificate)
            intake.uncovered = []
            intake.change = CertificateChange()
            return intake
        }
        self = next
        return intake
    }

    /// Brings the coverage of `certificates` (whose ``served`` is already the new one; `previous` is the one before)
    /// up to date with the folders in `changed` (new, replaced or gone), works out which certificate covers each of
    /// `domains` and of the names the changed certificates list (every domain's when a wildcard changed, or at the
    /// first load), gives the uncovered ones a temporary certificate with `temporary`, and chooses the entry served
    /// without SNI. Returns the configured domains no certificate covers and no temporary one stands in for, and
    /// what changed of what the SNI table serves.
    private static func updateCoverage(
        _ certificates: inout CertificateCatalog, previous: CertificateCatalog, changed: Set<String>, domains: [String],
        allDomains: () -> [String], isConfigured: (String) -> Bool, temporary usesTemporary: Bool
    ) -> (uncovered: [String], change: CertificateChange) {
        // At the first load every coverage is worked out, and the SNI table is made whole.
        let first = previous.defaultEntry == nil
        let names =
            first ? [] : changed.flatMap { (previous.served[$0]?.names ?? []) + (certificates.served[$0]?.names ?? []) }
        let redoAll = first || names.contains { $0.hasPrefix("*.") }
        var change = CertificateChange(folders: first ? [] : changed)
        if first {
            // Entry by entry: the array of every served certificate would be one more at the start's peak.
            certificates.coverage = CertificateCoverage(certificates.served) { $0.names }
        } else {
            for folder in changed {
                certificates.coverage.update(
                    folder, old: previous.served[folder]?.names ?? [], new: certificates.served[folder]?.names)
            }
        }
        var defaultEntry = previous.defaultEntry
        var redoDefault = false
        if let current = defaultEntry, !changed.isEmpty {
            let gone = current.folder.map { changed.contains($0) && certificates.served[$0] == nil } ?? false
            if gone {
                defaultEntry =
                    certificates.served.keys.min().map(CertificateEntryID.folder)
                    ?? certificates.temporary.min().map { .temporary(domain: $0) }
            }
            // A temporary certificate is the default only until a real one is served, and a certificate for a
            // domain that sorts first becomes the default when it arrives (ACME issues them in no set order).
            let firstName = current.folder.flatMap { certificates.served[$0]?.names }?.filter(isConfigured).min()
            redoDefault =
                gone || redoAll || changed.contains(CertificateDirectory.defaultFolder)
                || (current.folder == nil && !certificates.served.isEmpty)
                || certificates.served[CertificateDirectory.defaultFolder] == nil
                    && changed.contains { folder in
                        (certificates.served[folder]?.names ?? []).contains { name in
                            isConfigured(name) && firstName.map { name < $0 } ?? true
                        }
                    }
        } else if defaultEntry == nil, !certificates.served.isEmpty {
            redoDefault = true
        }
        let recomputed =
            redoAll ? allDomains() : Array(Set(domains + names.map(CertificateName.canonical).filter(isConfigured)))
        // Which certificate covers each domain, looked up on every core when there are many (every domain at a
        // start).
        // The two maps the lookup reads, not the catalog: a closure's captured struct is copied out at each call.
        let (coverage, served) = (certificates.coverage, certificates.served)
        let covering = { @Sendable (domain: String) in
            CertificateCatalog.folder(covering: domain, coverage: coverage, served: served)
        }
        let folders = recomputed.count < 1024 ? recomputed.map(covering) : recomputed.concurrentMap(covering)
        // The default looks at every domain's folder: the ones just worked out when every domain was.
        if redoDefault,
            let preferred = redoAll
                ? Self.defaultFolder(certificates, covering: zip(recomputed, folders))
                : Self.defaultFolder(certificates, domains: allDomains())
        {
            defaultEntry = .folder(preferred)
        }
        if redoAll { certificates.resetCovering() }
        var uncovered: [String] = []
        for (domain, folder) in zip(recomputed, folders) {
            certificates.setCovering(domain, by: folder)
            if folder == nil { uncovered.append(domain) }
        }
        // With ACME, a domain no certificate covers gets a temporary one until its own is issued.
        var temporary = certificates.temporary
        for domain in recomputed where certificates.coveringFolder(of: domain) != nil && temporary.remove(domain) != nil
        {
            change.removedTemporary.append(domain)
        }
        if usesTemporary {
            for domain in uncovered where !temporary.contains(domain) {
                temporary.insert(domain)
                change.addedTemporary.append(domain)
            }
        }
        certificates.temporary = temporary
        if case .temporary(let domain)? = defaultEntry, !temporary.contains(domain) {
            defaultEntry =
                Self.defaultFolder(certificates, domains: allDomains()).map(CertificateEntryID.folder)
                ?? change.addedTemporary.first.map { .temporary(domain: $0) }
                ?? temporary.min().map { .temporary(domain: $0) }
        } else if defaultEntry == nil {
            defaultEntry = change.addedTemporary.first.map { .temporary(domain: $0) }
        }
        certificates.defaultEntry = defaultEntry
        change.defaultEntry = defaultEntry != previous.defaultEntry
        return (defaultEntry == nil || usesTemporary ? [] : uncovered, change)
    }

    /// The folder served to clients without (or with an unknown) SNI: certs/default/, else the certificate of the
    /// first domain (by name) one covers, else the first certificate; `nil` when no certificate is served.
    private static func defaultFolder(_ certificates: CertificateCatalog, domains: [String]) -> String? {
        defaultFolder(certificates, covering: domains.lazy.map { ($0, certificates.folder(covering: $0)) })
    }

    /// ``defaultFolder(_:domains:)`` from each domain's folder (``CertificateCatalog/folder(covering:)``), already
    /// known.
    private static func defaultFolder(
        _ certificates: CertificateCatalog, covering: some Sequence<(String, String?)>
    ) -> String? {
        if certificates.served.contains(CertificateDirectory.defaultFolder) {
            return CertificateDirectory.defaultFolder
        }
        let first = covering.lazy.compactMap { domain, folder in folder.map { (domain, $0) } }.min { $0.0 < $1.0 }
        return first?.1 ?? certificates.served.keys.min()
    }
}

/// The rule of certificates that leave nothing to serve.
extension Rule {
    /// Reported by ``CertificateCatalog/take(_:only:domains:allDomains:isConfigured:temporary:location:at:)``
    /// when the certificates read hold no usable one.
    public static let noCertificates = Rule(
        "no-certificates", .error,
        "The certificate folder holds no usable certificate, so HTTPS cannot start (`serve`).")
}
