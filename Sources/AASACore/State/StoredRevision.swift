package import Foundation

/// The revision of a row of the store as a replica's listing reads it: the id of the change that last wrote the row
/// and when that change committed, from the text PostgreSQL sends (a `bigint`, and `extract(epoch FROM at)::float8`,
/// which is `Infinity` for a time of `'infinity'`).
package struct StoredRevision: Sendable, Equatable {
    /// The change that last wrote the row (`changes.id`).
    package var changeID: Int64
    /// When that change committed (`changes.at`).
    package var changedAt: Date

    package init(changeID: Int64, changedAt: Date) {
        self.changeID = changeID
        self.changedAt = changedAt
    }

    /// The revision of the cells `changeID` and `epochSeconds` of a listing row.
    ///
    /// - Throws: ``CheckedNumber/Failure`` naming `changes.id` when the id is no `bigint` of a change (at least 1),
    ///   or `changes.at of change <id>` when the time is not finite or outside years 1 to 9999.
    package static func read(changeID: String?, epochSeconds: String?) throws(CheckedNumber.Failure) -> StoredRevision {
        let id: Int64 = try CheckedNumber.integer(changeID, in: 1...Int64.max, field: "changes.id")
        let at = try CheckedNumber.date(secondsSince1970: epochSeconds, field: "changes.at of change \(id)")
        return StoredRevision(changeID: id, changedAt: at)
    }
}
