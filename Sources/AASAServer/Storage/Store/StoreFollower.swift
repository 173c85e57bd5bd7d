import AASACore
import AASAPostgres
import Foundation
import Logging
import Synchronization

/// Follows the store's changes on a thread of its own: `LISTEN aasa_changes` on a connection of its own, and after
/// each notification (and every ``pollInterval`` without one) reads the `changes` rows after the last one applied
/// and reloads the domains and certificates they name (``LoadScope``), so a reload costs what changed.
///
/// Writes commit in the order of their change ids (``StoreSchema/changeLockKey``), so "every change up to n" is
/// exact: a replica that was disconnected catches up with the changes it missed, and one that missed more than
/// ``maximumCatchUp``, that started from its snapshot, or whose last applied change is older than what `changes`
/// was pruned through (``Store/pruneChanges(olderThan:)``: some of the changes it missed are gone), reloads
/// everything. When the connection is lost the replica keeps serving what it has, closes
/// its reading connections (``StoreLink``) and tries again with a backoff up to ``maximumBackoff``; the loss and the
/// recovery are logged once each.
final class StoreFollower: Service, @unchecked Sendable {
    /// How long a wait for a notification lasts before the changes are read anyway.
    static let pollInterval: Duration = .seconds(5)
    /// The most changes applied one by one; more are applied by a reload of everything.
    static let maximumCatchUp = 10_000
    /// The longest wait between two attempts to reconnect.
    static let maximumBackoff: Duration = .seconds(5)

    private let uri: String
    private let link: StoreLink
    private let snapshot: StoreSnapshot?
    private let logger: Logger
    /// Reloads what a scope names and returns the load's findings.
    private let reload: @Sendable (LoadScope) -> [Diagnostic]
    private let status: Mutex<StoreStatus>
    private let loop = WorkerLoop()
    /// Guarded by the loop's lock.
    private var listening: PostgresConnection?
    /// Only the follower's thread touches these after ``start(after:)``.
    private var applied: Int64 = 0
    private var reloadsEverything = false

    /// A follower of the store at `uri` whose reads go through `link`; `reload` reloads a scope.
    init(
        uri: String, link: StoreLink, replica: String, snapshot: StoreSnapshot?, logger: Logger,
        reload: @escaping @Sendable (LoadScope) -> [Diagnostic]
    ) {
        self.uri = uri
        self.link = link
        self.snapshot = snapshot
        self.logger = logger
        self.reload = reload
        status = Mutex(StoreStatus(server: link.server, replica: replica))
    }

    /// What the replica knows of the store now.
    var current: StoreStatus { status.withLock { $0 } }

    /// Records the start's load: from the store (`connected`), at change `change`, or from the snapshot.
    func loaded(at change: Int64, fromSnapshot: Bool) {
        applied = change
        // What a snapshot holds may be another shard's, or older than its state says: once the store answers, the
        // replica reads every row again (only the rows whose revision differs are fetched).
        reloadsEverything = fromSnapshot
        status.withLock { status in
            status.lastChange = change
            status.servingSnapshot = fromSnapshot
            status.state = fromSnapshot ? .reconnecting : .connected
        }
    }

    func start() {
        loop.start("store-follower") { [self] in run() }
    }

    func stop() {
        var connection: PostgresConnection?
        loop.stop(whileLocked: { connection = listening }, wake: { connection?.close() })
    }

    private func run() {
        var backoff: Duration = .milliseconds(100)
        var lost = false
        while !loop.isStopping {
            do {
                let store = try connect()
                if lost { logger.info("store connection restored", metadata: ["store": "\(link.server)"]) }
                lost = false
                backoff = .milliseconds(100)
                try catchUp(store)
                while !loop.isStopping {
                    _ = try store.connection.waitForNotification(timeout: Self.pollInterval)
                    // One read of the changes covers every notification that came meanwhile.
                    while try store.connection.waitForNotification(timeout: .zero) != nil {}
                    try catchUp(store)
                }
            } catch {
                if loop.isStopping { break }
                link.close()
                loop.locked { listening = nil }
                status.withLock { status in
                    status.state = .reconnecting
                    status.problem = "\(error)"
                }
                if !lost {
                    logger.error(
                        "store connection lost; serving the last good state and reconnecting",
                        metadata: ["store": "\(link.server)", "reason": "\(error)"])
                    lost = true
                }
                pause(backoff)
                backoff = min(backoff * 2, Self.maximumBackoff)
            }
        }
        loop.locked { listening }?.close()
    }

    /// Connects, upgrades the schema if needed, listens, and opens the reading connections.
    private func connect() throws -> Store {
        let store = try Store(uri: uri, migrating: true)
        try store.connection.listen(StoreSchema.channel)
        let kept = loop.locked {
            guard !loop.stoppingLocked else { return false }
            listening = store.connection
            return true
        }
        guard kept else {
            store.connection.close()
            throw StoreError("stopping")
        }
        if snapshot?.isServing == true {
            snapshot?.stopServing()
        }
        link.open()
        status.withLock { status in
            status.state = .connected
            status.problem = nil
        }
        return store
    }

    /// Applies the changes after the last one applied: the domains and certificates they name, or everything when
    /// there are more than ``maximumCatchUp``.
    private func catchUp(_ store: Store) throws {
        let changes = try store.changes(after: applied, limit: Self.maximumCatchUp + 1)
        // Read after the changes: a pruning that came before that read is seen here (the point only grows).
        let pruned = try store.changesPrunedThrough()
        if applied < pruned { reloadsEverything = true }
        guard !changes.isEmpty || reloadsEverything else {
            // What is served is the store's as it stands, even when it came from the snapshot.
            status.withLock { $0.servingSnapshot = false }
            return
        }
        var reached = changes.last?.id ?? applied
        let scope: LoadScope
        if changes.count > Self.maximumCatchUp || reloadsEverything {
            // Every change up to the head is in what the reload reads (the head's own row may be pruned).
            reached = max(try store.lastChange(), pruned)
            scope = .everything
        } else {
            var domains: Set<String> = []
            var certificates: Set<String> = []
            for change in changes {
                switch change.kind {
                case .domain?, .domainRemoved?: domains.insert(change.name)
                case .certificate?, .certificateRemoved?: certificates.insert(change.name)
                case nil: reloadsEverything = true
                }
            }
            scope = reloadsEverything ? .everything : LoadScope(domains: domains, certificates: certificates)
        }
        let findings = reload(scope)
        if let failure = findings.first(where: { $0.rule == .storeUnreachable }) {
            // Nothing is marked applied: the next connection reads these changes again.
            throw StoreError(failure.message)
        }
        reloadsEverything = false
        let count = changes.count
        applied = reached
        snapshot?.commit(reached)
        status.withLock { status in
            status.lastChange = reached
            status.lastChangeAppliedAt = Date()
            status.changesApplied += count
            status.servingSnapshot = false
        }
    }

    /// Waits `duration`, or until ``stop()``.
    private func pause(_ duration: Duration) {
        let until = Date().addingTimeInterval(duration.timeInterval)
        loop.pause(until: until)
    }
}
