import AASACore
import AASAPostgres
import Foundation

/// A replica's connections for reading the store: at most ``maximumConnections`` at once (the threads of a load
/// fetch their batches side by side; a read that finds them all in use waits for one), each used by one thread at a
/// time.
///
/// Only the ``StoreFollower`` decides when the store is reachable: while it is ``isOpen``, a read that finds no idle
/// connection makes one; while it is not, reads fail at once (a reload then keeps what is served) instead of each
/// waiting for a connection timeout. A read whose connection broke drops it.
final class StoreLink: @unchecked Sendable {
    /// Connections open at most.
    static let maximumConnections = 3

    private struct State {
        var idle: [Store] = []
        var open = 0
        var isOpen = false
    }

    /// The connection URI (never logged: it may hold a password).
    private let uri: String
    /// The server as messages name it, `host:port/database`.
    let server: String
    /// Guarded by ``condition``.
    private var state = State()
    private let condition = NSCondition()

    /// A link to `uri`, closed until ``open()``.
    init(uri: String, server: String) {
        self.uri = uri
        self.server = server
    }

    /// Whether reads may connect: the follower has just reached the store.
    var isOpen: Bool { condition.locked { state.isOpen } }

    /// Lets reads connect again.
    func open() {
        condition.locked { state.isOpen = true }
    }

    /// Closes every idle connection and fails every read until ``open()``: the follower lost the store.
    func close() {
        let idle = condition.locked {
            state.isOpen = false
            defer { state.idle = [] }
            state.open -= state.idle.count
            return state.idle
        }
        condition.broadcast()
        for store in idle { store.connection.close() }
    }

    /// Runs `body` with a connection of its own, made if none is idle (the schema is this server's: the follower
    /// migrated it when it connected).
    ///
    /// - Throws: ``StoreError`` when the link is closed; ``PostgresError`` from `body` or from connecting (a broken
    ///   connection is then dropped).
    func read<Value>(_ body: (Store) throws -> Value) throws -> Value {
        let taken: Store? = try condition.locked { () throws(StoreError) -> Store? in
            while true {
                guard state.isOpen else {
                    throw StoreError("the store at \(server) is not reachable; serving what was last read from it")
                }
                if let store = state.idle.popLast() { return store }
                if state.open < Self.maximumConnections {
                    state.open += 1
                    return nil
                }
                condition.wait()
            }
        }
        let store: Store
        do {
            store = try taken ?? Store(uri: uri, migrating: false)
        } catch {
            release()
            throw error
        }
        do {
            let value = try body(store)
            giveBack(store)
            return value
        } catch let error as PostgresError where error.code == .connectionLost || error.code == .closed {
            release()
            store.connection.close()
            throw error
        } catch {
            giveBack(store)
            throw error
        }
    }

    /// Counts a connection gone, and wakes a read waiting for one.
    private func release() {
        condition.locked { state.open -= 1 }
        condition.broadcast()
    }

    private func giveBack(_ store: Store) {
        let kept = condition.locked {
            guard state.isOpen else {
                state.open -= 1
                return false
            }
            state.idle.append(store)
            return true
        }
        condition.broadcast()
        if !kept { store.connection.close() }
    }
}
