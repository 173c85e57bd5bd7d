import AASACore
import AASACurl
public import AASAOpenSSL
public import Foundation
public import Logging
import Synchronization

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
public final class ACMEManager: Service, Sendable {
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

    /// Orders finished so far, by result (``ACMEOrderResult``): `aasa_acme_orders_total{result}`.
    public var orderCounts: [String: Int] {
        orders.withLock { Dictionary(uniqueKeysWithValues: $0.map { ($0.key.rawValue, $0.value) }) }
    }

    /// Every domain's certificate status, for `/status`.
    public var statuses: [String: DomainCertificateStatus] { queue.reading { $0.mapValues(\.status) } }

    /// The answers this manager's orders publish in memory: serve them (``ChallengeRoutes``).
    public let challenges: ChallengeStore
    /// Where the orders publish their answers: ``challenges``, or a webroot another server answers from.
    let responder: any ChallengeResponder
    /// The ACME client.
    public let client: ACMEClient
    private let settings: ACMESettings
    private let schedule: RenewalSchedule
    let certificateDirectory: String
    let logger: Logger
    private let issued: @Sendable (String) -> Void
    /// Every configured domain, and the workers that order and renew each one when it is due.
    private let queue: DueQueue<String, ManagedDomain>
    private let orders = Mutex<[ACMEOrderResult: Int]>([:])

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
        queue = DueQueue(
            threadNames: (0..<max(1, settings.concurrency)).map { "acme-\($0)" }, logger: logger, due: \.dueForWorker,
            claim: { _, domain, now in domain.claim(at: now) })
    }

    deinit {
        queue.stop()
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
            pollTimeout: settings.pollTimeout, profile: settings.profile,
            externalAccountBinding: settings.externalAccountBinding)
        return ACMEManager(
            settings: settings, client: client, certificateDirectory: certificateDirectory, logger: logger,
            responder: responder, issued: issued)
    }

    // MARK: Planning

    /// Plans every domain in `domains` from the certificates served now; domains no longer configured are dropped.
    public func update(domains: [String], certificates: [ServedCertificate], now: Date = Date()) {
        let coverage = CertificateNameIndex(subjectAlternativeNames: certificates.map(\.subjectAlternativeNames))
        let byFolder = Dictionary(certificates.map { ($0.folder, $0) }, uniquingKeysWith: { first, _ in first })
        var plans: [String: CertificatePlan] = [:]
        for domain in domains {
            let own = byFolder[domain].flatMap { $0.subjectAlternativeNames.covers(hostname: domain) ? $0 : nil }
            let other = coverage.firstIndex(covering: domain).map { certificates[$0] }
            plans[domain] = CertificatePlan.make(
                domain, own: own, covering: own ?? other, certificateDirectory: certificateDirectory,
                directoryURL: client.directoryURL, now: now)
        }
        queue.withItems { current in
            var entries: [String: ManagedDomain] = [:]
            for (domain, plan) in plans {
                var entry = current[domain] ?? ManagedDomain(status: plan.status)
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
            current = entries
        }
    }
    /// Runs everything due at `now` (orders, renewals, and renewal-information checks) one after the other on the
    /// calling thread (`certs acme`), and returns each domain's outcome.
    public func runDue(now: Date = Date()) -> [(domain: String, failure: ACMEFailure?)] {
        let due = queue.reading { entries in
            entries.filter { entry in entry.value.wake.map { $0 <= now } ?? false }.keys.sorted()
        }
        return due.map { domain in
            queue.withItems { $0[domain]?.inProgress = true }
            let outcome = Result { () throws(ACMEFailure) in try renewOrOrder(domain, now: now) }
            finish(domain, outcome, now: now)
            if case .failure(let failure) = outcome { return (domain, failure.about(domain)) }
            return (domain, nil)
        }
    }

    // MARK: Workers

    /// Starts the worker threads (``ACMESettings/concurrency``), which order and renew each domain when it is due.
    public func start() {
        queue.start { [weak self] domain in
            guard let self else { return }
            let outcome = Result { () throws(ACMEFailure) in try renewOrOrder(domain) }
            // An order the stop cut short is no failure of the CA's: the next start plans the domain again.
            if case .failure = outcome, queue.isStopping {
                queue.withItems { $0[domain]?.inProgress = false }
                return
            }
            finish(domain, outcome)
        }
    }

    /// The kernel's ids of the running workers, for tests that check they are gone after ``stop()``.
    var threadIDs: [Int32] { queue.threadIDs }

    /// Stops the workers and returns once they have ended: no new order starts, and an order in flight ends at its
    /// next wait for the CA (``ACMEClient/stopPolling()``) or, past it, once its certificate is written; a request
    /// in flight ends within the HTTP client's timeout.
    public func stop() {
        client.stopPolling()
        queue.stop()
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
        let entry = queue.reading { $0[domain] }
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

    private func finish(_ domain: String, _ outcome: Result<Outcome, ACMEFailure>, now: Date = Date()) {
        var issuedDomain = false
        queue.withItems { entries in
            guard var entry = entries[domain] else { return }
            entry.inProgress = false
            switch outcome {
            case .success(.issued(let notBefore, let notAfter)):
                orders.withLock { $0[.valid, default: 0] += 1 }
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
                orders.withLock { $0[.failed, default: 0] += 1 }
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
            entries[domain] = entry
        }
        if issuedDomain {
            logger.info("ACME: certificate issued", metadata: ["domain": "\(domain)"])
            issued(domain)
        }
    }
}
