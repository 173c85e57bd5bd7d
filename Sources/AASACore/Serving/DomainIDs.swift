import Synchronization

/// Small numbers standing for domain names, so per-request bookkeeping (request counters) keys on an `Int`
/// instead of hashing a name whose bytes, at thousands of domains, are never in cache
/// (docs/benchmarks.md, "What bounds the targets not met").
///
/// A number, once given, stands for the same name for the life of the process, across reloads: an old and a
/// new route table can serve side by side during a reload and still count under the same numbers. Number 0
/// is no domain (an unknown host). Every name ever configured keeps its number, a few dozen bytes each.
public final class DomainIDs: Sendable {
    private let state = Mutex<(ids: [String: Int], names: [String])>(([:], [""]))

    /// Creates an empty registry.
    public init() {}

    /// The number for `name`, given now if `name` has none yet; never 0.
    public func id(for name: String) -> Int {
        state.withLock { state in
            if let id = state.ids[name] { return id }
            state.names.append(name)
            state.ids[name] = state.names.count - 1
            return state.names.count - 1
        }
    }

    /// The number `name` has, without giving one; `nil` for a name never numbered.
    public func existingID(for name: String) -> Int? {
        state.withLock { $0.ids[name] }
    }

    /// The names of `ids`, in their order (`nil` for 0 or a number never given).
    public func names(of ids: some Sequence<Int>) -> [String?] {
        state.withLock { state in ids.map { $0 > 0 && $0 < state.names.count ? state.names[$0] : nil } }
    }
}
