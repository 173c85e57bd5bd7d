import AASACore
import AASAPostgres

/// The stamps `store push` keeps of the folders it compared rows with (``FolderStamp``): a folder whose stamp is the
/// one its row holds, at the change the row is still at, is left alone without being read or checked again.
///
/// The stamps are rows of `domain_push_stamps` and `certificate_push_stamps` (deleted with their domain or
/// certificate), written in the transaction of the row a push writes, or alone (no change, no announcement: nothing a
/// replica serves moves) when a push found the row already holding what the folder has. Every other write of the row
/// moves its change and so voids the stamp.
extension Store {
    /// The table of a stamped row.
    enum StampedTable: Sendable {
        case domains
        case certificates
    }

    /// A row's stamp, as a push reads it.
    struct PushStamp: Sendable, Equatable {
        /// The stamp of the folder the row was last compared with, or `nil` when the row has none that holds.
        var stamp: String?
        /// The change the row is at: for a domain, the later of its site.json's and its files'.
        var change: Int64
    }

    /// A stamp to record: `name`'s folder had `stamp` when its row, at change `seen`, held what the folder has.
    struct NewStamp: Sendable {
        var name: String
        var stamp: String
        var seen: Int64
    }

    /// The stamps of the rows of `table` among `names`, by name; a name without a row is absent.
    func pushStamps(_ table: StampedTable, _ names: [String]) throws -> [String: PushStamp] {
        // A stamp is 64 hexadecimal digits: any other value (written by hand) is no stamp, and is never read whole.
        let sql =
            switch table {
            case .domains:
                """
                SELECT d.name, CASE WHEN s.change_id = greatest(d.change_id, coalesce(d.files_change_id, 0))
                        AND octet_length(s.stamp) = 64 THEN s.stamp END,
                    greatest(d.change_id, coalesce(d.files_change_id, 0))
                FROM domains AS d LEFT JOIN domain_push_stamps AS s ON s.name = d.name
                WHERE d.name = ANY($1::text[])
                """
            case .certificates:
                """
                SELECT c.name, CASE WHEN s.change_id = c.change_id AND octet_length(s.stamp) = 64 THEN s.stamp END,
                    c.change_id
                FROM certificates AS c LEFT JOIN certificate_push_stamps AS s ON s.name = c.name
                WHERE c.name = ANY($1::text[])
                """
            }
        var found: [String: PushStamp] = [:]
        for group in Self.batches(names) {
            let rows = try connection.execute(sql, [.text(Self.textArray(group))])
            for row in 0..<rows.rowCount {
                guard let name = rows.text(row, 0), let change = rows.text(row, 2).flatMap(Int64.init) else { continue }
                found[name] = PushStamp(stamp: rows.text(row, 1), change: change)
            }
        }
        return found
    }

    /// Records each of `stamps` where its row is still at the change the push saw (a row written since keeps no
    /// stamp), outside any change.
    func recordPushStamps(_ table: StampedTable, _ stamps: [NewStamp]) throws {
        let sql =
            switch table {
            case .domains:
                """
                INSERT INTO domain_push_stamps (name, stamp, change_id)
                SELECT s.name, s.stamp, s.seen
                FROM unnest($1::text[], $2::text[], $3::bigint[]) AS s (name, stamp, seen)
                JOIN domains AS d ON d.name = s.name AND greatest(d.change_id, coalesce(d.files_change_id, 0)) = s.seen
                ON CONFLICT (name) DO UPDATE SET stamp = excluded.stamp, change_id = excluded.change_id
                """
            case .certificates:
                """
                INSERT INTO certificate_push_stamps (name, stamp, change_id)
                SELECT s.name, s.stamp, s.seen
                FROM unnest($1::text[], $2::text[], $3::bigint[]) AS s (name, stamp, seen)
                JOIN certificates AS c ON c.name = s.name AND c.change_id = s.seen
                ON CONFLICT (name) DO UPDATE SET stamp = excluded.stamp, change_id = excluded.change_id
                """
            }
        for group in Self.batches(stamps) {
            try connection.execute(
                sql,
                [
                    .text(Self.textArray(group.map(\.name))), .text(Self.textArray(group.map(\.stamp))),
                    .text(Self.textArray(group.map { String($0.seen) })),
                ])
        }
    }

    /// Writes each of `stamps` with the row it was written with, in that row's transaction.
    func insertStamps(_ table: StampedTable, _ stamps: [NewStamp]) throws {
        try insertRows(
            table == .domains
                ? "INSERT INTO domain_push_stamps (name, stamp, change_id)"
                : "INSERT INTO certificate_push_stamps (name, stamp, change_id)",
            casts: ["", "", "::bigint"], rows: stamps.map { [.text($0.name), .text($0.stamp), .integer($0.seen)] },
            tail: " ON CONFLICT (name) DO UPDATE SET stamp = excluded.stamp, change_id = excluded.change_id")
    }
}
