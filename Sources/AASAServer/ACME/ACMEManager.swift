import AASACore
import AASACurl
public import AASAOpenSSL
public import Foundation
public import Logging
import Synchronization

/// Obtains and renews the certificates of the configured domains (`serve --acme`): after every load it is told
/// which domains exist and which certificates are served (``update(domains:certificates:now:)``), decides for
/// each domain, and runs the orders on a few worker threads (``ACMESettings/concurrency``).
///
/// - A domain whose certificate is the operator's (no ``CertificateRecord``) is never touched, nor one covered by
///   another certificate of the operator's that has not expired.
/// - A domain with no usable certificate is ordered; one whose certificate the server obtained is renewed by the
///   ``RenewalSchedule``, with the CA's renewal window (RFC 9773) when it offers one.
/// - New orders are paced to the CA's limits (``OrderPacer``, ``ACMESettings/orderRate``) and wait in a queue:
///   certificates nearest expiry first, then new domains in the order they appeared. A rate limit the CA answers pauses
///   every new order until its `Retry-After`. Renewals inside the CA's window, sent with `replaces`, are not counted.
/// - Before ordering, the worker takes the certificate's lock in the ``ACMEStorage`` and checks again that no other
///   replica has just issued it or failed it; the storage keeps the certificate where every replica serves it from.
/// - A failure leaves what is served as it is and is retried after 1 minute, 10 minutes, 100 minutes, then daily,
///   never more than 5 failed validations per name per hour. A failure of the CA's own (a server error, the CA
///   unreachable, a rate-limit pause longer than ``ACMESettings/fallback``'s `after`) places the order with the
///   fallback CA when there is one.
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

    /// Every domain's certificate status, for `/status`; a domain a wildcard certificate covers has the wildcard's.
    public var statuses: [String: DomainCertificateStatus] {
        withWildcardCoverage(queue.reading { $0.mapValues(\.currentStatus) })
    }

    /// The answers this manager's orders publish in memory: serve them (``ChallengeRoutes``).
    public let challenges: ChallengeStore
    /// Where the orders publish their answers: ``challenges``, or a webroot another server answers from.
    let responder: any ChallengeResponder
    /// The dns-01 answers (``ACMESettings/dns``), `nil` without.
    public let dns: DNSChallenges?
    /// ``dns`` with each record kept in the storage until removed.
    let recordedDNS: RecordedDNSChallenges?
    /// The ACME client of the primary CA.
    public let client: ACMEClient
    /// The client of the fallback CA (``ACMESettings/fallback``), signing with the same account key.
    let fallback: ACMEClient?
    let settings: ACMESettings
    let schedule: RenewalSchedule
    let pacer: OrderPacer
    /// Where the account, certificates, pacing and failures are kept.
    let storage: any ACMEStorage
    let logger: Logger
    let issued: @Sendable (String) -> Void
    /// Every configured domain, and the workers that order and renew each one when it is due.
    let queue: DueQueue<String, ManagedDomain>
    let orders = Mutex<[ACMEOrderResult: Int]>([:])
    /// The orders of ``orders`` validated with dns-01.
    let dnsOrders = Mutex<[ACMEOrderResult: Int]>([:])
    /// The configured domains a wildcard certificate covers, and its base name.
    private let wildcardCoverage = Mutex<[String: String]>([:])
    /// How many domains were planned so far: the next one's ``ManagedDomain/appeared``.
    private let appearances = Mutex(0)
    /// When the pacing state was last read, so `/status` reads the fleet's at most every few seconds.
    private let pacingRead = Mutex(Date.distantPast)

    /// How often a managed certificate's renewal information is asked (RFC 9773 §4.3 leaves it to clients; a CA
    /// may move the window earlier, e.g. before a mass revocation). The first check of each certificate is at a
    /// point within this interval fixed per domain, so a start with thousands of certificates does not ask for all
    /// of them at once.
    static let renewalInfoInterval: TimeInterval = 6 * 3600
    /// How long a worker leaves a domain whose lock another replica holds before it looks again.
    static let lockedElsewhereRetry: TimeInterval = 15
    /// How long every new order waits after a rate limit the CA answered without a `Retry-After`.
    static let defaultPause: TimeInterval = 15 * 60

    /// A manager for the certificates `storage` keeps (default: the folder `certificateDirectory`), publishing its
    /// answers through `responder` (default: ``challenges``); `issued` is called with the domain after each
    /// certificate is written. `fallback` is the client of the second CA, if any.
    init(
        settings: ACMESettings, client: ACMEClient, storage: any ACMEStorage, fallback: ACMEClient? = nil,
        logger: Logger, responder: (any ChallengeResponder)? = nil, issued: @escaping @Sendable (String) -> Void
    ) {
        self.settings = settings
        self.client = client
        self.fallback = fallback
        self.storage = storage
        self.logger = logger
        self.issued = issued
        // The server's own store, when it passes one, is what its routes answer from.
        let store = (responder as? ChallengeStore) ?? ChallengeStore()
        challenges = store
        self.responder = responder ?? store
        let dns = settings.dns.map { DNSChallenges(settings: $0, logger: logger) }
        self.dns = dns
        recordedDNS = dns.map { RecordedDNSChallenges(challenges: $0, storage: storage, logger: logger) }
        schedule = RenewalSchedule(
            renewBefore: settings.renewBefore, minimumRetry: settings.minimumRetry, maximumRetry: settings.maximumRetry)
        pacer = OrderPacer(rate: settings.orderRate)
        // Made once: every reload's routes answer with it.
        thumbprint = try? JSONWebKey(publicKeyOf: client.account.key).thumbprint
        queue = DueQueue(
            threadNames: (0..<max(1, settings.concurrency)).map { "acme-\($0)" }, logger: logger, due: \.dueForWorker,
            claim: { _, domain, now in domain.claim(at: now) })
    }

    /// A manager keeping its state in the certificate folder `certificateDirectory`.
    public convenience init(
        settings: ACMESettings, client: ACMEClient, certificateDirectory: String, logger: Logger,
        responder: (any ChallengeResponder)? = nil, issued: @escaping @Sendable (String) -> Void
    ) {
        self.init(
            settings: settings, client: client,
            storage: FolderACMEStorage(certificateDirectory: certificateDirectory, logger: logger),
            logger: logger, responder: responder, issued: issued)
    }

    deinit {
        queue.stop()
    }

    /// A manager for `settings` keeping its state in the certificate folder (`<certificateDirectory>/acme/` for the
    /// account, created on first use), with clients to the CA (and the fallback CA) over libcurl.
    public static func make(
        settings: ACMESettings, certificateDirectory: String, logger: Logger,
        responder: (any ChallengeResponder)? = nil, issued: @escaping @Sendable (String) -> Void = { _ in }
    ) throws(ACMEFailure) -> ACMEManager {
        try make(
            settings: settings, storage: FolderACMEStorage(certificateDirectory: certificateDirectory, logger: logger),
            logger: logger,
            responder: responder, issued: issued)
    }

    /// A manager for `settings` keeping its state in `storage`.
    static func make(
        settings: ACMESettings, storage: any ACMEStorage, logger: Logger, responder: (any ChallengeResponder)? = nil,
        issued: @escaping @Sendable (String) -> Void = { _ in }
    ) throws(ACMEFailure) -> ACMEManager {
        for (file, option) in [
            (settings.caFile, "--acme-ca-file"), (settings.fallback?.caFile, "--acme-fallback-ca-file"),
        ] {
            guard let file else { continue }
            guard case .success = ConfinedFile.read(file, within: .anywhere, maximumBytes: 1 << 20) else {
                throw ACMEFailure(
                    .configuration, "the ACME CA file cannot be read", url: file,
                    hint: "pass a readable PEM file of the ACME server's CA with \(option)")
            }
        }
        let account = try storage.account(email: settings.email, agreesToTerms: settings.agreesToTerms)
        func client(
            _ directory: String, caFile: String?, profile: String?, binding: ExternalAccountBinding?,
            options: ACMEClient.OptionNames
        ) throws(ACMEFailure) -> ACMEClient {
            var http = HTTPClient(trustAnchors: caFile)
            http.userAgent = "aasa-server (ACME)"
            return try ACMEClient(
                directoryURL: directory, account: account, transport: CurlACMETransport(client: http),
                pollTimeout: settings.pollTimeout, profile: profile, externalAccountBinding: binding, options: options)
        }
        let primary = try client(
            settings.directoryURL, caFile: settings.caFile, profile: settings.profile,
            binding: settings.externalAccountBinding, options: .primary)
        // The profile names one of the primary CA's; the fallback issues its default.
        let fallback = try settings.fallback.map { fallback throws(ACMEFailure) in
            try client(
                fallback.directoryURL, caFile: fallback.caFile, profile: nil, binding: fallback.externalAccountBinding,
                options: .fallback)
        }
        return ACMEManager(
            settings: settings, client: primary, storage: storage, fallback: fallback, logger: logger,
            responder: responder, issued: issued)
    }

    /// The thumbprint of the account key: the second half of every http-01 answer, whichever replica ordered
    /// (``StatelessChallenges``).
    public let thumbprint: String?

    /// The directory URLs the server orders from: the primary CA's, then the fallback's.
    var directories: [String] { [client.directoryURL] + (fallback.map { [$0.directoryURL] } ?? []) }

    // MARK: Planning

    /// Plans every domain in `domains` from the certificates served now; domains no longer configured are dropped.
    /// A domain a wildcard certificate covers (``DNSChallengeSettings/wildcards``) is not ordered for itself: the
    /// wildcard's base name is planned instead, for one certificate of `base` and `*.base`.
    public func update(domains: [String], certificates: [ServedCertificate], now: Date = Date()) {
        storage.refresh()
        let coverage = CertificateNameIndex(subjectAlternativeNames: certificates.map(\.subjectAlternativeNames))
        let byFolder = Dictionary(certificates.map { ($0.folder, $0) }, uniquingKeysWith: { first, _ in first })
        let wildcards = dns?.settings.wildcards ?? []
        var covered: [String: String] = [:]
        for domain in domains {
            if let base = dns?.settings.wildcard(covering: domain) { covered[domain] = base }
        }
        wildcardCoverage.withLock { $0 = covered }
        var plans: [String: CertificatePlan] = [:]
        for base in wildcards {
            // Only a certificate of both names is the wildcard's own: one for the base alone is replaced.
            let own = byFolder[base].flatMap {
                $0.subjectAlternativeNames.dnsNames.contains("*." + base)
                    && $0.subjectAlternativeNames.covers(hostname: base) ? $0 : nil
            }
            plans[base] = CertificatePlan.make(
                base, own: own, covering: own, storage: storage, directories: directories, now: now)
        }
        for domain in domains where covered[domain] == nil {
            let own = byFolder[domain].flatMap { $0.subjectAlternativeNames.covers(hostname: domain) ? $0 : nil }
            let other = coverage.firstIndex(covering: domain).map { certificates[$0] }
            plans[domain] = CertificatePlan.make(
                domain, own: own, covering: own ?? other, storage: storage, directories: directories, now: now)
        }
        queue.withItems { current in
            var entries: [String: ManagedDomain] = [:]
            let appearing = plans.keys.filter { current[$0] == nil }.sorted()
            var next = appearances.withLock { count in
                defer { count += appearing.count }
                return count
            }
            for domain in appearing {
                current[domain] = ManagedDomain(status: plans[domain]!.status, appeared: next)
                next += 1
            }
            for (domain, plan) in plans {
                guard var entry = current[domain] else { continue }
                // A load that began before the new certificate was written still sees the old one: keep waiting.
                // One that no load serves within ten minutes (refused when imported) is planned again as it is.
                if let awaited = entry.awaitingReload {
                    let waited = entry.issuedHere.map { now.timeIntervalSince($0) } ?? 601
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
                        entry.status.issuer = plan.status.issuer
                    }
                    entry.notAfter = plan.notAfter
                    entry.recordIssued = plan.record?.issued
                    entry.forced = plan.fromOtherCA
                    if let served = plan.served, entry.due != nil, entry.failures == 0, !plan.fromOtherCA {
                        entry.due = schedule.renewal(
                            domain: domain, notBefore: served.notBefore, notAfter: served.notAfter,
                            suggested: entry.suggested, issuedHere: entry.issuedHere)
                        entry.status.nextRenewal = entry.due
                    }
                }
                entry.challenge = challenge(of: domain)
                entries[domain] = entry
            }
            lineUp(&entries, now: now)
            current = entries
        }
    }

    /// How the CA validates `domain`: `dns-01` for the names ``ACMESettings/dns`` answers, else `http-01`.
    func challenge(of domain: String) -> String { dns?.answers(domain) == true ? "dns-01" : "http-01" }

    /// The names ordered for `domain`'s certificate: `domain` and `*.domain` for a wildcard's base, else `domain`.
    func orderedNames(_ domain: String) -> [String] {
        dns?.settings.isWildcardBase(domain) == true ? [domain, "*." + domain] : [domain]
    }

    /// The statuses of the configured domains a wildcard certificate covers: its status, naming it.
    private func withWildcardCoverage(_ statuses: [String: DomainCertificateStatus]) -> [String:
        DomainCertificateStatus]
    {
        let covered = wildcardCoverage.withLock { $0 }
        guard !covered.isEmpty else { return statuses }
        var all = statuses
        for (domain, base) in covered {
            guard var status = statuses[base] else { continue }
            status.wildcard = "*." + base
            all[domain] = status
        }
        return all
    }

    /// Gives every order waiting for its turn its place and time: certificates nearest expiry first, then new
    /// domains in the order they appeared; the n-th is placed when the bucket has earned its n-th token, after any
    /// pause. Every other entry leaves the queue.
    func lineUp(_ entries: inout [String: ManagedDomain], now: Date) {
        let state = pacer.refilled(storage.lastPacing ?? PacingState(rate: settings.orderRate, now: now), now: now)
        let waiting = entries.filter { $0.value.waitsForTurn(now: now, exempt: $0.value.isExemptRenewal(now: now)) }
            .sorted { left, right in
                let (a, b) = (left.value, right.value)
                if a.status.expiry != b.status.expiry {
                    return (a.status.expiry ?? .distantFuture) < (b.status.expiry ?? .distantFuture)
                }
                return (a.appeared, left.key) < (b.appeared, right.key)
            }
        var queued: Set<String> = []
        for (index, element) in waiting.enumerated() {
            queued.insert(element.key)
            // A microsecond apart, so workers take equal slots in the queue's order.
            let slot = pacer.slot(index + 1, state, now: now).addingTimeInterval(Double(index) * 1e-6)
            entries[element.key]?.slot = slot
            entries[element.key]?.status.queuePosition = index + 1
        }
        for (domain, entry) in entries where entry.slot != nil && !queued.contains(domain) {
            entries[domain]?.slot = nil
            entries[domain]?.status.queuePosition = nil
        }
    }

    /// Runs everything due at `now` (orders, renewals, and renewal-information checks) one after the other on the
    /// calling thread (`certs acme`), and returns each domain's outcome.
    public func runDue(now: Date = Date()) -> [(domain: String, failure: ACMEFailure?)] {
        recordedDNS?.removeLeftovers()
        let due = queue.reading { entries in
            entries.filter { entry in entry.value.wake.map { $0 <= now } ?? false }.keys.sorted()
        }
        return due.map { domain in
            queue.withItems { $0[domain]?.inProgress = true }
            let outcome = turn(domain, now: now, explicit: true)
            finish(domain, outcome, now: now)
            switch outcome {
            case .failed(let failure, _), .paused(_, let failure), .storageUnavailable(_, let failure):
                return (domain, failure.about(domain))
            case .awaitingDelegation(let delegation, _):
                return (
                    domain,
                    ACMEFailure(
                        .dns, "\(domain): dns-01 cannot be answered: \(delegation.message)",
                        hint: delegation.fix + "; then run this again")
                )
            case .deferred(let history):
                return (
                    domain,
                    ACMEFailure(
                        .challenge,
                        "\(domain): validation failed \(ACMEHistory.validationFailuresPerHour) times within the hour; "
                            + "the CA allows the next attempt at "
                            + ISO8601DateFormatter().string(from: history.validationAllowed(now: now)),
                        hint: history.lastError ?? "fix what the last failure names, then run it again")
                )
            case .waiting(let until):
                return (
                    domain,
                    ACMEFailure(
                        .configuration,
                        "\(domain): the order rate allows the next new order at \(ISO8601DateFormatter().string(from: until))",
                        hint: "run it again then, or raise --acme-order-rate if the CA allows more"
                    )
                )
            default: return (domain, nil)
            }
        }
    }

    // MARK: Workers

    /// Starts the worker threads (``ACMESettings/concurrency``), which order and renew each domain when it is due.
    public func start() {
        guard let recordedDNS else { return startWorkers() }
        // The records a crash left go first, on a thread of their own: a DNS server slow to answer delays the orders,
        // never the start.
        Thread.detachNewThread { [weak self] in
            recordedDNS.removeLeftovers { self?.stopped.withLock { $0 } ?? true }
            guard let self else { return }
            stopped.withLock { stopped in if !stopped { startWorkers() } }
        }
    }

    /// Set by ``stop()``: workers started late (after the leftover records) do not start once it is.
    private let stopped = Mutex(false)

    private func startWorkers() {
        queue.start { [weak self] domain in
            guard let self else { return }
            let outcome = turn(domain, now: Date())
            // An order the stop cut short is no failure of the CA's: the next start plans the domain again.
            if case .failed = outcome, queue.isStopping {
                queue.withItems { $0[domain]?.inProgress = false }
                return
            }
            finish(domain, outcome, now: Date())
        }
    }

    /// The kernel's ids of the running workers, for tests that check they are gone after ``stop()``.
    var threadIDs: [Int32] { queue.threadIDs }

    /// Stops the workers and returns once they have ended: no new order starts, and an order in flight ends at its
    /// next wait for the CA (``ACMEClient/stopPolling()``) or, past it, once its certificate is written; a request
    /// in flight ends within the HTTP client's timeout.
    public func stop() {
        stopped.withLock { $0 = true }
        dns?.stop()
        client.stopPolling()
        fallback?.stopPolling()
        queue.stop()
    }

    // MARK: Queue and retries

    /// Every domain's status, the order counts and the queue, read together (`/status`, `/metrics`, the dashboard):
    /// the fleet's pacing is read again when it is more than a few seconds old (another replica may have paused the
    /// fleet or taken tokens), and every waiting order gets its place and time from it.
    public var figures: ACMEFigures {
        let now = Date()
        let stale = pacingRead.withLock { read in
            defer { if now.timeIntervalSince(read) >= 5 { read = now } }
            return now.timeIntervalSince(read) >= 5
        }
        if stale { _ = try? storage.pacing { _ in () } }
        queue.withItems { lineUp(&$0, now: now) }
        let state = pacer.refilled(storage.lastPacing ?? PacingState(rate: settings.orderRate, now: now), now: now)
        let (statuses, last, pending) = queue.reading { entries in
            (
                entries.mapValues(\.currentStatus), entries.values.compactMap(\.slot).max(),
                entries.values.count { $0.slot != nil }
            )
        }
        let queue = ACMEQueueStatus(
            pending: pending, ratePerHour: settings.orderRate?.perHour, pausedUntil: state.pausedUntil,
            pauseReason: state.pauseReason,
            etaSeconds: last.map { CheckedNumber.clamped($0.timeIntervalSince(now).rounded(.up), to: 0...Int.max) })
        var figures = ACMEFigures(statuses: withWildcardCoverage(statuses), orders: orderCounts, queue: queue)
        if let dns {
            var delegations: [DNSDelegation.State: Int] = [:]
            for status in statuses.values {
                if let state = status.delegation?.state { delegations[state, default: 0] += 1 }
            }
            figures.dns = ACMEFigures.DNSFigures(
                orders: dnsOrders.withLock { Dictionary(uniqueKeysWithValues: $0.map { ($0.key.rawValue, $0.value) }) },
                challenges: dns.figures, delegations: delegations)
        }
        return figures
    }

    /// The queue of new orders: how many wait, at what rate, the pause, and when the last is expected.
    public var queueStatus: ACMEQueueStatus { figures.queue }

    /// Makes `domain`'s order due now (the admin route `POST /acme/retry` and the dashboard's button), unless the name
    /// failed validation 5 times within the hour.
    public func retryNow(_ requested: String, now: Date = Date()) -> ACMERetryOutcome {
        let domain = wildcardCoverage.withLock { $0[requested] } ?? requested
        let exists = queue.reading { $0[domain] != nil }
        guard exists else { return .unknownDomain }
        let history = storage.history(of: domain)
        if let history, history.validationAllowed(now: now) > now {
            return .tooManyFailures(until: history.validationAllowed(now: now))
        }
        let outcome = queue.withItems { entries -> ACMERetryOutcome in
            guard var entry = entries[domain] else { return .unknownDomain }
            guard entry.status.source == .acme else {
                return .notManaged(
                    reason: entry.status.lastError ?? "\(domain) is served with the operator's certificate, which the "
                        + "server never replaces")
            }
            if entry.inProgress { return .inProgress }
            entry.due = now
            entry.nextCheck = nil
            entry.awaitingReload = nil
            entries[domain] = entry
            lineUp(&entries, now: now)
            return .queued(position: entries[domain]?.status.queuePosition)
        }
        // The next attempt is now, on whichever replica takes it.
        if case .queued = outcome, var history {
            history.nextAttempt = nil
            storage.save(history: history, of: domain)
        }
        return outcome
    }
}
