import AASAPostgres
import Foundation
import Synchronization

/// A replica's connections for reading the store: at most ``maximumConnections`` at once (the two halves of a
/// load read side by side), each used by one thread at a time.
///
/// Only the ``StoreFollower`` decides when the store is reachable: while it is ``isOpen``, a read that finds no idle
/// connection makes one; while it is not, reads fail at once (a reload then keeps what is served) instead of each
/// waiting for a connection timeout. A read whose connection broke drops it.
final class StoreLink: Sendable {
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
    private let state = Mutex(State())

    /// A link to `uri`, closed until ``open()``.
    init(uri: String, server: String) {
        self.uri = uri
        self.server = server
    }

    /// Whether reads may connect: the follower has just reached the store.
    var isOpen: Bool { state.withLock { $0.isOpen } }

    /// Lets reads connect again.
    func open() {
        state.withLock { $0.isOpen = true }
    }

    /// Closes every idle connection and fails every read until ``open()``: the follower lost the store.
    func close() {
        let idle = state.withLock { state in
            state.isOpen = false
            defer { state.idle = [] }
            state.open -= state.idle.count
            return state.idle
        }
        for store in idle { store.connection.close() }
    }

    /// Runs `body` with a connection of its own, made if none is idle (the schema is this server's: the follower
    /// migrated it when it connected).
    ///
    /// - Throws: ``StoreError`` when the link is closed or every connection is in use and none can be made;
    ///   ``PostgresError`` from `body` or from connecting (a broken connection is then dropped).
    func read<Value>(_ body: (Store) throws -> Value) throws -> Value {
        let taken: Store? = try state.withLock { state throws(StoreError) in
            guard state.isOpen else {
                throw StoreError("the store at \(server) is not reachable; serving what was last read from it")
            }
            if let store = state.idle.popLast() { return store }
            guard state.open < Self.maximumConnections else {
                throw StoreError("the store at \(server): every connection is in use")
            }
            state.open += 1
            return nil
        }
        let store: Store
        do {
            store = try taken ?? Store(uri: uri, migrating: false)
        } catch {
            state.withLock { $0.open -= 1 }
            throw error
        }
        do {
            let value = try body(store)
            giveBack(store)
            return value
        } catch let error as PostgresError where error.code == .connectionLost || error.code == .closed {
            state.withLock { $0.open -= 1 }
            store.connection.close()
            throw error
        } catch {
            giveBack(store)
            throw error
        }
    }

    private func giveBack(_ store: Store) {
        let kept = state.withLock { state in
            guard state.isOpen else {
                state.open -= 1
                return false
            }
            state.idle.append(store)
            return true
        }
        if !kept { store.connection.close() }
    }
}
