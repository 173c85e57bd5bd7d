public import AASACore
import AASAMicroHTTPD
import Foundation
public import Logging
import Synchronization

/// The running server: what runs, in the order it starts (``ServiceGroup``). The listeners first; a replica's admin
/// listener ahead of its wait for the store (``StoreReplica``); the reloader, whose start is the first load read from
/// the ``ConfigSource`` (``Loader``) and served by the ``Listeners``; then the replica's follower, the file watcher,
/// the CDN check and ACME, which act on what is served. They stop in the reverse order.
public final class Server: Sendable {
    /// What ``start()`` made: the group, and the parts the server reads while it runs.
    private struct Running {
        var group: ServiceGroup
        /// Where every load reads, the tenant API writes and ACME keeps its state.
        var storage: any Storage
        var reloader: Reloader
        var replica: StoreReplica?
        var watcher: ConfigWatcher?
        var cdn: CDNMonitor?
        var acme: ACMEService?
    }

    /// What the server was started with.
    public let configuration: ServerConfiguration
    let logger: Logger
    /// Counts requests and keeps the fetch log for `/metrics`, `/fetches`, the access log and `--dev`.
    public let recorder: TrafficRecorder
    private let listeners: Listeners
    private let history = ReloadHistory()
    private let running = Mutex<Running?>(nil)
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
        listeners = Listeners(
            configuration: configuration, logger: logger, recorder: recorder,
            temporaryCertificates: configuration.acme == nil ? nil : TemporaryCertificates())
        challenges = configuration.acme == nil ? nil : ChallengeStore()
        storedFiles = StoredFiles(maximumBytes: configuration.pagesMemory)
    }

    deinit {
        running.withLock { $0 }?.group.stop(draining: .zero)
    }

    /// The ACME manager, while the server runs with ``ServerConfiguration/acme``.
    public var acme: ACMEManager? { running.withLock { $0?.acme }?.manager }
    /// The bound HTTPS port, if HTTPS is on and started.
    public var httpsPort: UInt16? { listeners.port(.https) }
    /// The bound plain HTTP port, if on and started.
    public var httpPort: UInt16? { listeners.port(.http) }
    /// The bound admin port, if on and started.
    public var adminPort: UInt16? { listeners.port(.admin) }
    /// The catalog being served; empty before ``start()``.
    var catalog: Catalog { running.withLock { $0?.reloader }?.catalog ?? Catalog() }
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
    var siteRoutes: SiteRoutes? { running.withLock { $0?.reloader }?.siteRoutes }
    /// The SNI table being served.
    var certificateTable: CertificateTable? { listeners.certificateTable }
    /// The file watcher, while the server runs with ``ServerConfiguration/watchForChanges``.
    var watcher: ConfigWatcher? { running.withLock { $0?.watcher } }
    /// What the replica knows of its store; `nil` without ``ServerConfiguration/store``.
    public var storeStatus: StoreStatus? { running.withLock { $0?.replica }?.status }

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
    /// or, with ``ServerConfiguration/refusesToStartWithErrors``, on any error; what started then is stopped.
    public func start() throws(StartupError) {
        let parts = try makeParts()
        running.withLock { $0 = parts }
        try parts.group.start()
    }

    /// What ``start()`` runs, in its order; nothing runs yet.
    private func makeParts() throws(StartupError) -> Running {
        // Certificates are read only for HTTPS; their leaves and keys wait for a handshake in the vault.
        let vault = configuration.httpsPort == nil ? nil : try configuration.credentialVault.makeVault(logger: logger)
        let replica = try StoreReplica(configuration, files: storedFiles, vault: vault, logger: logger)
        let storage: any Storage =
            replica.map { StoreStorage(configuration: configuration, replica: $0, files: storedFiles) }
            ?? FolderStorage(configuration, vault: vault)
        // Each folder is watched just before it is read, so a change made while the server starts is not missed;
        // then the entries the load did not read.
        let watcher =
            replica == nil
            ? ConfigWatcher(configuration, logger: logger) { [weak self] changes in self?.reload(changes) } : nil
        let loader = Loader(
            source: storage.source, shard: configuration.shard, readsCertificates: configuration.httpsPort != nil,
            pagesMemory: configuration.pagesMemory, temporaryCertificates: configuration.acme != nil)
        let first = FirstLoad(
            configuration: configuration, loader: loader.reading(from: storage.sourceOfFirstLoad(watchedBy: watcher)),
            logger: logger)
        let reloader = Reloader(
            loader: loader, first: first, watcher: watcher, listeners: listeners,
            builder: adminWiring(storage.makeRepository(), vault: vault).routeBuilder,
            history: history, removalGrace: configuration.removalGrace, logger: logger
        ) { [weak self] catalog, changed, time in
            self?.published(catalog, changed: changed, at: time)
        }
        let cdn = configuration.cdnCheck.map { settings in
            // What each domain serves now; the monitor knows since when (the reloads that changed it).
            CDNMonitor(
                settings: settings, logger: logger,
                domains: { [weak reloader] in reloader?.catalog.published.keys.sorted() ?? [] }
            ) { [weak reloader] domain in
                reloader?.catalog.published[domain].map {
                    CDNMonitor.Served(association: $0.associationFile, assetLinks: $0.assetLinks, since: nil)
                }
            }
        }
        let acme = configuration.acme == nil ? nil : acmeService(reloader, replica, storage)
        var services: [any Service] = [listeners]
        if let replica {
            // A replica waits for the store, or serves its snapshot, before the first load; its admin listener answers
            // meanwhile (/readyz: 503).
            services += [listeners.adminAhead(reloader.adminRoutesBeforeLoad), replica]
        }
        if let acme { services.append(acme.account) }
        services.append(reloader)
        if let replica {
            // Weak: the follower's thread must not keep alive a reloader nobody else holds.
            services.append(replica.following { [weak reloader] in reloader?.reload($0, trigger: .storeChange) ?? [] })
        }
        services += [watcher as (any Service)?, cdn, acme].compactMap { $0 }
        return Running(
            group: ServiceGroup(services), storage: storage, reloader: reloader, replica: replica, watcher: watcher,
            cdn: cdn, acme: acme)
    }

    /// ACME over where it keeps its state (the store once reached, or the certificate folder), publishing its answers
    /// through ``challenges``, planning from `reloader`'s catalog.
    private func acmeService(_ reloader: Reloader, _ replica: StoreReplica?, _ storage: any Storage) -> ACMEService {
        ACMEService(
            logger: logger, catalog: { [weak reloader] in reloader?.catalog ?? Catalog() },
            waitsForStore: { [weak replica] in replica?.status.servingSnapshot == true }
        ) { [weak self] () throws(StartupError) -> ACMEManager? in
            guard let self else { return nil }
            return try ACMESetup(configuration: configuration, logger: logger).manager(
                storage: storage.acme(logger: logger), responder: challenges
            ) { [weak self] _ in
                // A replica's follower brings the certificate from the store; the watcher sees the new files and
                // folds a burst of issuances into one reload; without either, reload now.
                guard let self, self.watcher == nil, self.configuration.store == nil else { return }
                reload(trigger: .certificateIssued)
            }
        }
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

    /// Stops in the reverse order of the start: ACME, the CDN check, the watcher and the follower first, then the
    /// reloader's comparer and timer, so no reload starts while the listeners go away (a reload in progress finishes);
    /// then the listeners stop accepting, let in-flight requests finish within `timeout`, and release the ports.
    /// Returns when every thread of theirs has ended. The catalog stays readable (``status``), the watcher is gone.
    public func stop(timeout: Duration = .seconds(5)) {
        let group = running.withLock { running in
            defer { running?.watcher = nil }
            return running?.group
        }
        group?.stop(draining: timeout)
    }

    /// Reloads configs and certificates: each domain that loads cleanly is republished, a domain that
    /// fails keeps its last good version, and so does a certificate folder; certificates change for new
    /// connections only. Reads every folder, comparing each with its stamps; only what changed is republished.
    /// Returns every finding of the load.
    ///
    /// Safe to call from any thread; concurrent reloads run one after the other.
    @discardableResult
    public func reload(trigger: ReloadTrigger = .manual) -> [Diagnostic] {
        running.withLock { $0?.reloader }?.reload(.everything, trigger: trigger) ?? []
    }

    /// Reloads the folders the file watcher saw change (``FolderChanges``): every folder when it cannot tell.
    func reload(_ changes: FolderChanges, trigger: ReloadTrigger = .fileChange) {
        running.withLock { $0?.reloader }?.reload(LoadScope(changes), trigger: trigger)
    }

    /// Tells ACME and the CDN check what a reload published.
    private func published(_ catalog: Catalog, changed: [String], at time: Date) {
        let (acme, cdn) = running.withLock { ($0?.acme, $0?.cdn) }
        acme?.published(catalog, at: time)
        let published = catalog.published
        cdn?.update(changed: changed, isServed: { published.contains($0) }, now: time)
    }

    /// What the admin listener serves of this server, read at request time; the tenant API over `repository`.
    private func adminWiring(_ repository: any DomainRepository, vault: CredentialVault?) -> AdminWiring {
        AdminWiring(
            configuration: configuration, logger: logger, recorder: recorder, history: history, listeners: listeners,
            vault: vault,
            challenges: challenges, repository: repository, acme: { [weak self] in self?.acme },
            cdn: { [weak self] in self?.running.withLock { $0?.cdn }?.observations ?? [:] },
            store: { [weak self] in self?.storeStatus }, status: { [weak self] in self?.status },
            sign: { [weak self] loaded in self?.sign(loaded) ?? loaded })
    }

    /// `loaded` signed by the source the server loads from, with the certificates it serves: what a load of the
    /// same site.json would find of its signing identity.
    private func sign(_ loaded: [LoadedDomain]) -> [LoadedDomain] {
        guard let source = running.withLock({ $0?.storage.source }) else { return loaded }
        let served = configuration.httpsPort == nil ? nil : catalog.certificates
        return source.sign(loaded, now: Date(), certificates: served)
    }
}
