public import AASACore
import AASAMicroHTTPD
import Foundation

/// What taking in a read of the certificate folders did (``CertificateCatalog/take(_:only:domains:allDomains:isConfigured:temporaryCertificates:location:at:)``),
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
    /// when its new files fail, and the SNI table is updated with what changed (``updateTable``). With
    /// `temporaryCertificates` (ACME), a configured domain no certificate covers gets a temporary one.
    ///
    /// `domains` are the domains whose coverage is worked out besides those of the changed certificates' names.
    /// `allDomains` gives every configured domain (default: `domains`), asked for only when every coverage must be
    /// redone; `isConfigured` tells those from other names the certificates list (default: whether `domains` has
    /// it). When no certificate at all is usable, the catalog keeps its table and takes only the findings (at start
    /// there is no table, and the start fails with the intake's refusal). `location` names the certificate folder in
    /// messages.
    mutating func take(
        _ read: CertificateRead, only: Set<String>? = nil, domains: @autoclosure () -> [String],
        allDomains: (() -> [String])? = nil, isConfigured: ((String) -> Bool)? = nil,
        temporaryCertificates: TemporaryCertificates? = nil, location: String, at now: Date
    ) -> CertificateIntake {
        if let failure = read.failure {
            return CertificateIntake(diagnostics: [failure], refusal: failure)
        }
        let selection = CertificateSelection(folders: read.folders, read: only, previous: self, now: now)
        var intake = CertificateIntake(
            diagnostics: read.findings + selection.diagnostics, keptLastGood: selection.keptLastGood)
        func refuse(_ refusal: Diagnostic) -> CertificateIntake {
            findings = selection.findings
            intake.refusal = refusal
            intake.diagnostics.append(refusal)
            return intake
        }
        let noCertificate = Diagnostic(
            .error, rule: .noCertificates, "no usable certificate in '\(location)'", file: location,
            hint:
                "add <domain>/fullchain.pem and privkey.pem, run `aasa-server certs dev`, start with --dev, or obtain certificates with --acme"
        )
        guard !selection.served.isEmpty || temporaryCertificates != nil else { return refuse(noCertificate) }
        var next = self
        next.served = selection.served
        next.findings = selection.findings
        // Asked for only now, when the folders are read: a start lists the config folder meanwhile.
        let domains = domains()
        do {
            intake.uncovered = try Self.updateTable(
                &next, previous: self, changed: selection.changed, domains: domains,
                allDomains: allDomains ?? { domains }, isConfigured: isConfigured ?? Set(domains).contains,
                temporaryCertificates: temporaryCertificates)
        } catch {
            return refuse(
                Diagnostic(.error, rule: .certificateInvalid, (error as? HTTPListenerError)?.reason ?? "\(error)"))
        }
        guard next.table != nil else { return refuse(noCertificate) }
        self = next
        return intake
    }

    /// Brings the SNI table of `certificates` (whose ``Certificates/served`` is already the new one; `previous` is
    /// the one before) up to date with the folders in `changed` (new, replaced or gone), works out which
    /// certificate covers each of `domains` and of the names the changed certificates list (every domain's when a
    /// wildcard changed, or at the first load), and gives the uncovered ones a temporary certificate with ACME.
    /// Leaves the table `nil` when there is no certificate at all to serve. Returns the configured domains no
    /// certificate covers and no temporary one stands in for.
    private static func updateTable(
        _ certificates: inout CertificateCatalog, previous: CertificateCatalog, changed: Set<String>, domains: [String],
        allDomains: () -> [String], isConfigured: (String) -> Bool, temporaryCertificates: TemporaryCertificates?
    ) throws -> [String] {
        let names = changed.flatMap { (previous.served[$0]?.names ?? []) + (certificates.served[$0]?.names ?? []) }
        let redoAll = previous.table == nil || names.contains { $0.hasPrefix("*.") }
        var table = previous.table
        var redoDefault = false
        if let current = table, !changed.isEmpty {
            let entries = changed.compactMap { certificates.served[$0]?.tableEntry }
            let gone = changed.filter { certificates.served[$0] == nil }
            let keep = !gone.contains(current.defaultID)
            table = try current.updating(
                removing: gone, adding: entries,
                defaultID: keep
                    ? nil
                    : certificates.served.keys.min()
                        ?? certificates.temporary.first.map { CertificateEntryID.temporary(domain: $0).tableID }
            )
            // A temporary certificate is the default only until a real one is served, and a certificate for a
            // domain that sorts first becomes the default when it arrives (ACME issues them in no set order).
            let defaultNames = CertificateEntryID(tableID: current.defaultID).folder.flatMap {
                certificates.served[$0]?.names
            }
            let first = defaultNames?.filter(isConfigured).min()
            redoDefault =
                !keep || redoAll || changed.contains(CertificateDirectory.defaultFolder)
                || (CertificateEntryID(tableID: current.defaultID).folder == nil && !certificates.served.isEmpty)
                || certificates.served[CertificateDirectory.defaultFolder] == nil
                    && changed.contains { folder in
                        (certificates.served[folder]?.names ?? []).contains { name in
                            isConfigured(name) && first.map { name < $0 } ?? true
                        }
                    }
        } else if table == nil, !certificates.served.isEmpty {
            table = try CertificateTable(entries: certificates.served.values.map(\.tableEntry))
            redoDefault = true
        }
        if redoDefault, let current = table,
            let preferred = Self.defaultID(certificates, domains: allDomains(), table: current),
            preferred != current.defaultID
        {
            table = try current.updating(removing: [], adding: [], defaultID: preferred)
        }
        let recomputed =
            redoAll ? allDomains() : Array(Set(domains + names.map(CertificateTable.canonical).filter(isConfigured)))
        if redoAll {
            certificates.coveringFolder = PersistentDictionary()
            certificates.otherCoveredDomains = PersistentDictionary()
            certificates.coveringFolder.reserveCapacity(recomputed.count)
        }
        var uncovered: [String] = []
        // Which certificate covers each domain, looked up on every core when there are many (every domain at a
        // start: the SNI table's side of a start is otherwise one thread's while the other cores wait for it).
        let finished = table
        let covering = { @Sendable (domain: String) in
            finished?.entryID(covering: domain).flatMap { CertificateEntryID(tableID: $0).folder }
        }
        let folders = recomputed.count < 1024 ? recomputed.map(covering) : recomputed.concurrentMap(covering)
        for (domain, folder) in zip(recomputed, folders) {
            certificates.setCovering(domain, by: folder)
            if folder == nil { uncovered.append(domain) }
        }
        // With ACME, a domain no certificate covers gets a temporary one until its own is issued.
        var temporary = certificates.temporary
        var adding: [CertificateTable.Entry] = []
        var removing: [String] = []
        for domain in recomputed where certificates.coveringFolder[domain] != nil && temporary.remove(domain) != nil {
            removing.append(CertificateEntryID.temporary(domain: domain).tableID)
        }
        if let temporaryCertificates {
            for domain in uncovered where !temporary.contains(domain) {
                guard let credential = temporaryCertificates.credential(for: domain) else { continue }
                temporary.insert(domain)
                adding.append(
                    CertificateTable.Entry(
                        id: CertificateEntryID.temporary(domain: domain).tableID, names: [domain],
                        credential: credential,
                        isFallback: true))
            }
        }
        if let current = table, !adding.isEmpty || !removing.isEmpty {
            let defaultID =
                removing.contains(current.defaultID)
                ? Self.defaultID(certificates, domains: allDomains(), table: current) ?? adding.first?.id : nil
            table = try current.updating(removing: removing, adding: adding, defaultID: defaultID)
        } else if table == nil, !adding.isEmpty {
            table = try CertificateTable(entries: adding)
        }
        temporaryCertificates?.keep(only: temporary)
        certificates.temporary = temporary
        certificates.table = table
        return table == nil || temporaryCertificates != nil ? [] : uncovered
    }

    /// The entry for clients without (or with an unknown) SNI: certs/default/, else the certificate of the
    /// first domain (by name) one covers, else the first certificate.
    private static func defaultID(
        _ certificates: CertificateCatalog, domains: [String], table: CertificateTable
    ) -> String? {
        if certificates.served[CertificateDirectory.defaultFolder] != nil { return CertificateDirectory.defaultFolder }
        return domains.sorted().lazy.compactMap {
            table.entryID(covering: $0).flatMap { CertificateEntryID(tableID: $0).folder }
        }
        .first ?? certificates.served.keys.min()
    }
}

/// The rule of certificates that leave nothing to serve.
extension Rule {
    /// Reported by ``CertificateCatalog/take(_:only:domains:allDomains:isConfigured:temporaryCertificates:location:at:)``
    /// when the certificates read hold no usable one.
    public static let noCertificates = Rule(
        "no-certificates", .error,
        "The certificate folder holds no usable certificate, so HTTPS cannot start (`serve`).")
}
