import AASACore
import AASAOpenSSL
import Foundation
import Synchronization

/// The answers of writes sent with an `Idempotency-Key`, kept in this process's memory so a retry of the same
/// write gets the first answer again and writes nothing.
///
/// Bounded before anything is kept: at most ``capacity`` keys (the least recently used one is dropped first),
/// each kept ``lifetime``, a key of at most ``maximumKeyLength`` characters; an answer is kept with the SHA-256 of
/// the request it answered (method, path, query and body), never the body. Keys are per caller name: one token
/// cannot replay another's answers. The cache is not shared between replicas and does not survive a restart: a
/// retry sent to another replica is a new write, which its If-Match (or the unchanged revision) then decides.
final class IdempotencyCache: Sendable {
    /// Keys kept at most.
    let capacity: Int
    /// How long an answer is replayed.
    let lifetime: TimeInterval
    /// The longest key accepted.
    static let maximumKeyLength = 255

    /// What a lookup found.
    enum Lookup: Equatable {
        /// The key is new (or expired): the write goes ahead, and its answer is kept.
        case miss
        /// The same request was answered: this is its answer.
        case replay(Response)
        /// The key was used for another request.
        case mismatch
    }

    private struct Entry {
        var digest: [UInt8]
        var answer: Response
        var stored: Date
        var used: UInt64
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var clock: UInt64 = 0
    }

    private let state = Mutex(State())
    /// Held from a key's lookup to its answer's storing.
    private let writing = NSLock()

    /// A cache of `capacity` keys kept `lifetime` seconds.
    init(capacity: Int = 10_000, lifetime: TimeInterval = 24 * 3600) {
        self.capacity = capacity
        self.lifetime = lifetime
    }

    /// The digest a key is kept with: the request's method, path, query and body.
    static func digest(method: String, path: String, query: String?, body: [UInt8]) -> [UInt8] {
        let head = Array("\(method) \(path)?\(query ?? "")\n".utf8)
        return SHA256Fingerprint(der: head + body).bytes
    }

    /// What `key` of `caller` holds for a request of `digest`, at `now`.
    func lookup(_ key: String, caller: String, digest: [UInt8], now: Date = Date()) -> Lookup {
        state.withLock { state in
            let name = caller + "\n" + key
            guard let entry = state.entries[name], now.timeIntervalSince(entry.stored) < lifetime else {
                state.entries[name] = nil
                return .miss
            }
            guard entry.digest == digest else { return .mismatch }
            state.clock += 1
            state.entries[name]?.used = state.clock
            return .replay(entry.answer)
        }
    }

    /// Keeps `answer` for `key` of `caller`, dropping the least recently used key when full.
    func store(_ key: String, caller: String, digest: [UInt8], answer: Response, now: Date = Date()) {
        state.withLock { state in
            let name = caller + "\n" + key
            if state.entries[name] == nil && state.entries.count >= capacity {
                // Expired keys go first; otherwise the least recently used. A linear pass, only when full.
                if let oldest = state.entries.min(by: { a, b in
                    let aExpired = now.timeIntervalSince(a.value.stored) >= lifetime
                    let bExpired = now.timeIntervalSince(b.value.stored) >= lifetime
                    return aExpired != bExpired ? aExpired : a.value.used < b.value.used
                })?.key {
                    state.entries[oldest] = nil
                }
            }
            state.clock += 1
            state.entries[name] = Entry(digest: digest, answer: answer, stored: now, used: state.clock)
        }
    }

    /// Runs `body` (a lookup, the write, the storing of its answer) while no other keyed write runs.
    func exclusively<Value>(_ body: () throws -> Value) rethrows -> Value {
        writing.lock()
        defer { writing.unlock() }
        return try body()
    }

    /// The keys kept now.
    var count: Int { state.withLock { $0.entries.count } }
}
