import AASACore
import Foundation

/// One row of the store as a replica reads it: its revision (the change that wrote it, and when), and its content,
/// or why the content was not read (it holds more than a folder may, checked on the sizes the database reports).
struct StoreRow<Content: Sendable>: Sendable {
    /// The change that last wrote the row.
    var changeID: Int64
    /// When that change committed.
    var changedAt: Date
    /// What the row holds, or the message naming the row and the cap it is over.
    var content: Result<Content, StoreError>
}

/// A domain's row.
typealias DomainRow = StoreRow<StoredDomain>
/// A certificate's row (its private key still sealed).
typealias CertificateRow = StoreRow<StoredCertificate>
