import Synchronization

/// Patterns compiled once for every file a process compiles.
///
/// A pattern without a substitution variable compiles to the same automaton and the same problems in every file
/// (``WildcardPatternCompiler`` reads a file's variables only for `$(`), and a hosting provider's tenants write the
/// same few patterns (`/*`, `/buy/*`, an excluded `/account/*`) thousands of times: each is compiled for the first
/// file that has it, and every later file takes the result, whose automaton's arrays it then shares (one copy in
/// memory for all of them).
///
/// Bounded, since what is kept is what tenants write: only patterns of at most ``maximumSourceBytes`` bytes are kept,
/// at most ``capacity`` of them; a shard that fills is emptied and fills again with what files compile next, so
/// patterns every file uses stay cheap and one tenant's thousands of unique patterns cost only their own compiling.
/// A result a file's limits refuse (``PatternDiagnostic/Code/rulesTooComplex``) depends on that file and is never
/// kept. Safe to use from any thread: a load compiles its domains on every processor.
package final class SharedPatterns: Sendable {
    /// What a pattern compiles the same from, in any file.
    struct Key: Hashable, Sendable {
        var source: String
        var caseSensitive: Bool
        var percentEncoded: Bool
        var target: WildcardPatternCompiler.Target
    }

    /// The process's patterns.
    package static let shared = SharedPatterns(capacity: 4_096)

    /// The longest pattern kept, in UTF-8 bytes: typical patterns are a few dozen.
    static let maximumSourceBytes = 256

    /// The most patterns kept at once.
    let capacity: Int

    /// The table, in shards with a lock each, so that the threads of a load rarely wait for each other.
    private let shards: [Shard]

    private final class Shard: Sendable {
        let table = Mutex<[Key: WildcardPatternCompiler.Output]>([:])
    }

    /// An empty table keeping at most `capacity` patterns.
    init(capacity: Int) {
        self.capacity = capacity
        shards = (0..<8).map { _ in Shard() }
    }

    /// Whether `source` compiles the same in every file, and is short enough to keep.
    static func isShareable(_ source: String) -> Bool {
        source.utf8.count <= maximumSourceBytes && !source.usesVariable
    }

    /// The kept result for `key`, or `nil`.
    func output(for key: Key) -> WildcardPatternCompiler.Output? {
        shard(key).table.withLock { $0[key] }
    }

    /// Keeps `output` as what `key` compiles to; a shard already holding its share of ``capacity`` is emptied first.
    func keep(_ output: WildcardPatternCompiler.Output, for key: Key) {
        let limit = max(1, capacity / shards.count)
        // A full shard's patterns are freed after its lock is released, not while other threads wait for it.
        var full: [Key: WildcardPatternCompiler.Output] = [:]
        shard(key).table.withLock { table in
            if table.count >= limit { swap(&full, &table) }
            table[key] = output
        }
    }

    /// Forgets every kept pattern.
    package func removeAll() {
        for shard in shards { shard.table.withLock { $0.removeAll() } }
    }

    /// How many patterns are kept.
    var count: Int { shards.reduce(0) { sum, shard in sum + shard.table.withLock(\.count) } }

    /// The shard of `key`, chosen from its length and last byte (no hashing outside the lock).
    private func shard(_ key: Key) -> Shard {
        let source = key.source.utf8
        return shards[(source.count &+ Int(source.last ?? 0)) % shards.count]
    }
}
