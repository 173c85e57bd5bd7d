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
        /// SHA-256 fingerprint of the leaf, for ``ServerStatus`` (as `openssl x509 -fingerprint -sha256` prints it).
        var fingerprint: String
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
            names = certificate.names
            notBefore = certificate.summary.notBefore
            notAfter = certificate.notAfter
            fingerprint = certificate.summary.sha256Fingerprint
            subjectAlternativeNames = certificate.summary.subjectAlternativeNames
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
    struct Certificates: Sendable {
        /// What each certificate folder serves: its newest good certificate.
        var served: [String: ServedCertificate] = [:]
        /// The most recent state of every certificate folder.
        var states: [ServerStatus.CertificateState] = []
        /// The domains no certificate covers that get a temporary self-signed one while ACME obtains theirs
        /// (``TemporaryCertificates``), sorted.
        var temporary: [String] = []
        /// The SNI table built from ``served`` and ``temporary``; a new object whenever they change.
        var table: CertificateTable?
        /// The folder of the certificate covering each configured domain, as the last load found it.
        var coveringFolder: [String: String] = [:]

        /// What each domain's handshakes get, by the certificates served: `files` (ACME reports its own domains
        /// over this, ``ACMEManager/statuses``).
        func domainStatus(_ domains: [String], at now: Date) -> [String: DomainCertificateStatus] {
            guard table != nil else { return [:] }
            var statuses: [String: DomainCertificateStatus] = [:]
            statuses.reserveCapacity(domains.count)
            for domain in domains {
                let covering =
                    served[domain].flatMap { $0.subjectAlternativeNames.covers(hostname: domain) ? $0 : nil }
                    ?? coveringFolder[domain].flatMap { served[$0] }
                let problem: String? =
                    switch covering {
                    case nil: "no certificate in the certificate folder covers \(domain)"
                    case let covering? where covering.notAfter <= now:
                        "the certificate of \(domain) (folder '\(covering.folderName)') has expired"
                    default: nil
                    }
                statuses[domain] = DomainCertificateStatus(
                    source: .files, state: problem == nil ? .valid : .failed, expiry: covering?.notAfter,
                    lastError: problem)
            }
            return statuses
        }
    }

    /// The last good version of every domain and certificate folder, and what the most recent load found.
    ///
    /// A load never replaces a good version with a broken one: a domain or certificate folder that fails
    /// keeps what it had, and the failure is recorded for ``ServerStatus``.
    struct Catalog: Sendable {
        /// What each domain serves: its newest clean version.
        var published: [String: PublishedDomain] = [:]
        /// When each published domain's served version was loaded (first: reloads that serve the same bytes keep it).
        var domainLoadTimes: [String: Date] = [:]
        /// The most recent load result of every domain folder.
        var loaded: [LoadedDomain] = []
        /// Domains whose folder disappeared while they were published, and when that was first seen: they keep being
        /// served until ``ServerConfiguration/removalGrace`` has passed.
        var removedSince: [String: Date] = [:]
        /// What the certificate folder serves.
        var certificates = Certificates()
        /// The status after the most recent load.
        var status: ServerStatus?
        /// The last change of each domain that changed since the start: when, and what it did to URLs.
        var lastChanges: [String: DomainChange] = [:]

        /// Takes in a fresh load of the config folder: clean domains replace their published version, broken
        /// ones keep theirs, and folders that disappeared are unpublished once they have been gone for
        /// `removalGrace` (until then they keep being served). Returns the domains whose served bytes changed.
        mutating func apply(_ loaded: [LoadedDomain], at now: Date, removalGrace: Duration = .zero) -> [String] {
            var next: [String: PublishedDomain] = [:]
            var times: [String: Date] = [:]
            next.reserveCapacity(loaded.count)
            times.reserveCapacity(loaded.count)
            for domain in loaded {
                if let fresh = domain.published {
                    next[domain.domain] = fresh
                    times[domain.domain] = now
                } else if let previous = published[domain.domain] {
                    next[domain.domain] = previous  // keep the last good version
                    times[domain.domain] = domainLoadTimes[domain.domain]
                }
            }
            let present = Set(loaded.map(\.domain))
            var removing: [String: Date] = [:]
            for (name, version) in published where !present.contains(name) {
                let since = removedSince[name] ?? now
                guard now.timeIntervalSince(since) < removalGrace.timeInterval else { continue }
                next[name] = version
                times[name] = domainLoadTimes[name]
                removing[name] = since
            }
            removedSince = removing
            let changed = Set(next.keys).union(published.keys).filter { name in
                let old = published[name]
                let new = next[name]
                return old?.associationFile != new?.associationFile || old?.cacheControl != new?.cacheControl
                    || old?.signedAssociationFile != new?.signedAssociationFile
                    || old?.signedPaths != new?.signedPaths || old?.assetLinks != new?.assetLinks
                    || old?.pages != new?.pages || old?.hsts != new?.hsts
            }
            // A version served unchanged keeps the time it was first loaded: `/status`' `lastGoodLoad` says since
            // when a domain serves what it serves, not when a reload last read its folder.
            for (name, time) in domainLoadTimes where times[name] != nil && !changed.contains(name) {
                times[name] = time
            }
            recordChanges(from: published, to: next, at: now)
            published = next
            domainLoadTimes = times
            self.loaded = loaded
            return changed.sorted()
        }

        /// What each new version of a domain does to URLs, compared with the version it replaces (``DomainDiff``):
        /// only domains whose association file, assetlinks.json or their serving settings changed.
        private mutating func recordChanges(
            from old: [String: PublishedDomain], to new: [String: PublishedDomain], at now: Date
        ) {
            let compared = new.compactMap { name, version -> (PublishedDomain, PublishedDomain)? in
                guard let previous = old[name],
                    previous.associationFile != version.associationFile || previous.assetLinks != version.assetLinks
                        || previous.cacheControl != version.cacheControl
                        || (previous.signedAssociationFile == nil) != (version.signedAssociationFile == nil)
                else { return nil }
                return (previous, version)
            }
            for diff in compared.concurrentMap({ DomainChange.compare($0.0, $0.1) }) {
                lastChanges[diff.domain] = DomainChange(time: now, diff: diff)
            }
            lastChanges = lastChanges.filter { new[$0.key] != nil }
        }

        /// The status as of this catalog.
        func makeStatus(
            started: Date, trigger: ReloadTrigger, at now: Date, errors: [Diagnostic], warnings: [Diagnostic] = [],
            failed: Bool
        ) -> ServerStatus {
            let result: ServerStatus.LoadOutcome.Result = failed ? .failed : errors.isEmpty ? .ok : .errors
            let domainCertificates = certificates.domainStatus(loaded.map(\.domain), at: now)
            return ServerStatus(
                started: started,
                lastReload: ServerStatus.LoadOutcome(
                    time: now, trigger: trigger, result: result, errors: errors, warnings: warnings),
                domains: (loaded.map { domain in
                    ServerStatus.DomainState(
                        domain: domain.domain, published: published[domain.domain] != nil,
                        lastGoodLoad: domainLoadTimes[domain.domain], errors: domain.diagnostics.errors,
                        certificate: domainCertificates[domain.domain], lastChange: lastChanges[domain.domain],
                        certificateFolder: certificates.coveringFolder[domain.domain])
                }
                    + removedSince.map { name, since in
                        ServerStatus.DomainState(
                            domain: name, published: true, lastGoodLoad: domainLoadTimes[name], errors: [],
                            removedSince: since)
                    }).sorted { $0.domain < $1.domain },
                certificates: certificates.states)
        }
    }

    /// Reads the certificate folder into `catalog`, keeping each folder's last good certificate when its new
    /// files fail, and builds a new SNI table when anything changed. Returns every finding.
    ///
    /// `domains` are the configured domain names: they choose the default certificate and are warned about
    /// when no certificate covers them. Nothing else of the domains is needed, so this runs while they load.
    /// When no certificate at all is usable, the catalog keeps its table (at start there is none, and the
    /// start fails with the returned errors).
    func loadCertificates(into catalog: inout Certificates, domains: [String], at now: Date) -> [Diagnostic] {
        let directory = CertificateDirectory(
            path: configuration.certificateDirectory, refusesExposedKeys: configuration.refusesExposedPrivateKeys)
        // Each new certificate is imported into GnuTLS as its folder is read: one GnuTLS refuses is that folder's
        // error, and the folder keeps its last good certificate.
        let folders = directory.loadFolders(now: now, known: catalog.served.mapValues(\.known), importing: true)
        var selection = CertificateSelection(folders: folders, previous: catalog, now: now)
        let certificates = selection.certificates
        let coverage = CertificateNameIndex(subjectAlternativeNames: certificates.map(\.subjectAlternativeNames))
        var uncovered: [String] = []
        catalog.coveringFolder.removeAll(keepingCapacity: true)
        for domain in domains {
            if let index = coverage.firstIndex(covering: domain) {
                catalog.coveringFolder[domain] = certificates[index].folderName
            } else {
                uncovered.append(domain)
            }
        }
        // With ACME, a domain no certificate covers gets a temporary one until its own is issued.
        let temporary =
            configuration.acme == nil
            ? [] : uncovered.compactMap { domain in temporaryCertificates.credential(for: domain).map { (domain, $0) } }
        temporaryCertificates.keep(only: Set(temporary.map(\.0)))
        selection.changed = selection.changed || temporary.map(\.0) != catalog.temporary
        var diagnostics = (directory.devCAKeyFinding().map { [$0] } ?? []) + selection.diagnostics
        for folder in selection.keptLastGood {
            logger.warning(
                "certificate folder failed to load; serving its last good certificate",
                metadata: ["folder": "\(folder)"])
        }
        log(diagnostics)
        catalog.states = selection.states
        guard !certificates.isEmpty || !temporary.isEmpty else {
            let missing = Diagnostic(
                .error, rule: .noCertificates, "no usable certificate in '\(configuration.certificateDirectory)'",
                file: configuration.certificateDirectory,
                hint:
                    "add <domain>/fullchain.pem and privkey.pem, run `aasa-server certs dev`, start with --dev, or obtain certificates with --acme"
            )
            logger.error("no usable certificate; keeping the current ones", metadata: ["diagnostic": "\(missing)"])
            return diagnostics + [missing]
        }
        guard selection.changed else {
            catalog.served = selection.served
            return diagnostics
        }
        let defaultIndex = CertificateSelection.defaultIndex(certificates, coverage: coverage, domains: domains)
        if configuration.acme == nil {
            for domain in uncovered {
                logger.warning(
                    "no certificate covers this domain; clients will get the default certificate and fail to verify it",
                    metadata: ["domain": "\(domain)", "default": "\(certificates[defaultIndex].folderName)"])
            }
        }
        do {
            let entries =
                certificates.map(Server.tableEntry)
                + temporary.map { CertificateTable.Entry(names: [$0], credential: $1) }
            catalog.table = try CertificateTable(
                entries: entries, defaultEntry: certificates.isEmpty ? 0 : defaultIndex)
            catalog.served = selection.served
            catalog.temporary = temporary.map(\.0)
        } catch {
            let failure = Diagnostic(
                .error, rule: .certificateInvalid, (error as? HTTPListenerError)?.reason ?? "\(error)")
            logger.error("certificates not reloaded; keeping the current ones", metadata: ["diagnostic": "\(failure)"])
            diagnostics.append(failure)
        }
        return diagnostics
    }

    /// Which certificate each folder serves after a load: its new one, or its last good one when the new files
    /// fail (GnuTLS's refusals among them), and what to report about each.
    private struct CertificateSelection {
        var served: [String: ServedCertificate] = [:]
        var states: [ServerStatus.CertificateState] = []
        var diagnostics: [Diagnostic] = []
        /// Folders whose new files failed, so their last good certificate stays.
        var keptLastGood: [String] = []
        /// Whether the table must be rebuilt.
        var changed: Bool

        init(folders: [CertificateDirectory.Folder], previous catalog: Certificates, now: Date) {
            changed = catalog.table == nil
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
                        changed = true
                    }
                }
                diagnostics += findings
                if current == nil, previous != nil { keptLastGood.append(folder.name) }
                let serving = current ?? previous
                served[folder.name] = serving
                states.append(
                    ServerStatus.CertificateState(
                        folder: folder.name, names: serving?.names ?? [], serving: serving != nil,
                        fingerprint: serving?.fingerprint, notAfter: serving?.notAfter, lastGoodLoad: serving?.loadedAt,
                        errors: findings.errors, warnings: findings.warnings))
            }
            changed = changed || Set(served.keys) != Set(catalog.served.keys)
        }

        /// The certificates to serve, sorted by folder name: the order of the table's entries.
        var certificates: [ServedCertificate] {
            served.values.sorted { $0.folderName < $1.folderName }
        }

        /// The entry for clients without (or with an unknown) SNI: certs/default/, else the certificate of the
        /// first domain, else the first certificate. `coverage` indexes `certificates`: one lookup per domain,
        /// because asking every certificate about every domain is quadratic in the domain count.
        static func defaultIndex(_ certificates: [ServedCertificate], coverage: CertificateNameIndex, domains: [String])
            -> Int
        {
            certificates.firstIndex { $0.folderName == CertificateDirectory.defaultFolder }
                ?? domains.lazy.compactMap { coverage.firstIndex(covering: $0) }.first
                ?? 0
        }
    }

    /// The SNI table's entry for a certificate in service: its credential is the current table's.
    static func tableEntry(_ certificate: ServedCertificate) -> CertificateTable.Entry {
        CertificateTable.Entry(names: certificate.names, credential: certificate.credential)
    }
}
