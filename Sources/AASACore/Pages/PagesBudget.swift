import Synchronization

/// The bytes of pages every domain of one load may read together (`serve --pages-memory`), taken as each file is
/// read, so a load stops reading pages the moment the total would pass the limit instead of reading everything
/// first.
///
/// Domains load on every processor at once, so when the total does not fit, which domains are left out depends on
/// the order they were read in; each one left out has a `pages-memory` error naming the file that did not fit, and
/// a reload keeps its last good version.
public final class PagesBudget: Sendable {
    /// The limit, in bytes.
    public let limit: Int
    private let used = Mutex(0)

    /// Creates a budget of `limit` bytes.
    public init(limit: Int) {
        self.limit = limit
    }

    /// Bytes not yet taken.
    public var remaining: Int { used.withLock { max(0, limit - $0) } }

    /// Takes `bytes` from the budget; `false` (and nothing taken) when they do not fit.
    public func take(_ bytes: Int) -> Bool {
        used.withLock { used in
            guard bytes <= limit - used else { return false }
            used += bytes
            return true
        }
    }
}
