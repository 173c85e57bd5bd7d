import AASACore
import AASAMicroHTTPD
import Foundation
import Logging
import Synchronization

/// Runs every reload: reads a load (``Loader``), turns the catalog into the next one
/// (``Catalog/apply(_:signer:trigger:removalGrace:)``), publishes its routes and certificates to the ``Listeners``,
/// queues the comparison of each new version (``ChangeComparer``), records the load (``ReloadHistory``) and
/// schedules the end of the next removal grace (``RemovalTimer``).
///
/// A reload holds the catalog for the whole load, so reloads from SIGHUP, the watcher, ACME and the removal timer
/// never interleave and always build on the previous one's last good versions.
///
/// As a service, its start is the first load (``FirstLoad``), which starts the listeners on the first catalog; a
/// reload asked for before it is done does nothing.
final class Reloader: Service {
    /// The catalog and the routes built from it, as the last load left them.
    private struct State {
        var catalog = Catalog()
        var routes: PublishedRoutes?
        /// Whether the first load is served: reloads build on it.
        var began = false
    }

    private let state = Mutex(State())
    private let loader: Loader
    /// The start's load, and the watcher that watches each folder as it reads it.
    private let first: FirstLoad
    private let watcher: ConfigWatcher?
    private let listeners: Listeners
    private let builder: RouteBuilder
    private let history: ReloadHistory
    private let removalGrace: Duration
    private let logger: Logger
    /// Told of every published catalog, with the domains whose served version changed (ACME's plan, the CDN check).
    private let published: @Sendable (Catalog, _ changed: [String], _ time: Date) -> Void
    /// Compares each new version with the one it replaced, after the reload that published it.
    let comparer: ChangeComparer
    /// Reloads when a removal grace ends.
    let removals: RemovalTimer

    init(
        loader: Loader, first: FirstLoad, watcher: ConfigWatcher?, listeners: Listeners, builder: RouteBuilder,
        history: ReloadHistory, removalGrace: Duration, logger: Logger,
        published: @escaping @Sendable (Catalog, _ changed: [String], _ time: Date) -> Void
    ) {
        self.loader = loader
        self.first = first
        self.watcher = watcher
        self.listeners = listeners
        self.builder = builder
        self.history = history
        self.removalGrace = removalGrace
        self.logger = logger
        self.published = published
        // Weak: the threads of the comparer and the timer must not keep alive a reloader nobody else holds.
        let record = Mutex<(@Sendable (ChangeComparer.Job, DomainDiff) -> Void)?>(nil)
        comparer = ChangeComparer { job, diff in record.withLock { $0 }?(job, diff) }
        let fire = Mutex<(@Sendable () -> Void)?>(nil)
        removals = RemovalTimer(logger: logger) { fire.withLock { $0 }?() }
        record.withLock { $0 = { [weak self] job, diff in self?.record(job, diff) } }
        fire.withLock {
            $0 = { [weak self] in
                guard let self, listeners.servesPublicly else { return }
                reload(.everything, trigger: .removalGrace)
            }
        }
    }

    /// The catalog as the last load left it.
    var catalog: Catalog { state.withLock { $0.catalog } }
    /// The public routes being served: the last reload's, whose ``SiteRoutes/preparedResponses`` are those of the
    /// domains it rebuilt.
    var siteRoutes: SiteRoutes? { state.withLock { $0.routes?.site } }

    /// The admin routes before the first load is served: an empty catalog, not ready (a replica's admin listener
    /// while it waits for the store).
    var adminRoutesBeforeLoad: AdminRoutes { builder.adminRoutes(for: Catalog()) }

    /// Loads everything (``FirstLoad``), starts the listeners on the first catalog's routes, and begins: reloads
    /// build on that catalog, and the removal timer runs.
    func start() throws(Server.StartupError) {
        let (catalog, took) = try first.run(watcher: watcher) { catalog throws(Server.StartupError) in
            let routes: (published: PublishedRoutes, served: RouteSnapshot, admin: AdminRoutes)
            do {
                routes = try builder.routes(for: catalog, previous: nil, changed: nil)
            } catch {
                throw Server.StartupError(
                    diagnostics: [Diagnostic(.error, rule: .listener, "\(error)")], isConfigurationError: false)
            }
            try listeners.start(certificates: catalog.certificates, routes: routes.served, admin: routes.admin)
            state.withLock { $0.routes = routes.published }
        }
        state.withLock { state in
            state.catalog = catalog
            state.began = true
        }
        history.record(catalog, took: took, changed: [])
        builder.recorder.setDomains(catalog.published)
        removals.start()
        schedule(catalog)
    }

    /// Reloads what `scope` names: each domain that loads cleanly is republished, a domain that fails keeps its last
    /// good version, and so does a certificate; certificates change for new connections only. Only what changed is
    /// republished. Returns every finding of the load; nothing before the first load is served.
    @discardableResult
    func reload(_ scope: LoadScope, trigger: ReloadTrigger) -> [Diagnostic] {
        state.withLock { state in
            guard state.began else { return [] }
            let clock = ContinuousClock()
            let started = clock.now
            let load = loader.load(after: state.catalog, scope: scope, at: Date())
            let time = load.time
            let transition = state.catalog.apply(
                consume load, signer: loader, trigger: trigger, removalGrace: removalGrace)
            let findings = FindingsLog(logger: logger)
            if let intake = transition.certificates {
                findings.log(intake, defaultEntry: state.catalog.certificates.defaultEntry)
            }
            switch transition.domains {
            case .success(let loaded):
                findings.log(loaded)
            case .failure(let error):
                logger.error(
                    "reload failed; keeping the current configuration", metadata: ["diagnostic": "\(error.description)"]
                )
            }
            publish(&state, changed: transition.changed, certificates: transition.certificates?.change)
            // What each new version does to URLs (``DomainChange``), worked out once it is published, off this path.
            comparer.enqueue(transition.compare)
            history.record(state.catalog, took: clock.now - started, changed: transition.changed)
            builder.recorder.setDomains(state.catalog.published)
            schedule(state.catalog)
            published(state.catalog, transition.changed, time)
            if scope.domains == nil { FreedMemory.release() }
            logger.info(
                "reload",
                metadata: [
                    "trigger": "\(trigger.rawValue)",
                    "result": "\(state.catalog.status?.lastReload.result.rawValue ?? "")",
                    "changed": "\(transition.changed.joined(separator: ","))",
                    "errors": "\(transition.diagnostics.errors.count)",
                    "seconds": "\(Self.seconds(clock.now - started))",
                ])
            return transition.diagnostics
        }
    }

    /// Swaps the catalog's routes (the domains in `changed` rebuilt) and certificates (`certificates` changed) into the
    /// listeners, and keeps the routes for the next reload to build on.
    private func publish(_ state: inout State, changed: [String], certificates: CertificateChange?) {
        do {
            // Both tables are built before either is swapped.
            let (published, served, admin) = try builder.routes(
                for: state.catalog, previous: state.routes, changed: changed)
            try listeners.publish(routes: served, admin: admin)
            state.routes = published
        } catch {
            // The next reload builds every domain's routes afresh rather than on routes never served.
            state.routes = nil
            logger.error("could not publish the reloaded routes", metadata: ["reason": "\(error)"])
        }
        if let certificates, state.catalog.certificates.defaultEntry != nil {
            do {
                try listeners.publish(certificates: state.catalog.certificates, change: certificates)
            } catch {
                logger.error("certificates not reloaded; keeping the current ones", metadata: ["reason": "\(error)"])
            }
        }
    }

    /// Takes in a comparison the comparer finished: the domain's last change on `/status` and the dashboard from now
    /// on, and a `domain changed` log line, unless a newer version of the domain was published meanwhile (its own
    /// comparison follows) or the domain is gone.
    private func record(_ job: ChangeComparer.Job, _ diff: DomainDiff) {
        let kept = state.withLock { state in
            guard state.catalog.record(job, diff) else { return false }
            do {
                try listeners.publish(admin: builder.adminRoutes(for: state.catalog))
            } catch {
                logger.error("could not publish a domain's last change", metadata: ["reason": "\(error)"])
            }
            return true
        }
        guard kept else { return }
        logger.info("domain changed", metadata: ["domain": "\(job.new.domain)", "summary": "\(diff.summary)"])
    }

    /// Schedules a reload for when the earliest removal grace of `catalog` ends.
    private func schedule(_ catalog: Catalog) {
        guard let earliest = catalog.removedSince.values.min() else { return }
        removals.schedule(at: earliest.addingTimeInterval(removalGrace.timeInterval))
    }

    /// Stops the comparer and the removal timer; returns when their threads have ended.
    func stop() {
        removals.stop()
        comparer.stop()
    }

    /// A duration in seconds with millisecond precision, for the logs (`0.412`).
    static func seconds(_ duration: Duration) -> String {
        let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        let fraction = String(milliseconds % 1000)
        return "\(milliseconds / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }
}
