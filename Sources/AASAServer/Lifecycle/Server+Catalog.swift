import AASACore
import AASAMicroHTTPD
import AASAOpenSSL
import Foundation
import Logging

extension Server {
    /// A certificate in service and when it was loaded: what the server needs of it once the SNI table holds it.
    ///
    /// Not the whole ``DomainCertificate``: a server with thousands of domains would keep every leaf's DER and
    /// summary for nothing.
    struct ServedCertificate: Sendable {
        var folderName: String
        var names: [String]
        var notBefore: Date
        var notAfter: Date
        /// SHA-256 fingerprint of the leaf, for ``ServerStatus``.
        var fingerprint: SHA256Fingerprint
        /// The leaf's subjectAltName entries, to find the certificate of each domain.
        var subjectAlternativeNames: SubjectAlternativeNames
        /// The checked OCSP response to staple, and when it stops being valid.
        var ocspStaple: (response: [UInt8], nextUpdate: Date)?
        /// The chain, key and staple as GnuTLS serves them: what a new SNI table takes over.
        var credential: GnuTLSCredential
        /// The folder's files by their stamps, and what was found in them: the next load skips parsing them if
        /// they did not change.
        var known: CertificateDirectory.KnownFolder
        var loadedAt: Date

        init(_ certificate: DomainCertificate, credential: GnuTLSCredential, loadedAt: Date) {
            self.credential = credential
            folderName = certificate.folderName
            // The leaf's name that is the folder's own (nearly every folder's only one) is kept as the folder
            // name's string: its own copy would be one more allocation for each certificate served.
            var summary = certificate.summary
            if let own = summary.subjectAlternativeNames.dnsNames.firstIndex(of: certificate.folderName) {
                summary.subjectAlternativeNames.dnsNames[own] = certificate.folderName
            }
            subjectAlternativeNames = summary.subjectAlternativeNames
            names = summary.names
            notBefore = certificate.summary.notBefore
            notAfter = certificate.notAfter
            fingerprint = certificate.summary.fingerprint
            ocspStaple = certificate.ocspStaple
            known = certificate.known
            self.loadedAt = loadedAt
        }

        /// Whether `certificate` was read from the same files and staples the same response.
        func isSame(as certificate: DomainCertificate) -> Bool {
            known.chain == certificate.known.chain && known.key == certificate.known.key
                && ocspStaple?.response == certificate.ocspStaple?.response
        }
    }

    /// The last good certificate of every certificate folder, the SNI table made of them, and what the most
    /// recent load found. Apart from the domains' part of the ``Catalog``, so the two load side by side.
    ///
    /// Persistent dictionaries: a load starts from a copy of the previous certificates and changes the folders it
    /// read, which copies a few buckets, not every folder's entry.
    struct Certificates: Sendable {
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
                errors: found.errors, warnings: found.warnings)
        }

        /// The state of every certificate folder, in no particular order.
        var states: [ServerStatus.CertificateState] {
            Set(served.keys).union(findings.keys).compactMap(state)
        }
        /// The domains no certificate covers that get a temporary self-signed one while ACME obtains theirs
        /// (``TemporaryCertificates``).
        var temporary: Set<String> = []
        /// The SNI table of ``served`` and ``temporary``; a new object whenever they change.
        var table: CertificateTable?
        /// The folder of the certificate covering each configured domain (the entry its handshakes get), as the
        /// last load found it.
        var coveringFolder = PersistentDictionary<String, String>()
        /// The domains each certificate folder covers besides the one it is named after: ``coveringFolder`` the
        /// other way round (``domains(coveredBy:)``), so a reload that changes a certificate finds the domains it
        /// covers without a walk over every domain. Most folders cover just their own domain, and need no entry.
        var otherCoveredDomains = PersistentDictionary<String, Set<String>>()

        /// Records that `folder` covers `domain` (`nil`: no folder does), in both directions.
        mutating func setCovering(_ domain: String, by folder: String?) {
            let old = coveringFolder[domain]
            guard old != folder else { return }
            if let old, old != domain {
                var domains = otherCoveredDomains[old] ?? []
                domains.remove(domain)
                otherCoveredDomains[old] = domains.isEmpty ? nil : domains
            }
            if let folder, folder != domain { otherCoveredDomains[folder, default: []].insert(domain) }
            coveringFolder[domain] = folder
        }

        /// The domains the certificate of `folder` covers.
        func domains(coveredBy folder: String) -> Set<String> {
            var domains = otherCoveredDomains[folder] ?? []
            if coveringFolder[folder] == folder { domains.insert(folder) }
            return domains
        }

        /// The table entry id of a temporary certificate: no folder name has a `/`.
        static func temporaryID(_ domain: String) -> String { "/temporary/" + domain }

        /// The certificate folder a table entry id names; `nil` for a temporary certificate's.
        static func folder(ofEntry id: String) -> String? { id.hasPrefix("/") ? nil : id }

        /// What `domain`'s handshakes get, by the certificates served: `files` (ACME reports its own domains
        /// over this, ``ACMEManager/statuses``); `nil` without HTTPS.
        func domainStatus(_ domain: String, at now: Date) -> DomainCertificateStatus? {
            guard table != nil else { return nil }
            let covering = coveringFolder[domain].flatMap { served[$0] }
            let problem: String? =
                switch covering {
                case nil: "no certificate in the certificate folder covers \(domain)"
                case let covering? where covering.notAfter <= now:
                    "the certificate of \(domain) (folder '\(covering.folderName)') has expired"
                default: nil
                }
            return DomainCertificateStatus(
                source: .files, state: problem == nil ? .valid : .failed, expiry: covering?.notAfter,
                lastError: problem)
        }
    }

    /// The last good version of every domain and certificate folder, and what the most recent load found.
    ///
    /// A load never replaces a good version with a broken one: a domain or certificate folder that fails
    /// keeps what it had, and the failure is recorded for ``ServerStatus``. Persistent dictionaries, so the
    /// routes and status handed to the listeners share them with the catalog, and the next load changes only
    /// what it read.
    struct Catalog: Sendable {
        /// What each domain serves: its newest clean version.
        var published = PersistentDictionary<String, PublishedDomain>()
        /// When each published domain's served version was loaded (first: reloads that serve the same bytes keep it).
        var domainLoadTimes = PersistentDictionary<String, Date>()
        /// The most recent load result of every domain folder.
        var loaded = PersistentDictionary<String, LoadedDomain>()
        /// Domains whose folder disappeared while they were published, and when that was first seen: they keep being
        /// served until ``ServerConfiguration/removalGrace`` has passed.
        var removedSince: [String: Date] = [:]
        /// What the certificate folder serves.
        var certificates = Certificates()
        /// The status after the most recent load.
        var status: ServerStatus?
        /// The last change of each domain that changed since the start: when, and what it did to URLs.
        var lastChanges = PersistentDictionary<String, DomainChange>()
        /// The shard the server is, for the status.
        var shard: Shard?
        /// The errors and warnings of each domain folder that has any, from its most recent load.
        var domainFindings = PersistentDictionary<String, [Diagnostic]>()
        /// The public routes of ``published`` and the snapshot the listeners serve them from, once built.
        var routes: (site: SiteRoutes, snapshot: RouteSnapshot)?

        /// Takes in a fresh load of domain folders: clean domains replace their published version, broken ones keep
        /// theirs, and folders that disappeared are unpublished once they have been gone for `removalGrace` (until
        /// then they keep being served). With `complete`, `loaded` is every folder, and every domain missing from it
        /// disappeared; otherwise the folders that disappeared are `absent`, and every other domain is as it was.
        /// Returns the domains whose served bytes changed, and the versions to compare (``toCompare(_:at:)``).
        mutating func apply(
            _ loaded: [LoadedDomain], absent: [String] = [], complete: Bool = true, at now: Date,
            removalGrace: Duration = .zero
        ) -> (changed: [String], compare: [ChangeComparer.Job]) {
            if self.loaded.isEmpty, published.isEmpty, removedSince.isEmpty {
                // A start: nothing to compare with, and the maps of every domain are built side by side.
                let (all, fresh) = concurrently({ PersistentDictionary(loaded.lazy.map { ($0.domain, $0) }) }) { _ in
                    let fresh = loaded.compactMap { domain in domain.published.map { (domain.domain, $0) } }
                    published = PersistentDictionary(fresh)
                    domainLoadTimes = PersistentDictionary(fresh.lazy.map { ($0.0, now) })
                    return fresh.map(\.0)
                }
                self.loaded = all
                return (fresh.sorted(), [])
            }
            var changed: [String] = []
            var replaced: [(PublishedDomain, PublishedDomain)] = []
            // A reload that adds many domains at once: room for them up front, not a redistribution at each
            // doubling.
            self.loaded.reserveCapacity(loaded.count)
            published.reserveCapacity(loaded.count)
            domainLoadTimes.reserveCapacity(loaded.count)
            for domain in loaded {
                self.loaded[domain.domain] = domain
                removedSince[domain.domain] = nil
                // A broken version keeps the last good one.
                guard let fresh = domain.published else { continue }
                let old = published[domain.domain]
                if let old, Self.serveSame(old, fresh) { continue }
                published[domain.domain] = fresh
                // `lastGoodLoad` says since when a domain serves what it serves, not when a reload last read it.
                domainLoadTimes[domain.domain] = now
                changed.append(domain.domain)
                if let old { replaced.append((old, fresh)) }
            }
            var gone = Set(absent)
            if complete {
                let present = Set(loaded.map(\.domain))
                gone = Set(self.loaded.keys.filter { !present.contains($0) })
                    .union(removedSince.keys.filter { !present.contains($0) })
            }
            for name in gone {
                self.loaded[name] = nil
                guard published[name] != nil else { continue }
                let since = removedSince[name] ?? now
                if now.timeIntervalSince(since) < removalGrace.timeInterval {
                    removedSince[name] = since
                } else {
                    removedSince[name] = nil
                    published[name] = nil
                    domainLoadTimes[name] = nil
                    lastChanges[name] = nil
                    changed.append(name)
                }
            }
            return (changed.sorted(), Self.toCompare(replaced, at: now))
        }

        /// Whether two versions of a domain serve the same bytes with the same settings.
        private static func serveSame(_ old: PublishedDomain, _ new: PublishedDomain) -> Bool {
            old.associationFile == new.associationFile && old.cacheControl == new.cacheControl
                && old.signedAssociationFile == new.signedAssociationFile && old.signedPaths == new.signedPaths
                && old.assetLinks == new.assetLinks && old.pages == new.pages && old.hsts == new.hsts
        }

        /// The new versions of domains to compare with the versions they replace (``DomainChange``), by the
        /// server's ``ChangeComparer`` once the load is published: only domains whose association file,
        /// assetlinks.json or their serving settings changed.
        private static func toCompare(_ replaced: [(PublishedDomain, PublishedDomain)], at now: Date)
            -> [ChangeComparer.Job]
        {
            replaced.filter { previous, version in
                previous.associationFile != version.associationFile || previous.assetLinks != version.assetLinks
                    || previous.cacheControl != version.cacheControl
                    || (previous.signedAssociationFile == nil) != (version.signedAssociationFile == nil)
            }.map { ChangeComparer.Job(old: $0.0, new: $0.1, time: now) }
        }

        /// Takes in the comparison of the version of `job`: kept as the domain's last change while that version is
        /// the one served (a later version, or the domain's removal, makes it moot), with the status brought up to
        /// date. Returns whether it was kept.
        mutating func record(_ job: ChangeComparer.Job, _ diff: DomainDiff) -> Bool {
            let domain = job.new.domain
            guard published[domain] != nil, domainLoadTimes[domain] == job.time else { return false }
            lastChanges[domain] = DomainChange(time: job.time, diff: diff)
            status = status?.with(lastChanges: lastChanges)
            return true
        }

        /// Brings the status up to date after a load at `now` that found `diagnostics` (`failed`: the config folder
        /// could not be listed), whose domain folders were `domains` (every one when `nil`). The load's outcome counts
        /// every finding still standing, not only those of the folders it read: a reload of one folder reports the
        /// errors of the others as a reload of all would.
        mutating func updateStatus(
            domains: [String]?, started: Date, trigger: ReloadTrigger, at now: Date, diagnostics: [Diagnostic],
            failed: Bool
        ) {
            if domains == nil { domainFindings = PersistentDictionary() }
            for name in domains ?? loaded.keys {
                let standing = loaded[name]?.diagnostics.filter { $0.severity != .note } ?? []
                domainFindings[name] = standing.isEmpty ? nil : standing
            }
            let standing = domainFindings.values.flatMap { $0 } + certificates.findings.values.flatMap { $0 }
            // Findings of no folder (the development CA's key, a refused certificate table) are this load's.
            let described = Set(standing.map(\.description))
            let general = diagnostics.filter { !described.contains($0.description) }
            let errors = failed ? diagnostics.errors : standing.errors + general.errors
            let result: ServerStatus.LoadOutcome.Result = failed ? .failed : errors.isEmpty ? .ok : .errors
            status = ServerStatus(
                started: started,
                lastReload: ServerStatus.LoadOutcome(
                    time: now, trigger: trigger, result: result, errors: errors,
                    warnings: standing.warnings + general.warnings),
                catalog: ServerStatus.Source(
                    loaded: loaded, published: published, domainLoadTimes: domainLoadTimes, removedSince: removedSince,
                    lastChanges: lastChanges, certificates: certificates, domainFindings: domainFindings))
            status?.shard = shard
        }
    }

    /// Reads the certificate folder (or, with `only`, just those folders) into `catalog`, keeping each folder's last
    /// good certificate when its new files fail, and updates the SNI table with what changed (``updateTable``).
    /// Returns every finding.
    ///
    /// `domains` are the domains whose coverage is worked out besides those of the changed certificates' names:
    /// they are warned about when no certificate covers them, and with ACME get a temporary certificate.
    /// `allDomains` gives every configured domain (default: `domains`), asked for only when every coverage must be
    /// redone; `isConfigured` tells those from other names the certificates list (default: whether `domains` has
    /// it). When no
    /// certificate at all is usable, the catalog keeps its table (at start there is none, and the start fails with
    /// the returned errors).
    func loadCertificates(
        into catalog: inout Certificates, domains: @autoclosure () -> [String], only: Set<String>? = nil,
        allDomains: (() -> [String])? = nil, isConfigured: ((String) -> Bool)? = nil, at now: Date,
        watching watcher: ConfigWatcher? = nil
    ) -> [Diagnostic] {
        let directory = CertificateDirectory(
            path: configuration.certificateDirectory, refusesExposedKeys: configuration.refusesExposedPrivateKeys)
        var known: [String: CertificateDirectory.KnownFolder] = [:]
        for name in only ?? Set(catalog.served.keys) { known[name] = catalog.served[name]?.known }
        // Each new certificate is imported into GnuTLS as its folder is read: one GnuTLS refuses is that folder's
        // error, and the folder keeps its last good certificate.
        var beforeReading: (@Sendable (String) -> [DirectoryListing.Entry]?)?
        if let watcher { beforeReading = { watcher.watchEntry($0, ofRoot: ConfigWatcher.certificateRoot) } }
        let folders = directory.loadFolders(
            now: now, known: known, importing: true, only: only, beforeReading: beforeReading)
        let selection = CertificateSelection(folders: folders, read: only, previous: catalog, now: now)
        let diagnostics = (directory.devCAKeyFinding().map { [$0] } ?? []) + selection.diagnostics
        for folder in selection.keptLastGood {
            logger.warning(
                "certificate folder failed to load; serving its last good certificate",
                metadata: ["folder": "\(folder)"])
        }
        log(diagnostics)
        func noCertificate() -> [Diagnostic] {
            let missing = Diagnostic(
                .error, rule: .noCertificates, "no usable certificate in '\(configuration.certificateDirectory)'",
                file: configuration.certificateDirectory,
                hint:
                    "add <domain>/fullchain.pem and privkey.pem, run `aasa-server certs dev`, start with --dev, or obtain certificates with --acme"
            )
            logger.error("no usable certificate; keeping the current ones", metadata: ["diagnostic": "\(missing)"])
            catalog.findings = selection.findings
            return diagnostics + [missing]
        }
        guard !selection.served.isEmpty || configuration.acme != nil else { return noCertificate() }
        var next = catalog
        next.served = selection.served
        next.findings = selection.findings
        // Asked for only now, when the folders are read: a start lists the config folder meanwhile.
        let domains = domains()
        do {
            try updateTable(
                &next, previous: catalog, changed: selection.changed, domains: domains,
                allDomains: allDomains ?? { domains }, isConfigured: isConfigured ?? Set(domains).contains)
        } catch {
            let failure = Diagnostic(
                .error, rule: .certificateInvalid, (error as? HTTPListenerError)?.reason ?? "\(error)")
            logger.error("certificates not reloaded; keeping the current ones", metadata: ["diagnostic": "\(failure)"])
            catalog.findings = selection.findings
            return diagnostics + [failure]
        }
        guard next.table != nil else { return noCertificate() }
        catalog = next
        return diagnostics
    }

    /// Brings the SNI table of `certificates` (whose ``Certificates/served`` is already the new one; `previous` is
    /// the one before) up to date with the folders in `changed` (new, replaced or gone), works out which
    /// certificate covers each of `domains` and of the names the changed certificates list (every domain's when a
    /// wildcard changed, or at the first load), and gives the uncovered ones a temporary certificate with ACME.
    /// Leaves the table `nil` when there is no certificate at all to serve.
    private func updateTable(
        _ certificates: inout Certificates, previous: Certificates, changed: Set<String>, domains: [String],
        allDomains: () -> [String], isConfigured: (String) -> Bool
    ) throws {
        let names = changed.flatMap { (previous.served[$0]?.names ?? []) + (certificates.served[$0]?.names ?? []) }
        let redoAll = previous.table == nil || names.contains { $0.hasPrefix("*.") }
        var table = previous.table
        var redoDefault = false
        if let current = table, !changed.isEmpty {
            let entries = changed.compactMap { certificates.served[$0].map(Server.tableEntry) }
            let gone = changed.filter { certificates.served[$0] == nil }
            let keep = !gone.contains(current.defaultID)
            table = try current.updating(
                removing: gone, adding: entries,
                defaultID: keep
                    ? nil : certificates.served.keys.min() ?? certificates.temporary.first.map(Certificates.temporaryID)
            )
            // A temporary certificate is the default only until a real one is served, and a certificate for a
            // domain that sorts first becomes the default when it arrives (ACME issues them in no set order).
            let defaultNames = Certificates.folder(ofEntry: current.defaultID).flatMap {
                certificates.served[$0]?.names
            }
            let first = defaultNames?.filter(isConfigured).min()
            redoDefault =
                !keep || redoAll || changed.contains(CertificateDirectory.defaultFolder)
                || (Certificates.folder(ofEntry: current.defaultID) == nil && !certificates.served.isEmpty)
                || certificates.served[CertificateDirectory.defaultFolder] == nil
                    && changed.contains { folder in
                        (certificates.served[folder]?.names ?? []).contains { name in
                            isConfigured(name) && first.map { name < $0 } ?? true
                        }
                    }
        } else if table == nil, !certificates.served.isEmpty {
            table = try CertificateTable(entries: certificates.served.values.map(Server.tableEntry))
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
            finished?.entryID(covering: domain).flatMap(Certificates.folder(ofEntry:))
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
            removing.append(Certificates.temporaryID(domain))
        }
        if configuration.acme != nil {
            for domain in uncovered where !temporary.contains(domain) {
                guard let credential = temporaryCertificates.credential(for: domain) else { continue }
                temporary.insert(domain)
                adding.append(
                    CertificateTable.Entry(
                        id: Certificates.temporaryID(domain), names: [domain], credential: credential, isFallback: true)
                )
            }
        } else if let table {
            for domain in uncovered {
                logger.warning(
                    "no certificate covers this domain; clients will get the default certificate and fail to verify it",
                    metadata: ["domain": "\(domain)", "default": "\(table.defaultID)"])
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
        temporaryCertificates.keep(only: temporary)
        certificates.temporary = temporary
        certificates.table = table
    }

    /// The entry for clients without (or with an unknown) SNI: certs/default/, else the certificate of the
    /// first domain (by name) one covers, else the first certificate.
    private static func defaultID(_ certificates: Certificates, domains: [String], table: CertificateTable) -> String? {
        if certificates.served[CertificateDirectory.defaultFolder] != nil { return CertificateDirectory.defaultFolder }
        return domains.sorted().lazy.compactMap { table.entryID(covering: $0).flatMap(Certificates.folder(ofEntry:)) }
            .first ?? certificates.served.keys.min()
    }

    /// Which certificate each folder serves after a load: its new one, or its last good one when the new files
    /// fail (GnuTLS's refusals among them), and what to report about each.
    private struct CertificateSelection {
        var served: PersistentDictionary<String, ServedCertificate>
        /// The errors and warnings of each folder that has any.
        var findings: PersistentDictionary<String, [Diagnostic]>
        var diagnostics: [Diagnostic] = []
        /// Folders whose new files failed, so their last good certificate stays.
        var keptLastGood: [String] = []
        /// The folders whose served certificate is new, or gone.
        var changed: Set<String> = []

        /// `folders` are the folders found among those `read` (every folder when `nil`); the others keep what
        /// `catalog` had.
        init(folders: [CertificateDirectory.Folder], read: Set<String>?, previous catalog: Certificates, now: Date) {
            served = read == nil ? PersistentDictionary() : catalog.served
            findings = read == nil ? PersistentDictionary() : catalog.findings
            served.reserveCapacity(folders.count)
            // At a start every folder is new.
            if catalog.served.isEmpty { changed.reserveCapacity(folders.count) }
            for folder in folders {
                let findings = folder.diagnostics
                let previous = catalog.served[folder.name]
                var current: ServedCertificate?
                if folder.unchanged, var previous {
                    previous.loadedAt = now
                    current = previous
                } else if let certificate = folder.certificate, let credential = certificate.credential {
                    if var previous, previous.isSame(as: certificate) {
                        // Parsed again (its findings were due), found the same: the table keeps it, and the next
                        // load compares against these findings.
                        previous.loadedAt = now
                        previous.known = certificate.known
                        current = previous
                    } else {
                        current = ServedCertificate(certificate, credential: credential, loadedAt: now)
                        changed.insert(folder.name)
                    }
                }
                diagnostics += findings
                if current == nil, previous != nil { keptLastGood.append(folder.name) }
                let serving = current ?? previous
                served[folder.name] = serving
                let standing = findings.filter { $0.severity != .note }
                self.findings[folder.name] = standing.isEmpty ? nil : standing
            }
            // Folders read and not found are gone.
            let found = Set(folders.map(\.name))
            for name in read ?? Set(catalog.served.keys) where !found.contains(name) {
                if catalog.served[name] != nil { changed.insert(name) }
                served[name] = nil
                findings[name] = nil
            }
        }
    }

    /// The SNI table's entry for a certificate in service: its credential is the current table's.
    static func tableEntry(_ certificate: ServedCertificate) -> CertificateTable.Entry {
        CertificateTable.Entry(id: certificate.folderName, names: certificate.names, credential: certificate.credential)
    }
}
