import AASACore
import AASACurl
public import AASAOpenSSL
public import Foundation
public import Logging

/// Obtains and renews the certificates of the configured domains (`serve --acme`): after every load it is told
/// which domains exist and which certificates are served (``update(domains:certificates:now:)``), decides for
/// each domain, and runs the orders on a few worker threads (``ACMESettings/concurrency``), so 10,000 new domains
/// queue instead of stampeding the CA.
///
/// - A domain whose certificate folder holds the operator's files (no ``CertificateRecord``) is never touched, nor
///   one covered by another certificate of the operator's that has not expired.
/// - A domain with no usable certificate is ordered at once; one whose certificate the server obtained is renewed
///   by the ``RenewalSchedule``.
/// - An issued certificate is written in certbot's layout (`certs/<domain>/privkey.pem`, `fullchain.pem`, and the
///   record `acme.json`) through ``AtomicFile``, and `issued` is called: the server reloads, and new connections
///   get the new certificate.
/// - A failure leaves what is served as it is and is retried (``RenewalSchedule/retry(failures:now:retryAfter:)``).
public final class ACMEManager: @unchecked Sendable {
    /// One certificate in service, as the manager needs to know it.
    public struct ServedCertificate: Sendable {
        /// Its folder below the certificate folder.
        public var folder: String
        /// The names it covers.
        public var subjectAlternativeNames: SubjectAlternativeNames
        /// Its validity.
        public var notBefore: Date
        public var notAfter: Date

        /// Creates a view of a served certificate.
        public init(folder: String, subjectAlternativeNames: SubjectAlternativeNames, notBefore: Date, notAfter: Date) {
            self.folder = folder
            self.subjectAlternativeNames = subjectAlternativeNames
            self.notBefore = notBefore
            self.notAfter = notAfter
        }
    }

    /// Orders finished so far, by result (`valid`, `failed`): `aasa_acme_orders_total{result}`.
    public var orderCounts: [String: Int] { condition.locked { state.orderCounts } }

    /// Every domain's certificate status, for `/status`.
    public var statuses: [String: DomainCertificateStatus] { condition.locked { state.entries.mapValues(\.status) } }

    /// The answers this manager's orders publish in memory: serve them (``ChallengeRoutes``).
    public let challenges: ChallengeStore
    /// Where the orders publish their answers: ``challenges``, or a webroot another server answers from.
    private let responder: any ChallengeResponder
    /// The ACME client.
    public let client: ACMEClient
    private let settings: ACMESettings
    private let schedule: RenewalSchedule
    private let certificateDirectory: String
    private let logger: Logger
    private let issued: @Sendable (String) -> Void
    private let condition = NSCondition()
    /// Guarded by ``condition``.
    private var state = State()

    private struct State {
        var entries: [String: Entry] = [:]
        var orderCounts: [String: Int] = [:]
        var running = false
    }

    /// What the manager keeps about one domain.
    private struct Entry {
        var status: DomainCertificateStatus
        /// When to order (or renew); `nil`: nothing to do (the operator's certificate).
        var due: Date?
        var inProgress = false
        /// Failures in a row.
        var failures = 0
        /// When this process obtained the domain's current certificate.
        var issuedHere: Date?
        /// The CA's suggested renewal window for the served certificate, and when to ask for it next (RFC 9773
        /// §4.3); `nil` without a certificate of the server's own.
        var suggested: ClosedRange<Date>?
        var nextCheck: Date?
        /// The served certificate this entry was planned for, to notice a new one.
        var notAfter: Date?

        /// The certificate must be replaced whatever its dates (it came from another CA).
        var forced = false
        /// The expiry of a certificate just written that no reload has served yet.
        var awaitingReload: Date?

        /// When a worker next has something to do for the domain: order or renew, or ask the renewal window.
        var wake: Date? {
            guard let due else { return nil }
            guard awaitingReload == nil else { return nil }
            return failures == 0 ? min(due, nextCheck ?? due) : due
        }
    }

    /// How often a managed certificate's renewal information is asked (RFC 9773 §4.3 leaves it to clients; a CA
    /// may move the window earlier, e.g. before a mass revocation). The first check of each certificate is at a
    /// point within this interval fixed per domain, so a start with thousands of certificates does not ask for all
    /// of them at once.
    static let renewalInfoInterval: TimeInterval = 6 * 3600

    /// A manager for the certificate folder `certificateDirectory`, publishing its answers through `responder`
    /// (default: ``challenges``); `issued` is called with the domain after each certificate is written.
    public init(
        settings: ACMESettings, client: ACMEClient, certificateDirectory: String, logger: Logger,
        responder: (any ChallengeResponder)? = nil, issued: @escaping @Sendable (String) -> Void
    ) {
        self.settings = settings
        self.client = client
        self.certificateDirectory = certificateDirectory
        self.logger = logger
        self.issued = issued
        let store = ChallengeStore()
        challenges = store
        self.responder = responder ?? store
        schedule = RenewalSchedule(
            renewBefore: settings.renewBefore, minimumRetry: settings.minimumRetry, maximumRetry: settings.maximumRetry)
    }

    /// A manager for `settings`: the account kept in `<certificateDirectory>/acme/` (created on first use), and a
    /// client to the CA over libcurl trusting `settings.caFile` when given.
    public static func make(
        settings: ACMESettings, certificateDirectory: String, logger: Logger,
        responder: (any ChallengeResponder)? = nil, issued: @escaping @Sendable (String) -> Void = { _ in }
    ) throws(ACMEFailure) -> ACMEManager {
        if let caFile = settings.caFile {
            guard case .success = ConfinedFile.read(caFile, within: .anywhere, maximumBytes: 1 << 20) else {
                throw ACMEFailure(
                    .configuration, "the ACME CA file cannot be read", url: caFile,
                    hint: "pass a readable PEM file of the ACME server's CA with --acme-ca-file")
            }
        }
        let account = try ACMEAccount.load(
            folder: certificateDirectory + "/" + ACMEAccount.folderName, email: settings.email,
            agreesToTerms: settings.agreesToTerms)
        var http = HTTPClient(trustAnchors: settings.caFile)
        http.userAgent = "aasa-server (ACME)"
        let client = try ACMEClient(
            directoryURL: settings.directoryURL, account: account, transport: CurlACMETransport(client: http),
            pollTimeout: settings.pollTimeout)
        return ACMEManager(
            settings: settings, client: client, certificateDirectory: certificateDirectory, logger: logger,
            responder: responder, issued: issued)
    }

    // MARK: Planning

    /// Plans every domain in `domains` from the certificates served now; domains no longer configured are dropped.
    public func update(domains: [String], certificates: [ServedCertificate], now: Date = Date()) {
        let coverage = CertificateNameIndex(subjectAlternativeNames: certificates.map(\.subjectAlternativeNames))
        let byFolder = Dictionary(certificates.map { ($0.folder, $0) }, uniquingKeysWith: { first, _ in first })
        var plans: [String: Plan] = [:]
        for domain in domains {
            let own = byFolder[domain].flatMap { $0.subjectAlternativeNames.covers(hostname: domain) ? $0 : nil }
            let other = coverage.firstIndex(covering: domain).map { certificates[$0] }
            plans[domain] = plan(domain, own: own, covering: own ?? other, now: now)
        }
        condition.locked {
            var entries: [String: Entry] = [:]
            for (domain, plan) in plans {
                var entry = state.entries[domain] ?? Entry(status: plan.status)
                // A load that began before the new files were written still sees the old certificate: keep waiting.
                // One that no load serves within ten minutes (refused when imported) is planned again as it is.
                if let awaited = entry.awaitingReload {
                    let waited = entry.issuedHere.map { now.timeIntervalSince($0) } ?? 0
                    guard plan.notAfter == awaited || waited > 600 else {
                        entries[domain] = entry
                        continue
                    }
                    entry.awaitingReload = nil
                }
                if !entry.inProgress {
                    let newCertificate = entry.notAfter != plan.notAfter
                    if newCertificate {
                        entry.suggested = nil
                        entry.nextCheck =
                            plan.served == nil
                            ? nil
                            : now.addingTimeInterval(
                                Self.renewalInfoInterval * RenewalSchedule.spread(domain, plan.notAfter ?? now))
                    }
                    // A failed entry keeps its backoff and its problem until the certificate changes.
                    if entry.failures == 0 || newCertificate || plan.due == nil {
                        entry.status = plan.status
                        entry.due = plan.due
                        if newCertificate { entry.failures = 0 }
                    } else {
                        entry.status.expiry = plan.status.expiry
                        entry.status.source = plan.status.source
                    }
                    entry.notAfter = plan.notAfter
                    entry.forced = plan.fromOtherCA
                    if let served = plan.served, entry.due != nil, entry.failures == 0, !plan.fromOtherCA {
                        entry.due = schedule.renewal(
                            domain: domain, notBefore: served.notBefore, notAfter: served.notAfter,
                            suggested: entry.suggested, issuedHere: entry.issuedHere)
                        entry.status.nextRenewal = entry.due
                    }
                }
                entries[domain] = entry
            }
            state.entries = entries
        }
        condition.broadcast()
    }

    private struct Plan {
        var status: DomainCertificateStatus
        var due: Date?
        /// The server's own certificate in service, to renew.
        var served: ServedCertificate?
        var notAfter: Date?
        /// The server's certificate came from another directory (a trial against a staging CA): replace it now.
        var fromOtherCA = false
    }

    /// What to do for `domain`: `own` is the certificate of its own folder (when it covers it), `covering` the
    /// certificate its handshakes get.
    private func plan(_ domain: String, own: ServedCertificate?, covering: ServedCertificate?, now: Date) -> Plan {
        let folder = certificateDirectory + "/" + domain
        let managed = CertificateRecord.isPresent(in: folder)
        let operatorFiles = !managed && FileManager.default.fileExists(atPath: CertificateFile.chain.path(in: folder))
        if operatorFiles {
            let usable = own.map { $0.notAfter > now } ?? false
            return Plan(
                status: DomainCertificateStatus(
                    source: .files, state: usable ? .valid : .failed, expiry: own?.notAfter,
                    lastError: usable
                        ? nil
                        : "\(domain): the operator's certificate in '\(folder)' "
                            + (own == nil
                                ? "does not serve this name (for other names, or failing to load: see its folder on /status)"
                                : "has expired")
                            + "; it is never replaced: renew it, or remove its files to let --acme manage the domain"),
                due: nil, notAfter: own?.notAfter)
        }
        if let covering, covering.folder != domain,
            !CertificateRecord.isPresent(in: certificateDirectory + "/" + covering.folder),
            covering.notAfter > now
        {
            return Plan(
                status: DomainCertificateStatus(source: .files, state: .valid, expiry: covering.notAfter), due: nil,
                notAfter: covering.notAfter)
        }
        guard let own, own.notAfter > now else {
            return Plan(
                status: DomainCertificateStatus(source: .acme, state: .pending, expiry: nil, nextRenewal: now),
                due: now,
                notAfter: own?.notAfter)
        }
        let record = CertificateRecord.read(in: folder)
        let fromOtherCA = record.map { $0.directoryURL != client.directoryURL } ?? false
        return Plan(
            status: DomainCertificateStatus(
                source: .acme, state: .valid, expiry: own.notAfter, nextRenewal: fromOtherCA ? now : nil),
            due: fromOtherCA ? now : own.notAfter, served: own, notAfter: own.notAfter, fromOtherCA: fromOtherCA)
    }

    /// Runs everything due at `now` (orders, renewals, and renewal-information checks) one after the other on the
    /// calling thread (`certs acme`), and returns each domain's outcome.
    public func runDue(now: Date = Date()) -> [(domain: String, failure: ACMEFailure?)] {
        let due = condition.locked {
            state.entries.filter { entry in entry.value.wake.map { $0 <= now } ?? false }.keys.sorted()
        }
        return due.map { domain in
            condition.locked { state.entries[domain]?.inProgress = true }
            let outcome = Result { () throws(ACMEFailure) in try renewOrOrder(domain, now: now) }
            finish(domain, outcome, now: now)
            if case .failure(let failure) = outcome { return (domain, failure.about(domain)) }
            return (domain, nil)
        }
    }

    // MARK: Workers

    /// Starts the worker threads.
    public func start() {
        let count = condition.locked { () -> Int in
            guard !state.running else { return 0 }
            state.running = true
            return max(1, settings.concurrency)
        }
        for index in 0..<count {
            let thread = Thread { [self] in work() }
            thread.name = "acme-\(index)"
            thread.start()
        }
    }

    /// Stops the workers: orders in flight finish (their certificates are still written), no new one starts.
    public func stop() {
        condition.locked { state.running = false }
        condition.broadcast()
    }

    private func work() {
        while let domain = nextDue() {
            let outcome = Result { () throws(ACMEFailure) in try renewOrOrder(domain) }
            finish(domain, outcome)
        }
    }

    /// Waits for the earliest due domain not in progress and marks it in progress; `nil` once stopped.
    private func nextDue() -> String? {
        condition.lock()
        defer { condition.unlock() }
        while state.running {
            let now = Date()
            let next = state.entries.compactMap { domain, entry in
                entry.wake.flatMap { entry.inProgress ? nil : (domain, entry, $0) }
            }.min { $0.2 < $1.2 }
            guard let (domain, entry, wake) = next else {
                condition.wait()
                continue
            }
            if wake > now {
                _ = condition.wait(until: wake)
                continue
            }
            state.entries[domain]?.inProgress = true
            if entry.due.map({ $0 <= now }) == true, entry.status.source == .acme {
                state.entries[domain]?.status.state = entry.status.expiry == nil ? .pending : .renewing
            }
            return domain
        }
        return nil
    }

    /// What one turn of a worker did for a domain.
    private enum Outcome {
        /// A certificate was written; it expires then.
        case issued(notBefore: Date, notAfter: Date)
        /// Renewal information was asked (the CA's window, or `nil` when it offers none); the renewal is due then.
        case rescheduled(ClosedRange<Date>?, due: Date)
    }

    /// Asks the CA's renewal window for a certificate in service when it is time to, and orders when due.
    private func renewOrOrder(_ domain: String, now: Date = Date()) throws(ACMEFailure) -> Outcome {
        let entry = condition.locked { state.entries[domain] }
        if let entry, let nextCheck = entry.nextCheck, let due = entry.due, entry.failures == 0, !entry.forced,
            nextCheck <= now || due <= now, let leaf = currentLeaf(domain)
        {
            // The CA's window wins; a CA without renewal information (or that cannot answer now) leaves the
            // lifetime rule's date.
            let window = try? client.renewalWindow(for: leaf)
            let next =
                window.map {
                    schedule.renewal(
                        domain: domain, notBefore: leaf.notBefore, notAfter: leaf.notAfter, suggested: $0,
                        issuedHere: entry.issuedHere)
                } ?? due
            if next > now { return .rescheduled(window, due: next) }
        }
        let (notBefore, notAfter) = try issue(domain)
        return .issued(notBefore: notBefore, notAfter: notAfter)
    }

    /// The leaf of `certs/<domain>/fullchain.pem`, for its renewal information.
    private func currentLeaf(_ domain: String) -> X509Certificate? {
        let path = CertificateFile.chain.path(in: certificateDirectory + "/" + domain)
        guard case .success(let contents) = ConfinedFile.read(path, within: .anywhere, maximumBytes: 1 << 20) else {
            return nil
        }
        return try? X509Certificate(pemEncoded: contents.bytes)
    }

    /// Orders a certificate for `domain` and writes it: the record, the key, then the chain (each through
    /// ``AtomicFile``). Blocks until done; `certs acme` calls it directly.
    public func issue(_ domain: String) throws(ACMEFailure) -> (notBefore: Date, notAfter: Date) {
        logger.info("ACME: ordering a certificate", metadata: ["domain": "\(domain)", "ca": "\(client.directoryURL)"])
        let key: PrivateKey
        do {
            key = try PrivateKey.generate(.ecdsaP256)
        } catch {
            throw ACMEFailure(.storage, "\(domain): could not generate a key: \(error)", hint: "report this")
        }
        let chain: [UInt8]
        do {
            chain = try client.obtainCertificate(for: [domain], key: key, challenges: responder)
        } catch {
            throw error.about(domain)
        }
        return try Self.write(
            chain: chain, key: key, domain: domain, directoryURL: client.directoryURL,
            certificateDirectory: certificateDirectory)
    }

    /// Checks the downloaded `chain` against `key` and `domain`, and writes it in certbot's layout with its record.
    static func write(
        chain: [UInt8], key: PrivateKey, domain: String, directoryURL: String, certificateDirectory: String
    ) throws(ACMEFailure) -> (notBefore: Date, notAfter: Date) {
        let folder = certificateDirectory + "/" + domain
        let leaf: X509Certificate
        do {
            leaf = try X509Certificate(pemEncoded: chain)
            try key.checkMatches(leaf)
        } catch {
            throw ACMEFailure(
                .protocolViolation, "\(domain): the CA's certificate cannot be used: \(error)",
                hint: "the server orders again later")
        }
        guard leaf.covers(hostname: domain) else {
            throw ACMEFailure(
                .protocolViolation, "\(domain): the CA's certificate does not cover the name",
                hint: "the server orders again later")
        }
        do {
            try FileManager.default.createDirectory(
                atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
            // The record first: a folder with it is the server's, whatever else a crash leaves there.
            try AtomicFile.write(
                CertificateRecord(directoryURL: directoryURL, issued: Date(), names: [domain]).bytes,
                to: CertificateFile.acmeRecord.path(in: folder))
            try AtomicFile.write(
                Array(key.pemEncoded().utf8), to: CertificateFile.privateKey.path(in: folder), mode: 0o600)
            try AtomicFile.write(chain, to: CertificateFile.chain.path(in: folder))
        } catch {
            throw ACMEFailure(
                .storage, "\(domain): could not write the certificate: \(error)", url: folder,
                hint: "make the certificate folder writable by the server's user")
        }
        return (leaf.notBefore, leaf.notAfter)
    }

    private func finish(_ domain: String, _ outcome: Result<Outcome, ACMEFailure>, now: Date = Date()) {
        var issuedDomain = false
        condition.locked {
            guard var entry = state.entries[domain] else { return }
            entry.inProgress = false
            switch outcome {
            case .success(.issued(let notBefore, let notAfter)):
                state.orderCounts["valid", default: 0] += 1
                entry.failures = 0
                entry.forced = false
                entry.issuedHere = now
                entry.notAfter = notAfter
                entry.suggested = nil
                entry.nextCheck = now.addingTimeInterval(Self.renewalInfoInterval)
                entry.due = schedule.renewal(
                    domain: domain, notBefore: notBefore, notAfter: notAfter, issuedHere: now)
                // `valid` once a reload serves it (``update(domains:certificates:now:)``); until then the state
                // stays pending or renewing, and the planning waits for it.
                entry.awaitingReload = notAfter
                entry.status.nextRenewal = entry.due
                entry.status.lastError = nil
                entry.status.lastProblem = nil
                issuedDomain = true
            case .success(.rescheduled(let window, let due)):
                entry.suggested = window
                entry.nextCheck = now.addingTimeInterval(Self.renewalInfoInterval)
                entry.due = due
                entry.status.state = .valid
                entry.status.nextRenewal = entry.due
            case .failure(let failure):
                state.orderCounts["failed", default: 0] += 1
                entry.failures += 1
                entry.due = schedule.retry(failures: entry.failures, now: now, retryAfter: failure.retryAfter)
                entry.status.state = .failed
                entry.status.nextRenewal = entry.due
                entry.status.lastError = failure.about(domain).description
                entry.status.lastProblem = failure.problem?.document
                logger.error(
                    "ACME: no certificate",
                    metadata: [
                        "domain": "\(domain)", "reason": "\(failure.about(domain))",
                        "retry": "\(entry.due.map { ISO8601DateFormatter().string(from: $0) } ?? "")",
                    ])
            }
            state.entries[domain] = entry
        }
        condition.broadcast()
        if issuedDomain {
            logger.info("ACME: certificate issued", metadata: ["domain": "\(domain)"])
            issued(domain)
        }
    }
}
