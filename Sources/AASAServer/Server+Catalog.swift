import AASACore
import AASAMicroHTTPD
import Foundation
import Logging

extension Server {
    /// A certificate in service and when it was loaded.
    struct ServedCertificate: Sendable {
        var certificate: DomainCertificate
        var loadedAt: Date
    }

    /// The last good version of every domain and certificate folder, and what the most recent load found.
    ///
    /// A load never replaces a good version with a broken one: a domain or certificate folder that fails
    /// keeps what it had, and the failure is recorded for ``ServerStatus``.
    struct Catalog: Sendable {
        /// What each domain serves: its newest clean version.
        var published: [String: PublishedDomain] = [:]
        /// When each published domain's served version was loaded.
        var domainLoadTimes: [String: Date] = [:]
        /// The most recent load result of every domain folder.
        var loaded: [LoadedDomain] = []
        /// What each certificate folder serves: its newest good certificate.
        var certificates: [String: ServedCertificate] = [:]
        /// The most recent state of every certificate folder.
        var certificateStates: [ServerStatus.CertificateState] = []
        /// The SNI table built from ``certificates``; a new object whenever they change.
        var certificateTable: CertificateTable?
        /// The status after the most recent load.
        var status: ServerStatus?

        /// Takes in a fresh load of the config folder: clean domains replace their published version, broken
        /// ones keep theirs, removed folders are unpublished. Returns the domains whose served bytes changed.
        mutating func apply(_ loaded: [LoadedDomain], at now: Date) -> [String] {
            var next: [String: PublishedDomain] = [:]
            var times: [String: Date] = [:]
            for domain in loaded {
                if let fresh = domain.published {
                    next[domain.domain] = fresh
                    times[domain.domain] = now
                } else if let previous = published[domain.domain] {
                    next[domain.domain] = previous  // keep the last good version
                    times[domain.domain] = domainLoadTimes[domain.domain]
                }
            }
            let changed = Set(next.keys).union(published.keys).filter { name in
                let old = published[name]
                let new = next[name]
                return old?.associationFile != new?.associationFile || old?.cacheControl != new?.cacheControl
                    || old?.signedAssociationFile != new?.signedAssociationFile
                    || old?.signedPaths != new?.signedPaths || old?.assetLinks != new?.assetLinks
                    || old?.pages != new?.pages || old?.hsts != new?.hsts
            }
            published = next
            domainLoadTimes = times
            self.loaded = loaded
            return changed.sorted()
        }

        /// The status as of this catalog.
        func makeStatus(
            started: Date, trigger: ReloadTrigger, at now: Date, errors: [Diagnostic], warnings: [Diagnostic] = [],
            failed: Bool
        ) -> ServerStatus {
            let result: ServerStatus.LoadOutcome.Result = failed ? .failed : errors.isEmpty ? .ok : .errors
            return ServerStatus(
                started: started,
                lastReload: ServerStatus.LoadOutcome(
                    time: now, trigger: trigger, result: result, errors: errors, warnings: warnings),
                domains: loaded.map { domain in
                    ServerStatus.DomainState(
                        domain: domain.domain, published: published[domain.domain] != nil,
                        lastGoodLoad: domainLoadTimes[domain.domain], errors: domain.diagnostics.errors)
                },
                certificates: certificateStates)
        }
    }

    /// Reads the certificate folder into `catalog`, keeping each folder's last good certificate when its new
    /// files fail, and builds a new SNI table when anything changed. Returns every finding.
    ///
    /// When no certificate at all is usable, the catalog keeps its table (at start there is none, and the
    /// start fails with the returned errors).
    func loadCertificates(into catalog: inout Catalog, at now: Date) -> [Diagnostic] {
        let directory = CertificateDirectory(
            path: configuration.certificateDirectory, refusesExposedKeys: configuration.refusesExposedPrivateKeys)
        let folders = directory.loadFolders(now: now)
        var diagnostics: [Diagnostic] = directory.devCAKeyFinding().map { [$0] } ?? []
        var served: [String: ServedCertificate] = [:]
        var states: [ServerStatus.CertificateState] = []
        var changed = catalog.certificateTable == nil
        for folder in folders {
            var findings = folder.diagnostics
            let previous = catalog.certificates[folder.name]
            var fresh: ServedCertificate?
            if let certificate = folder.certificate {
                if let previous, previous.certificate.chainPEM == certificate.chainPEM,
                    previous.certificate.keyPEM == certificate.keyPEM,
                    previous.certificate.ocspStaple?.response == certificate.ocspStaple?.response
                {
                    fresh = ServedCertificate(certificate: previous.certificate, loadedAt: now)
                } else {
                    // GnuTLS imports what it serves; a certificate OpenSSL reads but GnuTLS refuses must not
                    // take the whole table down with it.
                    do {
                        _ = try CertificateTable(entries: [Self.tableEntry(certificate)])
                        fresh = ServedCertificate(certificate: certificate, loadedAt: now)
                        changed = true
                    } catch {
                        findings.append(
                            Diagnostic(
                                .error, rule: "certificate-invalid", "\(error)", file: certificate.fullchainPath,
                                hint: "fullchain.pem must hold PEM certificates, leaf first, matching privkey.pem"))
                    }
                }
            }
            diagnostics += findings
            let current = fresh ?? previous
            if fresh == nil, previous != nil {
                logger.warning(
                    "certificate folder failed to load; serving its last good certificate",
                    metadata: ["folder": "\(folder.name)"])
            }
            served[folder.name] = current
            states.append(
                ServerStatus.CertificateState(
                    folder: folder.name, names: current?.certificate.names ?? [], serving: current != nil,
                    fingerprint: current?.certificate.chain.leaf.sha256Fingerprint,
                    notAfter: current?.certificate.notAfter, lastGoodLoad: current?.loadedAt,
                    errors: findings.errors, warnings: findings.warnings))
        }
        log(diagnostics)
        changed = changed || Set(served.keys) != Set(catalog.certificates.keys)
        let domains = catalog.loaded.map(\.domain)
        let certificates = served.values.map(\.certificate).sorted { $0.folderName < $1.folderName }
        guard !certificates.isEmpty else {
            let missing = Diagnostic(
                .error, rule: "no-certificates", "no usable certificate in '\(configuration.certificateDirectory)'",
                file: configuration.certificateDirectory,
                hint: "add <domain>/fullchain.pem and privkey.pem, run `aasa-server certs dev`, or start with --dev")
            logger.error("no usable certificate; keeping the current ones", metadata: ["diagnostic": "\(missing)"])
            catalog.certificateStates = states
            return diagnostics + [missing]
        }
        catalog.certificateStates = states
        guard changed else {
            catalog.certificates = served
            return diagnostics
        }
        // Default: certs/default/, else the certificate of the first domain, else the first certificate.
        let defaultIndex =
            certificates.firstIndex { $0.folderName == CertificateDirectory.defaultFolder }
            ?? domains.lazy.compactMap { domain in certificates.firstIndex { $0.covers(domain) } }.first
            ?? 0
        for domain in domains where !certificates.contains(where: { $0.covers(domain) }) {
            logger.warning(
                "no certificate covers this domain; clients will get the default certificate and fail to verify it",
                metadata: ["domain": "\(domain)", "default": "\(certificates[defaultIndex].folderName)"])
        }
        do {
            catalog.certificateTable = try CertificateTable(
                entries: certificates.map(Self.tableEntry), defaultEntry: defaultIndex)
            catalog.certificates = served
        } catch {
            let failure = Diagnostic(.error, rule: "certificate-invalid", "\(error)")
            logger.error("certificates not reloaded; keeping the current ones", metadata: ["diagnostic": "\(failure)"])
            diagnostics.append(failure)
        }
        return diagnostics
    }

    private static func tableEntry(_ certificate: DomainCertificate) -> CertificateTable.Entry {
        CertificateTable.Entry(
            names: certificate.names, certificateChainPEM: certificate.chainPEM, privateKeyPEM: certificate.keyPEM,
            staple: certificate.ocspStaple.map {
                CertificateTable.OCSPStaple(
                    response: $0.response, expires: Int($0.nextUpdate.timeIntervalSince1970.rounded(.down)))
            })
    }
}
