import AASACore
import Synchronization

/// The native forms of prepared responses kept for the requests to come, at most ``capacity`` of them: a domain's
/// are built when it is first asked for, and those asked for least recently are let go first.
///
/// The forms live in the prepared responses themselves (``PreparedResponse/transportForm(secure:as:)``), so a
/// request for a kept one takes only its response's own lock. The cache keeps a ring of the forms it let in, and
/// approximates recency by CLOCK: each request marks the form it sends; when a new form needs room, the sweep passes
/// over the ring, unmarking the marked ones, and lets go of the first it finds unmarked. The ring holds its
/// responses weakly: a response a reload dropped leaves its place free. A form let go stays alive while a
/// connection is still sending it (libmicrohttpd's reference). Safe to use from every listener thread at once.
public final class ResponseCache: Sendable {
    /// The most native forms kept; 0 keeps none (each request builds its own).
    public let capacity: Int
    private let ring = Mutex(Ring())
    private let counters = Counters()

    /// The forms let in, in the order of the sweep.
    private struct Ring {
        var entries: [Entry] = []
        /// Where the sweep starts next.
        var hand = 0
    }

    /// One form let in: the response that keeps it, and which of its forms.
    private struct Entry {
        weak var response: PreparedResponse?
        let secure: Bool
    }

    /// Counts since the cache was made (``figures``).
    private final class Counters: Sendable {
        let builds = Atomic<Int>(0)
        let evictions = Atomic<Int>(0)
    }

    /// What the cache has done since it was made, and holds now.
    public struct Figures: Sendable, Equatable {
        /// Forms built for a request.
        public var builds: Int
        /// Forms let go to make room.
        public var evictions: Int
        /// Forms let in and kept now (at most ``capacity``).
        public var count: Int
    }

    /// The most forms a cache keeps unless told otherwise: about 0.6 KB each, about 12 MB in all.
    public static let defaultCapacity = 20_000

    /// A cache keeping at most `capacity` native forms (a negative capacity keeps none).
    public init(capacity: Int = ResponseCache.defaultCapacity) {
        self.capacity = max(0, capacity)
    }

    /// The native form to send `prepared` with over plain HTTP or TLS (`secure`): the one kept, or one built now and
    /// kept; `nil` when libmicrohttpd refuses to build it.
    @inline(__always)
    func native(for prepared: PreparedResponse, secure: Bool) -> NativeResponse? {
        prepared.transportForm(secure: secure, as: NativeResponse.self) ?? built(for: prepared, secure: secure)
    }

    /// Builds the native form of `prepared` and lets it in, making room first.
    private func built(for prepared: PreparedResponse, secure: Bool) -> NativeResponse? {
        guard let made = try? NativeResponse(prepared.response, secure: secure) else { return nil }
        counters.builds.add(1, ordering: .relaxed)
        guard capacity > 0 else { return made }
        let (form, isNew) = prepared.keep(made, secure: secure)
        guard isNew else { return form }
        // What the sweep lets go is released after the lock, with this array.
        let released = ring.withLock { ring in
            Self.letIn(Entry(response: prepared, secure: secure), into: &ring, capacity: capacity)
        }
        counters.evictions.add(released.count, ordering: .relaxed)
        return form
    }

    /// Places `entry` in the ring: at its end while it has room, else where the sweep lets a form go (CLOCK); returns
    /// the form let go. Marks set again while the sweep runs could keep it going: after two turns it takes the form
    /// at the hand whatever its mark.
    private static func letIn(_ entry: Entry, into ring: inout Ring, capacity: Int) -> [any AnyObject & Sendable] {
        if ring.entries.count < capacity {
            ring.entries.append(entry)
            return []
        }
        var passed = 0
        while true {
            let index = ring.hand
            ring.hand = (index + 1) % ring.entries.count
            let held = ring.entries[index]
            guard let response = held.response else {
                ring.entries[index] = entry
                return []
            }
            switch response.sweepTransportForm(secure: held.secure, force: passed >= 2 * ring.entries.count) {
            case .used:
                passed += 1
            case .absent:
                ring.entries[index] = entry
                return []
            case .released(let form):
                ring.entries[index] = entry
                return [form]
            }
        }
    }

    /// What the cache has done, and how many forms it keeps.
    public var figures: Figures {
        Figures(
            builds: counters.builds.load(ordering: .relaxed),
            evictions: counters.evictions.load(ordering: .relaxed),
            count: ring.withLock { ring in ring.entries.reduce(0) { $0 + ($1.response == nil ? 0 : 1) } })
    }
}
