import AASACore
import AASAMicroHTTPD
import AASAPostgres
import Foundation
import Logging
import Synchronization

/// A replica's part of the store (`serve --store`): the source its loads read (``StoreSource``), its reading
/// connections (``StoreLink``), its snapshot (``StoreSnapshot``) and, once it serves, the follower of the store's
/// changes (``StoreFollower``).
///
/// As a service, its start reaches the store (``reach()``): with the store up, the first load reads it; with the store
/// down, a replica that has a snapshot serves it and catches up once the store is back, and one without waits for the
/// store, not ready, trying again. Its follower is a service of its own (``following(reload:)``), started after the
/// first load.
final class StoreReplica: Service {
    let settings: StoreSettings
    /// What loads read.
    let source: StoreSource
    let link: StoreLink
    let snapshot: StoreSnapshot?
    private let logger: Logger
    private let follower = Mutex<StoreFollower?>(nil)
    /// Where the start stands once ``start()`` reached the store.
    private let reached = Mutex<Reached?>(nil)
    /// The status until the follower runs: `connecting`, with why the last attempt failed.
    private let waiting: Mutex<StoreStatus>

    /// The replica of `settings`, reading the domains of `shard`, sealing certificates' leaves and keys in `vault`.
    ///
    /// - Throws: ``StoreError`` when the snapshot folder cannot be made.
    init(
        settings: StoreSettings, shard: Shard?, files: StoredFiles = StoredFiles(), vault: CredentialVault? = nil,
        logger: Logger, signatures: SignatureCache
    ) throws {
        self.settings = settings
        self.logger = logger
        let server = PostgresConnection.server(of: settings.uri)
        link = StoreLink(uri: settings.uri, server: server)
        waiting = Mutex(StoreStatus(server: server, replica: settings.replica))
        snapshot = try settings.cacheFolder.map { try StoreSnapshot(folder: $0, logger: logger) }
        source = StoreSource(
            link: link, shard: shard, key: settings.key, snapshot: snapshot,
            signer: AssociationSigner(certificateDirectory: StoreSource.certificateFolder, cache: signatures),
            files: files, vault: vault)
    }

    /// Where the start stands after ``reach()``.
    enum Reached {
        /// The store is up; every change up to `head` is in what the first load reads.
        case store(head: Int64)
        /// The store is down; the snapshot, at change `change`, is served.
        case snapshot(change: Int64)
        /// SIGINT or SIGTERM came while waiting for the store, which had last failed with `reason`.
        case stopped(reason: String)
    }

    /// Waits until the first load can read something: the store, or with the store down the snapshot. Without a
    /// snapshot it tries again, backing off up to 5 s, until the store answers or a stop signal comes; the wait is
    /// logged once.
    func reach() -> Reached {
        var backoff: Duration = .milliseconds(200)
        var logged = false
        var reason = ""
        while true {
            do {
                let store = try Store(uri: settings.uri, migrating: true, connectTimeout: settings.connectTimeout)
                defer { store.connection.close() }
                let head = try store.lastChange()
                link.open()
                if logged { logger.info("store reached", metadata: ["store": "\(link.server)"]) }
                return .store(head: head)
            } catch {
                reason = "\(error)"
                waiting.withLock { $0.problem = reason }
                if let snapshot, let change = snapshot.lastChange {
                    logger.warning(
                        "store unreachable at start; serving the snapshot until it is back",
                        metadata: [
                            "store": "\(link.server)", "snapshot": "\(snapshot.folder)", "change": "\(change)",
                            "reason": "\(error)",
                        ])
                    snapshot.serveFromSnapshot()
                    return .snapshot(change: change)
                }
                if !logged {
                    logger.error(
                        "store unreachable at start and no snapshot to serve; not ready, trying again",
                        metadata: ["store": "\(link.server)", "reason": "\(error)"])
                    logged = true
                }
            }
            if Signals.wait(timeout: backoff) == .stop { return .stopped(reason: reason) }
            backoff = min(backoff * 2, .seconds(5))
        }
    }

    /// Reaches the store (``reach()``) before the first load, then starts the snapshot's writer, which the first load
    /// hands its rows to; throws when a stop signal came first.
    func start() throws(Server.StartupError) {
        let reached = reach()
        self.reached.withLock { $0 = reached }
        if case .stopped(let reason) = reached {
            stop()
            throw Server.StartupError(
                diagnostics: [
                    Diagnostic(
                        .error, rule: .storeUnreachable, "stopped before the store was reached: \(reason)",
                        hint: "check the --store URI, and that the database accepts connections from this machine")
                ], isConfigurationError: false)
        }
        snapshot?.start()
    }

    /// The follower of the store's changes as a service, reloading through `reload`: started after the first load,
    /// which read what the start reached.
    func following(reload: @escaping @Sendable (LoadScope) -> [Diagnostic]) -> some Service {
        Following(replica: self, reload: reload)
    }

    /// ``following(reload:)``.
    private final class Following: Service {
        let replica: StoreReplica
        let reload: @Sendable (LoadScope) -> [Diagnostic]

        init(replica: StoreReplica, reload: @escaping @Sendable (LoadScope) -> [Diagnostic]) {
            self.replica = replica
            self.reload = reload
        }

        func start() {
            guard let reached = replica.reached.withLock({ $0 }) else { return }
            replica.follow(after: reached, reload: reload)
            replica.logger.info(
                "following the store",
                metadata: ["store": "\(replica.link.server)", "replica": "\(replica.settings.replica)"])
        }

        func stop() {
            replica.follower.withLock { $0 }?.stop()
        }
    }

    /// Starts following the store's changes after the first load (which read what `reached` says), reloading
    /// through `reload`.
    private func follow(after reached: Reached, reload: @escaping @Sendable (LoadScope) -> [Diagnostic]) {
        let follower = StoreFollower(
            uri: settings.uri, link: link, replica: settings.replica, snapshot: snapshot, logger: logger,
            reload: reload)
        switch reached {
        case .store(let head):
            follower.loaded(at: head, fromSnapshot: false)
            snapshot?.commit(head)
        case .snapshot(let change):
            follower.loaded(at: change, fromSnapshot: true)
        case .stopped:
            return
        }
        follower.start()
        self.follower.withLock { $0 = follower }
    }

    /// What the replica knows of the store.
    var status: StoreStatus {
        var status = follower.withLock { $0 }?.current ?? waiting.withLock { $0 }
        status.fileBytesFetched = source.files.fetchedBytes
        return status
    }

    /// Stops following (if ``following(reload:)`` did not already), writes what the snapshot has queued, and closes every
    /// connection.
    func stop() {
        follower.withLock { $0 }?.stop()
        snapshot?.stop()
        link.close()
    }
}
