import Foundation

/// A row as a replica's listing found it (``StoreSource``): its revision, and its bytes, the batch that fetches
/// them, or why they are not read.
struct StoreReference<Content: Sendable>: Sendable {
    /// Where the bytes are.
    enum Bytes: Sendable {
        /// Read already (the snapshot's rows), or refused from their size.
        case read(Result<Content, StoreError>)
        /// Fetched with their batch when first taken.
        case batch(StoreBatch<Content>)
        /// Read when taken, from a copy (the snapshot); a failure is that row's refusal.
        case load(@Sendable () -> Result<Content, StoreError>)
    }

    /// What taking the bytes gave.
    enum Taken {
        case content(Content)
        /// Refused: over a cap, or a snapshot file that is not a record.
        case refused(StoreError)
        /// The store did not answer.
        case unreachable(StoreError)
    }

    /// The change that last wrote the row.
    var changeID: Int64
    /// When that change committed.
    var changedAt: Date
    var bytes: Bytes

    /// The bytes of the row named `name`.
    func take(_ name: String) -> Taken {
        switch bytes {
        case .read(.success(let content)): .content(content)
        case .read(.failure(let refusal)): .refused(refusal)
        case .load(let read):
            switch read() {
            case .success(let content): .content(content)
            case .failure(let refusal): .refused(refusal)
            }
        case .batch(let batch):
            switch batch.take(name) {
            case .success(let content): .content(content)
            case .failure(let error): .unreachable(error)
            }
        }
    }
}
