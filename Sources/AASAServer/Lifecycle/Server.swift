public import AASACore
import AASAMicroHTTPD
import Foundation
public import Logging
import Synchronization

/// The running server: public listeners (HTTPS with per-domain certificates, optional plain HTTP) and the
/// admin listener, all serving immutable snapshots that a reload replaces whole.
public final class Server: Sendable {
    /// Why the server could not start.
    public struct StartupError: Error, Sendable, CustomStringConvertible {
        /// The findings that stopped it (config errors exit with status 2).
        public var diagnostics: [Diagnostic]
        /// Whether the cause is the configuration (as opposed to the system, e.g. a port in use).
        public var isConfigurationError: Bool

        /// One finding per line.
        public var description: String { diagnostics.map(\.description).joined(separator: "\n") }
    }

    /// The running parts: ``start()`` sets them, ``stop()`` takes them away.
    private struct Running {
        var https: HTTPListener?
        var http: HTTPListener?
        var admin: HTTPListener?
        var watcher: ConfigWatcher?
    }

    /// What the server was started with.
    public let configuration: ServerConfiguration
    let logger: Logger
    private let running = Mutex(Running())
    /// Counts requests and keeps the fetch log for `/metrics`, `/fetches`, the access log and `--dev`.
    public let recorder: TrafficRecorder
    /// Loads by result for `/metrics`, and the latest ones, newest first, for `/status`.
    private let reloads = Mutex<(counts: [String: Int], history: [ServerStatus.ReloadRecord])>(([:], []))
    /// How many loads `/status` lists.
    static let reloadHistoryCapacity = 50
    /// What the loads decided. Start and reload hold this lock for the whole load, so reloads from SIGHUP
    /// and from the watcher never interleave and always build on the previous one's last good versions.
    private let catalog = Mutex(Catalog())
    /// Signatures kept across reloads, so an unchanged domain keeps its exact signed bytes.
    private let signatureCache = SignatureCache()
    /// Sockets bound by ``bindPorts()`` before the start, by listener (`https`, `http`, `admin`).
    private let boundSockets = Mutex<[String: ListeningSockets]>([:])
    /// When the pending reload for a removal grace is due, if one is scheduled (``scheduleRemovals(_:)``).
    private let removalReload = Mutex<Date?>(nil)
    /// The certificates of domains waiting for their first ACME certificate.
    let temporaryCertificates = TemporaryCertificates()
    /// Obtains and renews certificates (`--acme`), from ``start()`` on.
    private let acmeManager = Mutex<ACMEManager?>(nil)

    /// The background CDN check, while the server runs with ``ServerConfiguration/cdnCheck``.
    private let cdnMonitor = Mutex<CDNMonitor?>(nil)
    /// Compares each new version of a domain with the one it replaced, after the reload published it; made by the
    /// first reload that has one to compare.
    private let comparer = Mutex<ChangeComparer?>(nil)

    /// The ACME manager, while the server runs with ``ServerConfiguration/acme``.
    public var acme: ACMEManager? { acmeManager.withLock { $0 } }

    /// Creates a server; nothing is loaded or bound until ``start()``.
    /// `recorder` observes the public listeners; by default it counts only (no access log, no printout).
    public init(configuration: ServerConfiguration, logger: Logger, recorder: TrafficRecorder = TrafficRecorder()) {
        self.configuration = configuration
        self.logger = logger
        self.recorder = recorder
    }

    /// What the admin routes read at request time.
    var live: AdminRoutes.Live {
        var acmeFigures: (@Sendable () -> (statuses: [String: DomainCertificateStatus], orders: [String: Int]))?
        if configuration.acme != nil {
            acmeFigures = { [weak self] in self?.acmeFigures ?? ([:], [:]) }
        }
        var cdnFigures: (@Sendable () -> [String: (apple: CDNObservation?, google: CDNObservation?)])?
        if configuration.cdnCheck != nil {
            cdnFigures = { [weak self] in self?.cdnMonitor.withLock { $0 }?.observations ?? [:] }
        }
        return AdminRoutes.Live(
            recorder: recorder,
            reloads: { [weak self] in self?.reloads.withLock { $0.counts } ?? [:] },
            reloadHistory: { [weak self] in self?.reloads.withLock { $0.history } ?? [] },
            listeners: { [weak self] in
                guard let self else { return [:] }
                let listeners = running.withLock { [("https", $0.https), ("http", $0.http)] }
                return Dictionary(
                    uniqueKeysWithValues: listeners.compactMap { name, listener in
                        listener.map {
                            (
                                name,
                                AdminRoutes.ListenerFigures(
                                    openConnections: $0.openConnections, headerTimeouts: $0.headerTimeouts)
                            )
                        }
                    })
            },
            acme: acmeFigures, cdn: cdnFigures)
    }

    /// ACME's certificate status of each domain and its order counts, for `/status` and `/metrics`.
    private var acmeFigures: (statuses: [String: DomainCertificateStatus], orders: [String: Int]) {
        guard let acme else { return ([:], [:]) }
        return (acme.statuses, acme.orderCounts)
    }

    /// Records a finished load for `/metrics` and `/status`, and tells the recorder which domains are served.
    private func recordLoad(_ catalog: Catalog, took duration: Duration, changed: [String]) {
        if let outcome = catalog.status?.lastReload {
            let record = ServerStatus.ReloadRecord(
                time: outcome.time, trigger: outcome.trigger, result: outcome.result,
                seconds: duration.timeInterval,
                errors: outcome.errors.count, warnings: outcome.warnings.count, changed: changed)
            reloads.withLock { reloads in
                reloads.counts[outcome.result.rawValue, default: 0] += 1
                reloads.history.insert(record, at: 0)
                if reloads.history.count > Self.reloadHistoryCapacity { reloads.history.removeLast() }
            }
        }
        recorder.setDomains(catalog.published)
    }

    deinit {
        running.withLock { $0.watcher }?.stop()
        comparer.withLock { $0 }?.stop()
    }

    /// The bound HTTPS port, if HTTPS is on and started.
    public var httpsPort: UInt16? { running.withLock { $0.https?.port } }
    /// The bound plain HTTP port, if on and started.
    public var httpPort: UInt16? { running.withLock { $0.http?.port } }
    /// The bound admin port, if on and started.
    public var adminPort: UInt16? { running.withLock { $0.admin?.port } }
    /// The domains currently published.
    public var publishedDomains: [String] { catalog.withLock { $0.published.keys }.sorted() }
    /// The services (``AssociationFile/services``) each published domain's served file declares, by domain: what
    /// `serve --dev` prints entitlement lines for.
    public var publishedServices: [String: [String]] {
        let published = catalog.withLock { $0.published }
        return published.dictionary.mapValues {
            AssociationFile.parse(SourceText(name: "", bytes: $0.associationFile)).file?.services ?? []
        }
    }
    /// What is served and what the last load found (also served as the admin listener's `/status`).
    public var status: ServerStatus? { catalog.withLock { $0.status } }
    /// The public routes being served: the last reload's version, whose ``SiteRoutes/preparedResponses`` are
    /// those of the domains it rebuilt.
    var siteRoutes: SiteRoutes? { catalog.withLock { $0.routes?.site } }
    /// The SNI table being served.
    var certificateTable: CertificateTable? { catalog.withLock { $0.certificates.table } }
    /// The file watcher, while the server runs with ``ServerConfiguration/watchForChanges``.
    var watcher: ConfigWatcher? { running.withLock { $0.watcher } }

    /// Binds every configured listener's port now, before anything is loaded, for ``start()`` to serve on: a process
    /// started as root binds port 443 here, then drops its privileges (`serve --user`) before it reads one file.
    public func bindPorts() throws(StartupError) {
        var bound: [String: ListeningSockets] = [:]
        do {
            for (name, port, address) in [
                ("https", configuration.httpsPort, configuration.bindAddress),
                ("http", configuration.httpPort, configuration.bindAddress),
                ("admin", configuration.adminPort, configuration.adminAddress),
            ] {
                guard let port else { continue }
                bound[name] = try ListeningSockets(
                    listenerConfiguration(port: port, address: address, tls: nil, observed: name != "admin"))
            }
        } catch {
            throw StartupError(
                diagnostics: [Diagnostic(.error, rule: .listener, error.reason)], isConfigurationError: false)
        }
        boundSockets.withLock { $0 = bound }
    }

    /// Loads every domain and certificate, starts the listeners and, if configured, the file watcher.
    ///
    /// Every domain and certificate that loads is served; the others are logged, listed on `/status` and `/readyz`,
    /// and counted in `/metrics`, so one tenant's mistake (or a signing certificate that expired while the server
    /// was down) never keeps the other domains offline. The start fails only when no domain at all can be served,
    /// or, with ``ServerConfiguration/refusesToStartWithErrors``, on any error.
    public func start() throws(StartupError) {
        try startACME()
        let clock = ContinuousClock()
        let loadStarted = clock.now
        let now = Date()
        // Each folder is watched just before it is read, so a change made while the server starts is not missed;
        // then the entries the load did not read.
        let watcher = configuration.watchForChanges ? makeWatcher() : nil
        let load = self.load(after: Catalog(), at: now, watching: watcher)
        // The entries the load did not read are watched on another thread while this one takes the load in; the
        // watcher starts once they are, and a start that fails waits for them too.
        let remaining = DispatchGroup()
        if let watcher { DispatchQueue.global().async(group: remaining) { watcher.watchRemainingEntries() } }
        defer { remaining.wait() }
        let loaded: [LoadedDomain]
        do {
            loaded = try load.domains.get()
        } catch {
            throw StartupError(diagnostics: [error], isConfigurationError: true)
        }
        let diagnostics = loaded.flatMap(\.diagnostics)
        // A certificate folder that fails leaves its names on the default certificate, as on reload; the domains
        // decide whether the start goes on.
        guard !configuration.refusesToStartWithErrors || !diagnostics.hasErrors else {
            throw StartupError(diagnostics: diagnostics.errors, isConfigurationError: true)
        }
        if loaded.isEmpty {
            logger.warning(
                "no domain folders found; every request will get 404",
                metadata: ["config": "\(configuration.configDirectory)"])
        }
        var catalog = Catalog(shard: configuration.shard)
        _ = catalog.apply(load, trigger: .start, removalGrace: configuration.removalGrace)
        guard loaded.isEmpty || !catalog.published.isEmpty else {
            throw StartupError(
                diagnostics: diagnostics.errors + [
                    Diagnostic(
                        .error, rule: .noDomainServed,
                        "none of the \(loaded.count) domain folders in '\(configuration.configDirectory)' can be served",
                        file: configuration.configDirectory, hint: "fix the errors above")
                ], isConfigurationError: true)
        }
        if let (_, certificateDiagnostics) = load.certificates, catalog.certificates.table == nil {
            throw StartupError(diagnostics: certificateDiagnostics.errors, isConfigurationError: true)
        }
        log(loaded)

        var started = Running(watcher: watcher)
        do {
            // One snapshot for both public listeners: its native responses are built once between them.
            let (site, siteSnapshot, snapshot, adminRoutes) = try routes(for: catalog, changed: nil)
            catalog.routes = (site, siteSnapshot)
            let bound = boundSockets.withLock { bound in
                defer { bound = [:] }
                return bound
            }
            if let port = configuration.httpsPort, let table = catalog.certificates.table {
                var tls = TLSConfiguration(certificates: table)
                tls.sessionTicketLifetime = configuration.sessionTicketLifetime
                var listener = listenerConfiguration(
                    port: port, address: configuration.bindAddress, tls: tls, observed: true)
                listener.boundSockets = bound["https"]
                started.https = try HTTPListener(configuration: listener, snapshot: snapshot)
            }
            if let port = configuration.httpPort {
                var listener = listenerConfiguration(
                    port: port, address: configuration.bindAddress, tls: nil, observed: true)
                listener.boundSockets = bound["http"]
                // Behind a TLS-terminating proxy: the proxy is one address for all its clients, and names them.
                listener.perIPConnectionLimit =
                    configuration.httpMaxConnectionsPerIP ?? configuration.maxConnectionsPerIP
                listener.trustedProxies = configuration.trustedProxies
                listener.forwardedClientLimit = configuration.maxConnectionsPerIP
                started.http = try HTTPListener(configuration: listener, snapshot: snapshot)
            }
            if let port = configuration.adminPort {
                var listener = listenerConfiguration(port: port, address: configuration.adminAddress, tls: nil)
                listener.boundSockets = bound["admin"]
                started.admin = try HTTPListener(configuration: listener, routes: adminRoutes)
            }
        } catch {
            [started.https, started.http, started.admin].forEach { $0?.stop(timeout: .zero) }
            throw StartupError(
                diagnostics: [Diagnostic(.error, rule: .listener, (error as? HTTPListenerError)?.reason ?? "\(error)")],
                isConfigurationError: false)
        }
        self.catalog.withLock { $0 = catalog }
        recordLoad(catalog, took: clock.now - loadStarted, changed: [])
        running.withLock { $0 = started }
        FreedMemory.release()
        for listener in [("https", started.https), ("http", started.http), ("admin", started.admin)] {
            if let port = listener.1?.port {
                logger.info("listening", metadata: ["listener": "\(listener.0)", "port": "\(port)"])
            }
        }
        // The counts, not the names: with thousands of domains one line listing them all helps nobody; the failed
        // ones were logged with their diagnostics above and are named on /readyz and /status.
        logger.info(
            "serving",
            metadata: [
                "domains": "\(catalog.published.count)", "failed": "\(loaded.count - catalog.published.count)",
                "seconds": "\(Self.seconds(clock.now - loadStarted))",
            ])
        if let watcher {
            remaining.wait()
            watcher.start()
            logger.info("watching for changes", metadata: ["folders": "\(watcher.roots.joined(separator: ","))"])
        }
        if let settings = configuration.cdnCheck {
            // What each domain serves now; the monitor knows since when (the reloads that changed it).
            let monitor = CDNMonitor(settings: settings, logger: logger) { [weak self] domain in
                self?.catalog.withLock { catalog in
                    catalog.published[domain].map {
                        CDNMonitor.Served(
                            association: $0.associationFile, assetLinks: $0.assetLinks,
                            since: nil)
                    }
                }
            }
            monitor.update(domains: catalog.published.keys.sorted(), changed: [], now: now)
            monitor.start()
            cdnMonitor.withLock { $0 = monitor }
        }
        if let acme {
            plan(acme, catalog, at: now)
            acme.start()
            logger.info("ACME: managing certificates", metadata: ["ca": "\(acme.client.directoryURL)"])
        }
    }

    /// With ``ServerConfiguration/acme``: checks that the CA can reach the challenge answers (an HTTP listener is
    /// on) and makes the manager, reading or creating the account.
    private func startACME() throws(StartupError) {
        guard let settings = configuration.acme else { return }
        func failure(_ message: String, hint: String) -> StartupError {
            StartupError(
                diagnostics: [Diagnostic(.error, rule: .acmeSetup, message, hint: hint)], isConfigurationError: true)
        }
        guard configuration.httpPort != nil else {
            throw failure(
                "--acme needs the plain HTTP listener: the CA validates each domain at http://<domain>/.well-known/acme-challenge/",
                hint: "add --http-port 80 (or a port that port 80 is mapped to)")
        }
        guard configuration.httpsPort != nil else {
            throw failure("--acme obtains certificates for HTTPS, which is off", hint: "drop --https-port 0")
        }
        do {
            let manager = try ACMEManager.make(
                settings: settings, certificateDirectory: configuration.certificateDirectory, logger: logger
            ) { [weak self] _ in
                // The watcher sees the new files and folds a burst of issuances into one reload; without it, reload
                // now.
                guard let self, watcher == nil else { return }
                reload(trigger: .certificateIssued)
            }
            acmeManager.withLock { $0 = manager }
        } catch {
            throw failure(error.message + (error.url.map { " (\($0))" } ?? ""), hint: error.hint)
        }
    }

    /// Tells the ACME manager the domains and certificates `catalog` holds.
    private func plan(_ acme: ACMEManager, _ catalog: Catalog, at now: Date) {
        acme.update(
            domains: catalog.loaded.keys,
            certificates: catalog.certificates.served.values.map {
                ACMEManager.ServedCertificate(
                    folder: $0.folderName, subjectAlternativeNames: $0.subjectAlternativeNames, notBefore: $0.notBefore,
                    notAfter: $0.notAfter)
            }, now: now)
    }

    /// Serves until SIGTERM or SIGINT, reloading on SIGHUP, then stops gracefully (requests in flight get 4 s). Call it
    /// on the main thread after ``Signals/block()`` and ``start()``.
    public func runUntilStopped() {
        while true {
            switch Signals.wait() {
            case .reload:
                logger.info("SIGHUP: reloading")
                reload(trigger: .signal)
            case .stop:
                logger.info("stopping")
                stop(timeout: .seconds(4))
                logger.info("stopped")
                return
            }
        }
    }

    /// Stops the file watcher, stops accepting, lets in-flight requests finish within `timeout`, and releases
    /// the ports. Returns when the watcher's and libmicrohttpd's threads have ended.
    public func stop(timeout: Duration = .seconds(5)) {
        let stopping = running.withLock { running -> Running in
            defer { running = Running() }
            return running
        }
        // First the watcher and ACME, so no reload starts while the listeners go away; a reload in progress finishes.
        stopping.watcher?.stop()
        acme?.stop()
        cdnMonitor.withLock { $0 }?.stop()
        comparer.withLock { $0 }?.stop()
        [stopping.https, stopping.http, stopping.admin].compactMap { $0 }.forEach { $0.stop(timeout: timeout) }
    }

    /// Reloads configs and certificates: each domain that loads cleanly is republished, a domain that
    /// fails keeps its last good version, and so does a certificate folder; certificates change for new
    /// connections only. Reads every folder, comparing each with its stamps; only what changed is republished.
    /// Returns every finding of the load.
    ///
    /// Safe to call from any thread; concurrent reloads run one after the other.
    @discardableResult
    public func reload(trigger: ReloadTrigger = .manual) -> [Diagnostic] {
        catalog.withLock { catalog in reload(&catalog, scope: .everything, trigger: trigger) }
    }

    /// Reloads the folders the file watcher saw change (``FolderChanges``): every folder when it cannot tell.
    func reload(_ changes: FolderChanges, trigger: ReloadTrigger = .fileChange) {
        catalog.withLock { catalog in _ = reload(&catalog, scope: LoadScope(changes), trigger: trigger) }
    }

    private func reload(_ catalog: inout Catalog, scope: LoadScope, trigger: ReloadTrigger) -> [Diagnostic] {
        let clock = ContinuousClock()
        let reloadStarted = clock.now
        let load = self.load(after: catalog, scope: scope, at: Date())
        switch load.domains {
        case .success(let loaded):
            log(loaded)
        case .failure(let error):
            logger.error(
                "reload failed; keeping the current configuration", metadata: ["diagnostic": "\(error.description)"])
        }
        let transition = catalog.apply(load, trigger: trigger, removalGrace: configuration.removalGrace)
        publish(&catalog, changed: transition.changed, certificatesChanged: transition.certificatesChanged)
        // What each new version does to URLs (``DomainChange``), worked out once it is published, off this path.
        if !transition.compare.isEmpty { comparisons().enqueue(transition.compare) }
        recordLoad(catalog, took: clock.now - reloadStarted, changed: transition.changed)
        scheduleRemovals(catalog)
        if let acme { plan(acme, catalog, at: load.time) }
        let published = catalog.published
        cdnMonitor.withLock { $0 }?.update(
            changed: transition.changed, isServed: { published.contains($0) }, now: load.time)
        if scope.domains == nil { FreedMemory.release() }
        logger.info(
            "reload",
            metadata: [
                "trigger": "\(trigger.rawValue)", "result": "\(catalog.status?.lastReload.result.rawValue ?? "")",
                "changed": "\(transition.changed.joined(separator: ","))",
                "errors": "\(transition.diagnostics.errors.count)",
                "seconds": "\(Self.seconds(clock.now - reloadStarted))",
            ])
        return transition.diagnostics
    }

    /// The comparer, made on first use.
    private func comparisons() -> ChangeComparer {
        comparer.withLock { comparer in
            if let comparer { return comparer }
            let made = ChangeComparer { [weak self] job, diff in self?.record(job, diff) }
            comparer = made
            return made
        }
    }

    /// Takes in a comparison the comparer finished: the domain's last change on `/status` and the dashboard from now
    /// on (the admin routes are made anew with it), and a `domain changed` log line, unless a newer version of the
    /// domain was published meanwhile (its own comparison follows) or the domain is gone.
    private func record(_ job: ChangeComparer.Job, _ diff: DomainDiff) {
        let kept = catalog.withLock { catalog in
            guard catalog.record(job, diff) else { return false }
            if let admin = running.withLock({ $0.admin }) {
                do {
                    try admin.replaceRoutes(adminRoutes(for: catalog))
                } catch {
                    logger.error("could not publish a domain's last change", metadata: ["reason": "\(error)"])
                }
            }
            return true
        }
        guard kept else { return }
        logger.info("domain changed", metadata: ["domain": "\(job.new.domain)", "summary": "\(diff.summary)"])
    }

    /// Schedules a reload for when the earliest removal grace of `catalog` ends, so a domain whose folder stays gone
    /// is unpublished then even when nothing else changes. One reload is pending at a time; it schedules the next.
    private func scheduleRemovals(_ catalog: Catalog) {
        guard let earliest = catalog.removedSince.values.min() else { return }
        let due = earliest.addingTimeInterval(configuration.removalGrace.timeInterval)
        let schedule = removalReload.withLock { pending -> Bool in
            if let pending, pending <= due { return false }
            pending = due
            return true
        }
        guard schedule else { return }
        let delay = max(0, due.timeIntervalSinceNow) + 0.05
        DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [weak self] in
            guard let self else { return }
            removalReload.withLock { $0 = nil }
            guard running.withLock({ $0.https != nil || $0.http != nil }) else { return }
            reload(trigger: .removalGrace)
        }
    }

    /// A duration in seconds with millisecond precision, for the logs (`0.412`).
    private static func seconds(_ duration: Duration) -> String {
        let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        let fraction = String(milliseconds % 1000)
        return "\(milliseconds / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }

    /// Swaps the catalog's routes (the domains in `changed` rebuilt) and certificates into the running listeners,
    /// and keeps the routes in the catalog for the next reload to build on.
    private func publish(_ catalog: inout Catalog, changed: [String], certificatesChanged: Bool) {
        let listeners = running.withLock { (https: $0.https, http: $0.http, admin: $0.admin) }
        do {
            // Build both tables before swapping either, and swap the admin one first: /status and /match
            // are never behind what the public hosts serve.
            let (site, snapshot, routes, admin) = try self.routes(for: catalog, changed: changed)
            try listeners.admin?.replaceRoutes(admin)
            for listener in [listeners.https, listeners.http].compactMap({ $0 }) { listener.replaceRoutes(routes) }
            catalog.routes = (site, snapshot)
        } catch {
            // The next reload builds every domain's routes afresh rather than on routes never served.
            catalog.routes = nil
            logger.error("could not publish the reloaded routes", metadata: ["reason": "\(error)"])
        }
        if certificatesChanged, let https = listeners.https, let table = catalog.certificates.table {
            do {
                try https.replaceCertificates(table)
            } catch {
                logger.error("certificates not reloaded; keeping the current ones", metadata: ["reason": "\(error)"])
            }
        }
    }

    /// Signs the domains that ask for it with identities from the certificate folder (spec §4).
    var signer: AssociationSigner {
        AssociationSigner(certificateDirectory: configuration.certificateDirectory, cache: signatureCache)
    }

    private func makeWatcher() -> ConfigWatcher? {
        var roots = [configuration.configDirectory]
        if configuration.httpsPort != nil { roots.append(configuration.certificateDirectory) }
        do {
            // Weak: the watcher's thread must not keep a server alive that nobody else holds.
            return try ConfigWatcher(
                roots: roots, quietPeriod: configuration.reloadQuietPeriod,
                maximumDelay: configuration.reloadMaximumDelay, logger: logger, entriesWatchedByLoad: true
            ) { [weak self] changes in
                self?.reload(changes)
            }
        } catch {
            logger.warning(
                "cannot watch for changes; reload with SIGHUP", metadata: ["reason": "\(error)"])
            return nil
        }
    }

    /// A listener's settings; `observed` listeners report every request to ``recorder``.
    private func listenerConfiguration(
        port: UInt16, address: String?, tls: TLSConfiguration?, observed: Bool = false
    ) -> ListenerConfiguration {
        let logger = self.logger
        var listener = ListenerConfiguration(
            port: port, bindAddress: address, tls: tls,
            logHandler: { message in
                // libmicrohttpd's messages may quote what a client sent.
                logger.notice("libmicrohttpd", metadata: ["message": "\(LogEscaping.escape(message))"])
            })
        if let threads = configuration.threadPoolSize { listener.threadPoolSize = threads }
        listener.connectionLimit = configuration.maxConnections
        listener.perIPConnectionLimit = configuration.maxConnectionsPerIP
        listener.connectionTimeoutSeconds = configuration.idleTimeoutSeconds
        listener.headerTimeout = configuration.headerTimeout
        listener.requestHeadLimit = configuration.maxRequestHeadBytes
        if observed { listener.eventLoop = configuration.eventLoop }
        if observed { listener.observer = recorder }
        return listener
    }

    /// Logs each domain's findings of one load, at most ``CappedFindings/shownPerSource`` in full per domain.
    func log(_ loaded: [LoadedDomain]) {
        for domain in loaded where !domain.diagnostics.isEmpty {
            log(CappedFindings(domain.diagnostics), source: domain.domain)
        }
    }

    /// Logs findings that are not a domain's (certificate folders, the whole load), capped per file's folder.
    func log(_ diagnostics: [Diagnostic]) {
        var order: [String] = []
        var bySource: [String: [Diagnostic]] = [:]
        for diagnostic in diagnostics {
            let source = diagnostic.file.map { ($0 as NSString).deletingLastPathComponent } ?? ""
            if bySource[source] == nil { order.append(source) }
            bySource[source, default: []].append(diagnostic)
        }
        for source in order { log(CappedFindings(bySource[source]!), source: source) }
    }

    private func log(_ findings: CappedFindings, source: String) {
        func log(_ severity: Diagnostic.Severity, _ metadata: Logger.Metadata) {
            switch severity {
            case .error: logger.error("config error", metadata: metadata)
            case .warning: logger.warning("config warning", metadata: metadata)
            case .note: logger.info("config note", metadata: metadata)
            }
        }
        for diagnostic in findings.shown { log(diagnostic.severity, ["diagnostic": "\(diagnostic.description)"]) }
        for more in findings.more {
            log(more.severity, ["source": "\(source)", "diagnostic": "\(CappedFindings.summary(of: more))"])
        }
    }
}
