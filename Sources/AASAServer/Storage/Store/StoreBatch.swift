import Synchronization

/// One batch of a listing's rows whose bytes are fetched together, when a load first needs one of them
/// (``StoreSource``): a domain whose revision the last load already read is never fetched, and each row's bytes are
/// let go as they are taken, so a load holds the batches being read, not every row at once.
final class StoreBatch<Content: Sendable>: Sendable {
    private struct State {
        var fetched = false
        var contents: [String: Content] = [:]
        var failure: StoreError?
    }

    private let rows: [Store.Listed]
    private let fetch: @Sendable ([Store.Listed]) throws -> [String: Content]
    /// Empty until the first ``take(_:)``; then what is left of the fetch, or its failure.
    private let state = Mutex(State())

    /// A batch of `rows`, fetched by `fetch`.
    init(_ rows: [Store.Listed], fetch: @escaping @Sendable ([Store.Listed]) throws -> [String: Content]) {
        self.rows = rows
        self.fetch = fetch
    }

    /// The bytes of `name`, fetching the batch first if no one has (others taking from it wait meanwhile); a failure
    /// says why the store could not give them.
    func take(_ name: String) -> Result<Content, StoreError> {
        state.withLock { state in
            if !state.fetched {
                state.fetched = true
                do {
                    state.contents = try fetch(rows)
                } catch {
                    state.failure = error as? StoreError ?? StoreError("\(error)")
                }
            }
            if let failure = state.failure { return .failure(failure) }
            guard let content = state.contents.removeValue(forKey: name) else {
                return .failure(StoreError("the row of \(name) was deleted while it was read; it is read again"))
            }
            return .success(content)
        }
    }
}
