internal import AASACore
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Closes a connection whose request was refused the way nginx's `lingering_close` does, so that the client
/// reads the refusal instead of a reset.
///
/// A refused request (431 or 414 for an oversized head, 413 for a body, 400) is answered before the client has
/// sent all of it, and libmicrohttpd stops reading. Closing a socket with unread bytes makes the kernel send a
/// reset, which destroys the answer still in flight, or makes the client's own send fail first (over HTTPS,
/// `curl: (55) Send failure: Broken pipe` for a 65 KB header). So such a socket is kept open here, on a
/// descriptor of its own, after libmicrohttpd closed its descriptor: its sending side is shut down (the client
/// sees the end of the answer), and whatever the client still sends is read and discarded until it closes its
/// side, for at most ``duration`` and ``byteLimit``; then the socket is closed.
///
/// Bounds, decided before any byte is read: ``capacity`` sockets per listener linger at once (a refusal beyond
/// it is closed at once, as without lingering); each for at most ``duration`` and ``byteLimit``. One thread per
/// listener reads them, started when the first socket lingers and ended when none is left; ``stop()`` (when the
/// listener stops) closes the sockets still lingering, as libmicrohttpd closes its own connections then, and joins
/// the thread.
final class LingeringClose: Sendable {
    /// How long a socket lingers at most (nginx's `lingering_time` is 30 s, its `lingering_timeout` 5 s).
    static let duration: Duration = .seconds(5)
    /// Bytes read and discarded per socket at most; beyond them the socket is closed.
    static let byteLimit = 1 << 20
    /// Sockets lingering at once per listener at most.
    static let capacity = 512

    private struct Lingering {
        var socket: Int32
        var deadline: UInt64
        var discarded: Int
    }

    private struct State {
        var sockets: [Lingering] = []
        var reading = false
        /// The reading thread, running or ended but not joined yet.
        var thread: ServiceThread?
        var stopped = false
    }

    private let state = Mutex(State())
    private let deadlineNanoseconds: UInt64

    init(duration: Duration = LingeringClose.duration) {
        let (seconds, attoseconds) = duration.components
        deadlineNanoseconds = UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
    }

    /// Sockets lingering now.
    var count: Int { state.withLock { $0.sockets.count } }

    /// Whether the client's socket `socket` holds bytes not read yet (a close would reset the connection); `false`
    /// when the client has closed its side or the socket is gone.
    static func hasUnreadBytes(_ socket: Int32) -> Bool {
        var byte: UInt8 = 0
        return recv(socket, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) > 0
    }

    /// Writes `bytes` to the client's plain socket at once, without waiting for room (a refusal written while the
    /// daemon still reads the request); what does not fit is dropped with the connection.
    static func sendAtOnce(_ socket: Int32, _ bytes: UnsafeRawBufferPointer) {
        _ = send(socket, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
    }

    /// Whether the client's socket is still open for reading: it has unread bytes or may send more (it has not
    /// closed its side).
    static func clientMaySend(_ socket: Int32) -> Bool {
        var byte: UInt8 = 0
        let received = recv(socket, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        return received > 0 || (received < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
    }

    /// Lingers on a duplicate of `socket`, which libmicrohttpd is about to close; `false` when ``capacity``
    /// sockets already linger (the connection then closes as it would have).
    @discardableResult
    func adopt(_ socket: Int32) -> Bool {
        let copy = dup(socket)
        guard copy >= 0 else { return false }
        let deadline = ConnectionState.now() &+ deadlineNanoseconds
        let adopted = state.withLock { state -> (adopted: Bool, ended: ServiceThread?) in
            guard !state.stopped, state.sockets.count < Self.capacity else { return (false, nil) }
            // The answer ends here for the client (TCP FIN), while its bytes are still read; before the socket is
            // listed, so the reading thread never closes one that is still to be shut down.
            shutdown(copy, Int32(SHUT_WR))
            state.sockets.append(Lingering(socket: copy, deadline: deadline, discarded: 0))
            guard !state.reading else { return (true, nil) }
            // The thread that read the last sockets has left its loop (it cleared `reading`): joined below, outside
            // the lock, as its successor starts.
            let ended = state.thread
            state.reading = true
            state.thread = try? ServiceThread(name: "lingering-close") { [self] in read() }
            if state.thread == nil {
                state.sockets.removeLast()
                state.reading = false
                return (false, ended)
            }
            return (true, ended)
        }
        adopted.ended?.join()
        guard adopted.adopted else {
            close(copy)
            return false
        }
        return true
    }

    /// The kernel's id of the reading thread while it runs, 0 otherwise: for tests that check it is gone after
    /// ``stop()``.
    var threadID: Int32 { state.withLock { $0.thread }?.threadID ?? 0 }

    /// Closes the sockets still lingering and returns once the reading thread has ended (within 0.1 s: it looks
    /// that often); no socket lingers from then on.
    func stop() {
        let thread = state.withLock { state in
            state.stopped = true
            return state.thread
        }
        thread?.join()
        let left = state.withLock { state in
            defer { state.sockets = [] }
            return state.sockets
        }
        for lingering in left { close(lingering.socket) }
    }

    /// Reads and discards from every lingering socket until none is left, or until ``stop()``.
    private func read() {
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            guard
                let sockets = state.withLock({ state -> [Lingering]? in
                    if state.sockets.isEmpty || state.stopped {
                        state.reading = false
                        return nil
                    }
                    return state.sockets
                })
            else { return }
            var descriptors = sockets.map { pollfd(fd: $0.socket, events: Int16(POLLIN), revents: 0) }
            // At most 100 ms, so sockets adopted meanwhile are read soon and deadlines are kept to 0.1 s.
            let nearest = sockets.map(\.deadline).min() ?? 0
            let now = ConnectionState.now()
            let wait = nearest > now ? min(100, Int32((nearest - now) / 1_000_000) + 1) : 0
            _ = poll(&descriptors, nfds_t(descriptors.count), wait)
            let after = ConnectionState.now()
            var discarded: [Int32: Int] = [:]
            var finished: Set<Int32> = []
            for (index, lingering) in sockets.enumerated() {
                var total = lingering.discarded
                var done = after >= lingering.deadline
                if !done, descriptors[index].revents != 0 {
                    while total < Self.byteLimit {
                        let count = buffer.withUnsafeMutableBytes {
                            recv(
                                lingering.socket, $0.baseAddress, min($0.count, Self.byteLimit - total),
                                Int32(MSG_DONTWAIT))
                        }
                        if count > 0 {
                            total += count
                        } else {
                            // 0: the client closed its side; an error other than "nothing yet": gone.
                            done = count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                            break
                        }
                    }
                    if total >= Self.byteLimit { done = true }
                }
                if done { finished.insert(lingering.socket) } else { discarded[lingering.socket] = total }
            }
            state.withLock { state in
                state.sockets.removeAll { finished.contains($0.socket) }
                for index in state.sockets.indices {
                    if let total = discarded[state.sockets[index].socket] { state.sockets[index].discarded = total }
                }
            }
            for socket in finished { close(socket) }
        }
    }
}
