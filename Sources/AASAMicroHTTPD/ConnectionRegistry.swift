internal import AASACore
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The open connections of one listener, and the reaper that enforces the request-head deadline.
///
/// libmicrohttpd's connection timeout only measures inactivity, so a client that trickles one header
/// byte every few seconds (slowloris) would hold its connection forever. The registry closes any
/// connection that has not completed its request head (TLS handshake included) within the deadline,
/// however active it is.
///
/// Sockets are shut down, not closed: libmicrohttpd sees end-of-stream and cleans up as for any client
/// that hung up. That is safe against descriptor reuse because libmicrohttpd reports a connection closed
/// (``unregister(_:)``) before it closes the socket, and the reaper shuts sockets down under the same lock:
/// a socket still registered is still this connection's.
final class ConnectionRegistry: Sendable {
    /// How long a client has to send a complete request head, in nanoseconds; 0 disables the deadline.
    let headerTimeout: UInt64
    private let open = Mutex<[ObjectIdentifier: ConnectionState]>([:])
    private let closedForDeadline = Atomic<Int>(0)
    private let startedTotal = Atomic<Int>(0)

    init(headerTimeout: Duration) {
        let (seconds, attoseconds) = headerTimeout.components
        self.headerTimeout = UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
    }

    /// Connections closed so far because their request head did not arrive in time.
    var headerTimeouts: Int { closedForDeadline.load(ordering: .relaxed) }

    /// Number of connections registered (open and not yet reported closed).
    var count: Int { open.withLock { $0.count } }

    /// Connections libmicrohttpd reported started so far, registered or not.
    var started: Int { startedTotal.load(ordering: .relaxed) }

    /// Counts a connection libmicrohttpd reports started.
    func countStarted() {
        startedTotal.add(1, ordering: .relaxed)
    }

    func register(_ connection: ConnectionState) {
        open.withLock { $0[ObjectIdentifier(connection)] = connection }
    }

    func unregister(_ connection: ConnectionState) {
        _ = open.withLock { $0.removeValue(forKey: ObjectIdentifier(connection)) }
    }

    /// Shuts down every connection whose request-head deadline has passed; returns how many.
    @discardableResult
    func reap(now: UInt64 = ConnectionState.now()) -> Int {
        open.withLock { connections -> Int in
            var closed = 0
            for connection in connections.values {
                let deadline = connection.headerDeadline.load(ordering: .relaxed)
                guard deadline != 0, deadline < now else { continue }
                connection.headerDeadline.store(0, ordering: .relaxed)
                closedForDeadline.add(1, ordering: .relaxed)  // counted before the client can see the close
                shutdown(connection.socket, Int32(SHUT_RDWR))
                closed += 1
            }
            return closed
        }
    }

    /// How often the reaper looks: a quarter of the deadline, between 0.1 s and 1 s, so a connection
    /// lives at most that much beyond its deadline.
    var reapInterval: Duration {
        .nanoseconds(Int64(min(1_000_000_000, max(100_000_000, headerTimeout / 4))))
    }

    /// Starts the reaper on a thread of its own, which runs until the returned loop is stopped (and joined);
    /// `report` hears of every sweep that closed any. `nil` without a deadline, or when the thread cannot start.
    func startReaper(report: @escaping @Sendable (Int) -> Void) -> WorkerLoop? {
        guard headerTimeout > 0 else { return nil }
        let interval = reapInterval.timeInterval
        let loop = WorkerLoop()
        let failure = loop.start("conn-reaper") { [self] in
            while loop.pause(until: Date().addingTimeInterval(interval)) {
                let closed = reap()
                if closed > 0 { report(closed) }
            }
        }
        return failure == nil ? loop : nil
    }
}
