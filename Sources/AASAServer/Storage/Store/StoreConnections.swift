import AASACore
import AASAPostgres
import Foundation

/// The tenant API's connections to the store: one per call in progress, so a read never waits behind another
/// caller's write, and every statement bounded by short timeouts, so a locked table or a slow database costs a caller
/// a few seconds and a 503, never a held thread.
///
/// At most ``maximum`` connections are open (the API's workers, which bound how many calls run at once); a call that
/// finds them all in use waits for one. Each connection sets `statement_timeout` and `lock_timeout` to ``timeout``
/// when it is made: a statement that runs longer, or waits longer for a lock (a `VACUUM FULL`, a migration, the change
/// lock held by a long `store push`), fails with SQLSTATE 57014 or 55P03, which ``unavailable(_:)`` names.
final class StoreConnections: @unchecked Sendable {
    /// Where to connect; `nil` for a pool of one given connection, never made again.
    private let uri: String?
    /// Connections open at most.
    let maximum: Int
    /// Each statement's bound, and each wait for a lock's.
    let timeout: Duration

    private struct State {
        var idle: [Store] = []
        var open = 0
    }

    /// Guarded by ``condition``.
    private var state = State()
    private let condition = NSCondition()

    /// Connections to `uri`, at most `maximum`, each statement bounded by `timeout`.
    init(uri: String, maximum: Int, timeout: Duration) {
        self.uri = uri
        self.maximum = max(1, maximum)
        self.timeout = timeout
        state = State()
    }

    /// `store` alone, its statements bounded by `timeout` (set now, when it can be).
    init(store: Store, timeout: Duration) {
        uri = nil
        maximum = 1
        self.timeout = timeout
        try? Self.bound(store, timeout)
        state = State(idle: [store], open: 1)
    }

    /// Runs `body` with a connection of its own: an idle one, else a new one while fewer than ``maximum`` are open,
    /// else the first one released. A connection that broke is dropped (the next call connects again).
    func using<Value>(_ body: (Store) throws -> Value) throws -> Value {
        let store = try take()
        do {
            let value = try body(store)
            release(store)
            return value
        } catch {
            release(store)
            throw error
        }
    }

    private func take() throws -> Store {
        let taken: Store? = condition.locked {
            while true {
                if let store = state.idle.popLast() { return store }
                if state.open < maximum, uri != nil {
                    state.open += 1
                    return nil
                }
                condition.wait()
            }
        }
        if let taken { return taken }
        do {
            let store = try Store(uri: uri!, migrating: false, connectTimeout: timeout + .seconds(2))
            try Self.bound(store, timeout)
            return store
        } catch {
            condition.locked { state.open -= 1 }
            condition.signal()
            throw error
        }
    }

    private func release(_ store: Store) {
        let alive = store.connection.isAlive || uri == nil
        if !alive { store.connection.close() }
        condition.locked {
            if alive {
                state.idle.append(store)
            } else {
                state.open -= 1
            }
        }
        condition.signal()
    }

    /// Sets the connection's statement and lock timeouts to `timeout`.
    private static func bound(_ store: Store, _ timeout: Duration) throws {
        let milliseconds = max(
            1, timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        try store.connection.execute(
            "SELECT set_config('statement_timeout', $1, false), set_config('lock_timeout', $1, false)",
            [.text(String(milliseconds))])
    }

    /// What a caller is told when `error` says the store is slow, locked or away (a statement or lock timeout, a lost
    /// connection, a failed connect), with the fix; `nil` for any other error.
    func unavailable(_ error: any Error) -> String? {
        guard let error = error as? PostgresError else { return nil }
        let seconds = "\(timeout.components.seconds) s"
        switch (error.code, error.sqlState) {
        case (_, "57014"):
            return "the store at \(error.server) did not answer within the API's statement timeout (\(seconds), "
                + "--api-store-timeout): it is slow or busy; retry later"
        case (_, "55P03"):
            return "a lock in the store at \(error.server) was held for over \(seconds) (--api-store-timeout): "
                + "another write, a store push, a migration or a VACUUM FULL holds it; retry later"
        case (.connect, _), (.connectionLost, _):
            return "the store at \(error.server) is not reachable (\(error.message)); retry later"
        default:
            return nil
        }
    }
}
