import Synchronization

/// The credentials of ``DeferredCredential``s imported for handshakes, at most ``capacity`` of them, the least
/// recently used let go first.
///
/// Two generations approximate recency at a dictionary lookup per handshake: credentials are imported into the young
/// one, a hit in the old one moves there, and when the young one holds half the capacity it becomes the old one and
/// the old one is let go. A credential let go stays alive while a connection that presented it is open (the
/// connection holds it). Safe to use from every listener thread at once.
public final class CredentialCache: Sendable {
    /// The most credentials kept; 0 keeps none (each handshake imports its certificate).
    public let capacity: Int
    /// How many the young generation takes before it becomes the old one.
    private let generationSize: Int
    private let generations = Mutex<Generations>(Generations())
    private let counters = Counters()

    private struct Generations {
        var young: [UInt64: GnuTLSCredential] = [:]
        var old: [UInt64: GnuTLSCredential] = [:]
    }

    /// Counts since the cache was made (``figures``).
    private final class Counters: Sendable {
        let hits = Atomic<Int>(0)
        let imports = Atomic<Int>(0)
        let failures = Atomic<Int>(0)
        let evictions = Atomic<Int>(0)
    }

    /// What the cache has done since it was made, and holds now.
    public struct Figures: Sendable, Equatable {
        /// Handshakes served a credential the cache held.
        public var hits: Int
        /// Credentials imported for a handshake (the cache held none for its certificate).
        public var imports: Int
        /// Imports that failed (the handshake failed; the certificate's ``DeferredCredential/failure`` says why).
        public var failures: Int
        /// Credentials let go to make room.
        public var evictions: Int
        /// Credentials held now.
        public var count: Int
    }

    /// A cache keeping at most `capacity` credentials (a negative capacity keeps none).
    public init(capacity: Int) {
        self.capacity = max(0, capacity)
        generationSize = max(1, (self.capacity + 1) / 2)
    }

    /// The credential of `deferred`, from the cache or imported now (and kept); `nil` when GnuTLS refuses it
    /// (``DeferredCredential/failure``). `label` names the certificate in that failure.
    func credential(for deferred: DeferredCredential, label: @autoclosure () -> String) -> GnuTLSCredential? {
        let serial = deferred.serial
        // What a rotation lets go is released after the lock, with the returned dictionary.
        let (held, releasedByHit) = generations.withLock {
            generations -> (GnuTLSCredential?, [UInt64: GnuTLSCredential]) in
            if let credential = generations.young[serial] { return (credential, [:]) }
            guard let credential = generations.old.removeValue(forKey: serial) else { return (nil, [:]) }
            generations.young[serial] = credential
            return (credential, Self.rotated(&generations, at: generationSize))
        }
        if let held {
            counters.hits.add(1, ordering: .relaxed)
            counters.evictions.add(releasedByHit.count, ordering: .relaxed)
            return held
        }
        guard let credential = deferred.imported(label: label()) else {
            counters.failures.add(1, ordering: .relaxed)
            return nil
        }
        counters.imports.add(1, ordering: .relaxed)
        guard capacity > 0 else { return credential }
        let released = generations.withLock { generations -> [UInt64: GnuTLSCredential] in
            // Another handshake may have imported it meanwhile: either credential serves.
            generations.young[serial] = credential
            return Self.rotated(&generations, at: generationSize)
        }
        counters.evictions.add(released.count, ordering: .relaxed)
        return credential
    }

    /// Makes the young generation the old one once it holds `size`, returning what the old one held (for the caller
    /// to release outside the lock).
    private static func rotated(_ generations: inout Generations, at size: Int) -> [UInt64: GnuTLSCredential] {
        guard generations.young.count >= size else { return [:] }
        let released = generations.old
        generations.old = generations.young
        generations.young = [:]
        return released
    }

    /// What the cache has done, and how many credentials it holds.
    public var figures: Figures {
        Figures(
            hits: counters.hits.load(ordering: .relaxed), imports: counters.imports.load(ordering: .relaxed),
            failures: counters.failures.load(ordering: .relaxed),
            evictions: counters.evictions.load(ordering: .relaxed),
            count: generations.withLock { $0.young.count + $0.old.count })
    }
}
