import AASACore
import AASAOpenSSL
import Foundation
import Synchronization

/// The answers of writes sent with an `Idempotency-Key`, kept in this process's memory so a retry of the same
/// write gets the first answer again and writes nothing.
///
/// Bounded before anything is kept: at most ``capacity`` keys and ``maximumBytes`` of answers (the least recently
/// used key is dropped first; an answer larger than a tenth of the bytes is not kept), each kept ``lifetime``, a key
/// of at most ``maximumKeyLength`` characters; an answer is kept with the SHA-256 of
/// the request it answered (method, path, query and body), never the body. Keys are per caller name: one token
/// cannot replay another's answers. The cache is not shared between replicas and does not survive a restart: a
/// retry sent to another replica is a new write, which its If-Match (or the unchanged revision) then decides.
final class IdempotencyCache: Sendable {
    /// Keys kept at most.
    let capacity: Int
    /// Bytes of answers (bodies and headers) kept at most: a write's answer lists up to 100 classes of changed URLs
    /// with their examples, so ``capacity`` alone would not bound the memory.
    let maximumBytes: Int
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
        var bytes: Int
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var clock: UInt64 = 0
        var bytes = 0
    }

    private let state = Mutex(State())
    /// Held from a key's lookup to its answer's storing.
    private let writing = NSLock()

    /// A cache of `capacity` keys and `maximumBytes` of answers, kept `lifetime` seconds.
    init(capacity: Int = 10_000, maximumBytes: Int = 64 << 20, lifetime: TimeInterval = 24 * 3600) {
        self.capacity = capacity
        self.maximumBytes = maximumBytes
        self.lifetime = lifetime
    }

    /// What `answer` costs to keep: its body and its headers.
    static func size(of answer: Response) -> Int {
        answer.body.count + answer.headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count }
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
                if let expired = state.entries.removeValue(forKey: name) { state.bytes -= expired.bytes }
                return .miss
            }
            guard entry.digest == digest else { return .mismatch }
            state.clock += 1
            state.entries[name]?.used = state.clock
            return .replay(entry.answer)
        }
    }

    /// Keeps `answer` for `key` of `caller`, dropping the least recently used keys until it fits; an answer over a
    /// tenth of ``maximumBytes`` is not kept (its retry is a new write, which its precondition decides).
    func store(_ key: String, caller: String, digest: [UInt8], answer: Response, now: Date = Date()) {
        let size = Self.size(of: answer)
        guard size <= maximumBytes / 10 else { return }
        state.withLock { state in
            let name = caller + "\n" + key
            if let replaced = state.entries.removeValue(forKey: name) { state.bytes -= replaced.bytes }
            while !state.entries.isEmpty
                && (state.entries.count >= capacity || state.bytes + size > maximumBytes)
            {
                // Expired keys go first; otherwise the least recently used. A linear pass, only when full.
                guard
                    let oldest = state.entries.min(by: { a, b in
                        let aExpired = now.timeIntervalSince(a.value.stored) >= lifetime
                        let bExpired = now.timeIntervalSince(b.value.stored) >= lifetime
                        return aExpired != bExpired ? aExpired : a.value.used < b.value.used
                    })?.key, let dropped = state.entries.removeValue(forKey: oldest)
                else { break }
                state.bytes -= dropped.bytes
            }
            state.clock += 1
            state.bytes += size
            state.entries[name] = Entry(digest: digest, answer: answer, stored: now, used: state.clock, bytes: size)
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
    /// The bytes of answers kept now.
    var bytes: Int { state.withLock { $0.bytes } }
}
