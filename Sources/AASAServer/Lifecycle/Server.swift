public import AASACore
import AASAMicroHTTPD
import AASAPostgres
import Foundation
public import Logging
import Synchronization

/// The running server: wires the parts together along the data flow, starts them in dependency order and stops
/// them in reverse. A load is read from the ``ConfigSource`` (``Loader``), turned into the next ``Catalog``, and
/// published to the ``Listeners`` by the ``Reloader``; the file watcher, ACME and the CDN check run beside them.
public final class Server: Sendable {
    /// The parts ``start()`` makes and ``stop()`` stops.
    private struct Running {
        var reloader: Reloader?
        var watcher: ConfigWatcher?
        var acme: ACMEManager?
        var cdn: CDNMonitor?
        var replica: StoreReplica?
        /// ACME is being started after the first load (a replica that started from its snapshot).
        var startingACME = false
    }

    /// What the server was started with.
    public let configuration: ServerConfiguration
    let logger: Logger
    /// Counts requests and keeps the fetch log for `/metrics`, `/fetches`, the access log and `--dev`.
    public let recorder: TrafficRecorder
    private let listeners: Listeners
    private let history = ReloadHistory()
    private let running = Mutex(Running())
    /// The certificates of domains waiting for their first ACME certificate.
    let temporaryCertificates = TemporaryCertificates()
    /// The folders: where every load reads domains and certificates.
    private let source: FolderSource
    /// The http-01 answers of this process's orders, with `--acme`.
    private let challenges: ChallengeStore?
    /// The stored domains' files the replica read (as many bytes as `--pages-memory`): its reloads and the tenant API's
    /// checks fetch only what moved.
    private let storedFiles: StoredFiles

    /// Creates a server; nothing is loaded or bound until ``start()``.
    /// `recorder` observes the public listeners; by default it counts only (no access log, no printout).
    public init(configuration: ServerConfiguration, logger: Logger, recorder: TrafficRecorder = TrafficRecorder()) {
        self.configuration = configuration
        self.logger = logger
        self.recorder = recorder
        listeners = Listeners(configuration: configuration, logger: logger, recorder: recorder)
        challenges = configuration.acme == nil ? nil : ChallengeStore()
        storedFiles = StoredFiles(maximumBytes: configuration.pagesMemory)
        source = FolderSource(
            configDirectory: configuration.configDirectory, certificateDirectory: configuration.certificateDirectory,
            refusesExposedKeys: configuration.refusesExposedPrivateKeys, signatures: SignatureCache())
    }

    deinit {
        stopServices()
    }

    /// The ACME manager, while the server runs with ``ServerConfiguration/acme``.
    public var acme: ACMEManager? { running.withLock { $0.acme } }
    /// The bound HTTPS port, if HTTPS is on and started.
    public var httpsPort: UInt16? { listeners.port(.https) }
    /// The bound plain HTTP port, if on and started.
    public var httpPort: UInt16? { listeners.port(.http) }
    /// The bound admin port, if on and started.
    public var adminPort: UInt16? { listeners.port(.admin) }
    /// The catalog being served; empty before ``start()``.
    var catalog: Catalog { running.withLock { $0.reloader }?.catalog ?? Catalog() }
    /// The domains currently published.
    public var publishedDomains: [String] { catalog.published.keys.sorted() }
    /// The services (``AssociationFile/services``) each published domain's served file declares, by domain: what
    /// `serve --dev` prints entitlement lines for.
    public var publishedServices: [String: [String]] {
        catalog.published.dictionary.mapValues {
            AssociationFile.parse(SourceText(name: "", bytes: $0.associationFile)).file?.services ?? []
        }
    }
    /// What is served and what the last load found (also served as the admin listener's `/status`).
    public var status: ServerStatus? { catalog.status }
    /// The public routes being served (``Reloader/siteRoutes``).
    var siteRoutes: SiteRoutes? { running.withLock { $0.reloader }?.siteRoutes }
    /// The SNI table being served.
    var certificateTable: CertificateTable? { catalog.certificates.table }
    /// The file watcher, while the server runs with ``ServerConfiguration/watchForChanges``.
    var watcher: ConfigWatcher? { running.withLock { $0.watcher } }

    /// Binds every configured listener's port now, before anything is loaded, for ``start()`` to serve on: a process
    /// started as root binds port 443 here, then drops its privileges (`serve --user`) before it reads one file.
    public func bindPorts() throws(StartupError) {
        try listeners.bind()
    }

    /// Loads every domain and certificate, starts the listeners and, if configured, the file watcher, ACME and the
    /// CDN check.
    ///
    /// Every domain and certificate that loads is served; the others are logged, listed on `/status` and `/readyz`,
    /// and counted in `/metrics`, so one tenant's mistake (or a signing certificate that expired while the server
    /// was down) never keeps the other domains offline. The start fails only when no domain at all can be served,
    /// or, with ``ServerConfiguration/refusesToStartWithErrors``, on any error.
    public func start() throws(StartupError) {
        let replica = try storeReplica()
        running.withLock { $0.replica = replica }
        let loader = Loader(
            source: replica?.source ?? source, shard: configuration.shard,
            readsCertificates: configuration.httpsPort != nil,
            pagesMemory: configuration.pagesMemory,
            temporaryCertificates: configuration.acme == nil ? nil : temporaryCertificates, logger: logger)
        let reloader = Reloader(
            loader: loader, listeners: listeners, builder: routeBuilder(challenges: challenges),
            history: history, removalGrace: configuration.removalGrace, logger: logger
        ) { [weak self] catalog, changed, time in
            self?.published(catalog, changed: changed, at: time)
        }
        // Each folder is watched just before it is read, so a change made while the server starts is not missed;
        // then the entries the load did not read.
        let watcher = configuration.watchForChanges && replica == nil ? makeWatcher() : nil
        // A replica of the store waits for it, or serves its snapshot, before the first load; its admin listener
        // answers meanwhile (/readyz: 503).
        if replica != nil {
            do {
                try listeners.startAdmin(reloader.builderAdminRoutes(for: Catalog()))
            } catch {
                replica?.stop()
                throw error
            }
        }
        let reached = replica?.reach()
        if case .stopped(let reason)? = reached {
            replica?.stop()
            throw StartupError(
                diagnostics: [
                    Diagnostic(
                        .error, rule: .storeUnreachable, "stopped before the store was reached: \(reason)",
                        hint: "check the --store URI, and that the database accepts connections from this machine")
                ], isConfigurationError: false)
        }
        // ACME reads its account from where it keeps its state: the store once reached, or the certificate folder.
        // A replica serving its snapshot starts ACME once a reload reads the store (``published(_:changed:at:)``).
        var acme: ACMEManager?
        if case .snapshot? = reached {
        } else {
            do {
                acme = try makeACME()
            } catch {
                replica?.stop()
                throw error
            }
            running.withLock { running in
                running.acme = acme
                running.startingACME = true
            }
        }
        let firstLoader = replica == nil ? loader.reading(from: source.watching(watcher)) : loader
        let first: (Catalog, Duration)
        do {
            first = try FirstLoad(configuration: configuration, loader: firstLoader, logger: logger).run(
                watcher: watcher
            ) { catalog throws(StartupError) in
                do {
                    let routes = try reloader.routes(for: catalog)
                    try listeners.start(
                        certificates: catalog.certificates.table, routes: routes.served, admin: routes.admin)
                } catch let error as StartupError {
                    throw error
                } catch {
                    throw StartupError(
                        diagnostics: [Diagnostic(.error, rule: .listener, "\(error)")], isConfigurationError: false)
                }
            }
        } catch {
            replica?.stop()
            throw error
        }
        let (catalog, took) = first
        reloader.begin(with: catalog, took: took)
        running.withLock { $0.reloader = reloader }
        if let replica, let reached {
            // Weak: the follower's thread must not keep alive a reloader nobody else holds.
            replica.follow(after: reached) { [weak reloader] scope in
                reloader?.reload(scope, trigger: .storeChange) ?? []
            }
            logger.info(
                "following the store",
                metadata: ["store": "\(replica.link.server)", "replica": "\(replica.settings.replica)"])
        }
        if let watcher {
            running.withLock { $0.watcher = watcher }
            watcher.start()
            logger.info("watching for changes", metadata: ["folders": "\(watcher.roots.joined(separator: ","))"])
        }
        if let settings = configuration.cdnCheck {
            // What each domain serves now; the monitor knows since when (the reloads that changed it).
            let monitor = CDNMonitor(settings: settings, logger: logger) { [weak self] domain in
                self?.catalog.published[domain].map {
                    CDNMonitor.Served(association: $0.associationFile, assetLinks: $0.assetLinks, since: nil)
                }
            }
            monitor.update(domains: catalog.published.keys.sorted(), changed: [], now: Date())
            monitor.start()
            running.withLock { $0.cdn = monitor }
        }
        if let acme { startACME(acme, catalog) }
    }

    /// The ACME manager of ``ServerConfiguration/acme``, publishing its answers through ``challenges``; `nil` without.
    private func makeACME() throws(StartupError) -> ACMEManager? {
        let storage: any ACMEStorage
        if let store = configuration.store, let key = store.key {
            storage = StoreACMEStorage(uri: store.uri, key: key, replica: store.replica, logger: logger)
        } else {
            storage = FolderACMEStorage(certificateDirectory: configuration.certificateDirectory, logger: logger)
        }
        return try ACMESetup(configuration: configuration, logger: logger).manager(
            storage: storage, responder: challenges
        ) { [weak self] _ in
            // A replica's follower brings the certificate from the store; the watcher sees the new files and folds a
            // burst of issuances into one reload; without either, reload now.
            guard let self, self.watcher == nil, self.configuration.store == nil else { return }
            reload(trigger: .certificateIssued)
        }
    }

    /// Plans every domain of `catalog` and starts the workers.
    private func startACME(_ acme: ACMEManager, _ catalog: Catalog) {
        running.withLock { $0.acme = acme }
        plan(acme, catalog, at: Date())
        acme.start()
        logger.info(
            "ACME: managing certificates",
            metadata: ["ca": "\(acme.client.directoryURL)", "state": "\(acme.storage.location)"])
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

    /// Stops in the reverse order of the start: the watcher, ACME, the CDN check and the reloader's comparer and
    /// timer first, so no reload starts while the listeners go away (a reload in progress finishes); then the
    /// listeners stop accepting, let in-flight requests finish within `timeout`, and release the ports. Returns when
    /// every thread of theirs has ended.
    public func stop(timeout: Duration = .seconds(5)) {
        stopServices()
        listeners.stop(timeout: timeout)
    }

    /// Stops every service; the catalog stays readable (``status``), the watcher is gone.
    private func stopServices() {
        let stopping = running.withLock { running in
            defer { running.watcher = nil }
            return running
        }
        stopping.watcher?.stop()
        stopping.acme?.stop()
        stopping.cdn?.stop()
        stopping.replica?.stop()
        stopping.reloader?.stop()
    }

    /// Reloads configs and certificates: each domain that loads cleanly is republished, a domain that
    /// fails keeps its last good version, and so does a certificate folder; certificates change for new
    /// connections only. Reads every folder, comparing each with its stamps; only what changed is republished.
    /// Returns every finding of the load.
    ///
    /// Safe to call from any thread; concurrent reloads run one after the other.
    @discardableResult
    public func reload(trigger: ReloadTrigger = .manual) -> [Diagnostic] {
        running.withLock { $0.reloader }?.reload(.everything, trigger: trigger) ?? []
    }

    /// Reloads the folders the file watcher saw change (``FolderChanges``): every folder when it cannot tell.
    func reload(_ changes: FolderChanges, trigger: ReloadTrigger = .fileChange) {
        running.withLock { $0.reloader }?.reload(LoadScope(changes), trigger: trigger)
    }

    /// The store replica of ``ServerConfiguration/store``, or `nil` for the folders.
    private func storeReplica() throws(StartupError) -> StoreReplica? {
        guard let settings = configuration.store else { return nil }
        guard configuration.acme == nil || settings.key != nil else {
            throw StartupError(
                diagnostics: [
                    Diagnostic(
                        .error, rule: .acmeSetup,
                        "--acme with --store keeps the ACME account and every certificate's key in the store, sealed with the store key, which was not given",
                        hint: "pass --store-key-file (the same key file on every replica)")
                ], isConfigurationError: true)
        }
        do {
            return try StoreReplica(
                settings: settings, shard: configuration.shard, files: storedFiles, logger: logger,
                signatures: SignatureCache())
        } catch {
            throw StartupError(
                diagnostics: [Diagnostic(.error, rule: .storeUnreachable, "\(error)")], isConfigurationError: true)
        }
    }

    /// What the replica knows of its store; `nil` without ``ServerConfiguration/store``.
    public var storeStatus: StoreStatus? { running.withLock { $0.replica }?.status }

    /// Tells ACME and the CDN check what a reload published. A replica that started from its snapshot starts ACME
    /// once a reload reads the store.
    private func published(_ catalog: Catalog, changed: [String], at time: Date) {
        let (acme, cdn, started) = running.withLock { ($0.acme, $0.cdn, $0.reloader != nil) }
        if let acme {
            plan(acme, catalog, at: time)
        } else if started, configuration.acme != nil, storeStatus?.servingSnapshot == false {
            startACMELate(catalog)
        }
        let published = catalog.published
        cdn?.update(changed: changed, isServed: { published.contains($0) }, now: time)
    }

    /// Starts ACME for a replica that started from its snapshot, now that the store answers; logs once when it
    /// cannot.
    private func startACMELate(_ catalog: Catalog) {
        let claimed = running.withLock { running in
            defer { running.startingACME = true }
            return running.startingACME
        }
        guard !claimed else { return }
        do {
            if let acme = try makeACME() { startACME(acme, catalog) }
        } catch {
            logger.error("ACME: cannot start", metadata: ["reason": "\(error)"])
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

    /// What the listeners serve: the routes of each catalog, with ACME's challenge answers (`challenges`) or a
    /// webroot's, and the admin routes reading the live figures.
    private func routeBuilder(challenges: ChallengeStore?) -> RouteBuilder {
        RouteBuilder(
            recorder: recorder, challenges: challenges,
            webroot: configuration.acmeWebroot.map(WebrootChallenges.init(root:)),
            thumbprint: { [weak self] in self?.acme?.thumbprint }, live: live, access: configuration.adminAccess)
    }

    /// What the admin routes read at request time.
    private var live: AdminRoutes.Live {
        var acmeFigures: (@Sendable () -> ACMEFigures)?
        if configuration.acme != nil {
            acmeFigures = { [weak self] in
                guard let acme = self?.acme else { return ACMEFigures() }
                return acme.figures
            }
        }
        var cdnFigures: (@Sendable () -> [String: (apple: CDNObservation?, google: CDNObservation?)])?
        if configuration.cdnCheck != nil {
            cdnFigures = { [weak self] in self?.running.withLock { $0.cdn }?.observations ?? [:] }
        }
        var live = AdminRoutes.Live(
            recorder: recorder, reloads: { [history] in history.counts },
            reloadHistory: { [history] in history.latest }, listeners: { [listeners] in listeners.figures },
            acme: acmeFigures, cdn: cdnFigures)
        if configuration.acme != nil {
            live.retryACME = { [weak self] domain in self?.acme?.retryNow(domain) ?? .unknownDomain }
        }
        if let store = configuration.store {
            let server = PostgresConnection.server(of: store.uri)
            live.store = { [weak self] in
                self?.storeStatus ?? StoreStatus(server: server, replica: store.replica)
            }
        }
        if !configuration.adminAccess.tokens.isEmpty { live.api = tenantAPI(acme: acmeFigures, cdn: cdnFigures) }
        return live
    }

    /// The tenant API (`/api/v1/`, docs/api.md) over where the domains are (the store, or the config folder), reading
    /// each domain's state from the served `/status` with ACME's and the CDN check's live figures.
    private func tenantAPI(
        acme: (@Sendable () -> ACMEFigures)?,
        cdn: (@Sendable () -> [String: (apple: CDNObservation?, google: CDNObservation?)])?
    ) -> @Sendable (APIRequest) -> Response {
        let repository: any DomainRepository =
            configuration.store.map {
                StoreDomainRepository(
                    uri: $0.uri, policy: configuration.history, connections: configuration.apiWorkers,
                    timeout: configuration.apiStoreTimeout, files: storedFiles)
            } ?? FolderDomainRepository(directory: configuration.configDirectory, policy: configuration.history)
        let view: @Sendable () -> ServerStatus.LiveView = {
            var view = ServerStatus.LiveView()
            view.acme = acme?()
            view.certificates = view.acme?.statuses ?? [:]
            view.cdn = cdn?() ?? [:]
            return view
        }
        let api = TenantAPI(
            repository: repository,
            states: { [weak self] in self?.status?.tenantStates(live: view()) ?? [:] },
            status: { [weak self] name in self?.status?.tenantStatus(name, live: view()) },
            sign: { [weak self] loaded in self?.sign(loaded) ?? loaded }, logger: logger)
        return { api.answer($0) }
    }

    /// `loaded` signed by the source the server loads from, with the certificates it serves: what a load of the
    /// same site.json would find of its signing identity.
    private func sign(_ loaded: [LoadedDomain]) -> [LoadedDomain] {
        let from: any ConfigSource = running.withLock { $0.replica }?.source ?? source
        let served = configuration.httpsPort == nil ? nil : catalog.certificates
        return from.sign(loaded, now: Date(), certificates: served)
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
            logger.warning("cannot watch for changes; reload with SIGHUP", metadata: ["reason": "\(error)"])
            return nil
        }
    }
}
