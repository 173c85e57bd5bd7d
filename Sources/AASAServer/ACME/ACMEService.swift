import AASACore
import Foundation
import Logging
import Synchronization

/// ACME as the server runs it (``ServerConfiguration/acme``): the manager made from where ACME keeps its state before
/// the first load (``account``: the first routes answer the fleet's challenges with its thumbprint), its workers
/// started after it, and told what every load publishes.
///
/// A replica that started from its snapshot (the store unreachable) cannot read its account yet: its manager is made
/// and started by the first load that reads the store (``published(_:at:)``), and a failure then is logged once.
final class ACMEService: Service {
    private let make: @Sendable () throws(Server.StartupError) -> ACMEManager?
    /// The catalog being served.
    private let catalog: @Sendable () -> Catalog
    /// Whether ACME waits for the store (a replica serving its snapshot).
    private let waitsForStore: @Sendable () -> Bool
    private let logger: Logger
    private let state = Mutex(State())

    private struct State {
        var manager: ACMEManager?
        /// Whether a manager was made or is being made (once only, including a late start that failed).
        var claimed = false
        /// Whether the workers were started.
        var running = false
        var stopped = false
    }

    /// ACME made by `make`, planning from `catalog`; `waitsForStore` says whether the start must wait for the store.
    init(
        logger: Logger, catalog: @escaping @Sendable () -> Catalog, waitsForStore: @escaping @Sendable () -> Bool,
        make: @escaping @Sendable () throws(Server.StartupError) -> ACMEManager?
    ) {
        self.logger = logger
        self.catalog = catalog
        self.waitsForStore = waitsForStore
        self.make = make
    }

    /// The manager, once made.
    var manager: ACMEManager? { state.withLock { $0.manager } }

    /// The making of the manager as a service, before the first load: its account read (or registered) where ACME
    /// keeps its state, and its thumbprint in the first routes, so that this replica answers every challenge of the
    /// fleet from the start. A replica serving its snapshot makes it later.
    var account: some Service { Account(acme: self) }

    /// ``account``.
    private final class Account: Service {
        let acme: ACMEService

        init(acme: ACMEService) {
            self.acme = acme
        }

        func start() throws(Server.StartupError) {
            guard !acme.waitsForStore() else { return }
            _ = try acme.made()
        }

        /// Nothing: ACME's own place in the order stops the manager.
        func stop() {}
    }

    /// Plans every domain the first load published and starts the workers (making the manager if ``account`` did
    /// not); a replica serving its snapshot does so once it reads the store.
    func start() throws(Server.StartupError) {
        guard !waitsForStore() else { return }
        try run()
    }

    /// Tells the manager what a load at `time` published; a replica that started from its snapshot starts ACME here
    /// once the store answers.
    func published(_ catalog: Catalog, at time: Date) {
        if let manager = state.withLock({ $0.running ? $0.manager : nil }) {
            Self.plan(manager, catalog, at: time)
        } else if !waitsForStore() {
            do {
                try run()
            } catch {
                logger.error("ACME: cannot start", metadata: ["reason": "\(error)"])
            }
        }
    }

    func stop() {
        let manager = state.withLock { state in
            state.stopped = true
            return state.manager
        }
        manager?.stop()
    }

    /// The manager: made once (a failure is not tried again), `nil` once stopped.
    private func made() throws(Server.StartupError) -> ACMEManager? {
        let (made, claimed) = state.withLock { state in
            defer { state.claimed = true }
            return (state.manager, state.claimed || state.stopped)
        }
        if claimed { return made }
        guard let manager = try make() else { return nil }
        let stopped = state.withLock { state in
            state.manager = manager
            return state.stopped
        }
        return stopped ? nil : manager
    }

    /// Starts the workers once, on the catalog served now.
    private func run() throws(Server.StartupError) {
        guard let manager = try made() else { return }
        let starts = state.withLock { state in
            defer { state.running = true }
            return !state.running && !state.stopped
        }
        guard starts else { return }
        Self.plan(manager, catalog(), at: Date())
        manager.start()
        logger.info(
            "ACME: managing certificates",
            metadata: ["ca": "\(manager.client.directoryURL)", "state": "\(manager.storage.location)"])
    }

    /// Tells `manager` the domains and certificates `catalog` holds.
    private static func plan(_ manager: ACMEManager, _ catalog: Catalog, at now: Date) {
        manager.update(
            domains: catalog.loaded.keys,
            certificates: catalog.certificates.served.values.map {
                ACMEManager.ServedCertificate(
                    folder: $0.folderName, subjectAlternativeNames: $0.subjectAlternativeNames, notBefore: $0.notBefore,
                    notAfter: $0.notAfter)
            }, now: now)
    }
}
