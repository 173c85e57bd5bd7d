import AASACore
import Foundation
import Logging
import Synchronization

/// ACME as the server runs it (``ServerConfiguration/acme``): the manager made from where ACME keeps its state, told
/// what every load publishes, and its workers started after the first load.
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

    /// Makes the manager, plans every domain the first load published and starts the workers; a replica serving its
    /// snapshot does so once it reads the store.
    func start() throws(Server.StartupError) {
        guard !waitsForStore() else { return }
        try begin()
    }

    /// Tells the manager what a load at `time` published; a replica that started from its snapshot starts ACME here
    /// once the store answers.
    func published(_ catalog: Catalog, at time: Date) {
        if let manager {
            Self.plan(manager, catalog, at: time)
        } else if !waitsForStore() {
            do {
                try begin()
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

    private func begin() throws(Server.StartupError) {
        let claimed = state.withLock { state in
            defer { state.claimed = true }
            return state.claimed || state.stopped
        }
        guard !claimed, let manager = try make() else { return }
        let stopped = state.withLock { state in
            state.manager = manager
            return state.stopped
        }
        guard !stopped else { return }
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
