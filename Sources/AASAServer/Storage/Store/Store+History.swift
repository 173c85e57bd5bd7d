import AASACore
import AASAPostgres

/// The tenant API's history in the store (`domain_revisions`) held to a ``HistoryPolicy``, and the pruning of
/// `changes`. Every statement runs inside a write's transaction, after it took ``StoreSchema/changeLockKey``, and
/// keeps `history_usage` (schema version 7) equal to what the entries count, so the total is checked without
/// reading the table.
extension Store {
    /// One entry of a domain's history: the change that wrote it, what it did, the site.json it left (`nil` for a
    /// removal).
    struct Revision: Sendable {
        var name: String
        var change: Int64
        var summary: String
        var siteJSON: [UInt8]?
    }

    /// Adds the entry of change `change` to the history of `name` (`siteJSON` `nil` for a removal), then drops the
    /// oldest entries of `name` beyond the policy's revisions and bytes per domain (the newest is always kept).
    func recordRevision(
        _ name: String, _ change: Int64, actor: String, summary: String, siteJSON: [UInt8]?,
        policy: HistoryPolicy = HistoryPolicy()
    ) throws {
        try recordRevisions(
            [Revision(name: name, change: change, summary: summary, siteJSON: siteJSON)], actor: actor, policy: policy)
    }

    /// Adds `revisions` (each of another domain) by `actor`, as many per statement as the parameters allow, then
    /// drops the oldest entries of each of their domains beyond the policy's revisions and bytes per domain (the
    /// newest is always kept), in one statement.
    func recordRevisions(_ revisions: [Revision], actor: String, policy: HistoryPolicy = HistoryPolicy()) throws {
        guard !revisions.isEmpty else { return }
        let bounded = PostgresValue.text(HistoryPolicy.bounded(actor: actor))
        try insertRows(
            "INSERT INTO domain_revisions (domain, revision, actor, summary, site_json)",
            casts: ["", "::bigint", "", "", ""],
            rows: revisions.map { revision in
                [
                    .text(revision.name), .integer(revision.change), bounded,
                    .text(HistoryPolicy.bounded(summary: revision.summary)), revision.siteJSON.map(PostgresValue.bytes),
                ]
            })
        let cost = revisions.reduce(0) { $0 + HistoryPolicy.cost(siteJSON: $1.siteJSON?.count) }
        try connection.execute("UPDATE history_usage SET bytes = bytes + $1::bigint", [.integer(cost)])
        for names in Self.batches(revisions.map(\.name)) {
            try connection.execute(
                """
                WITH ranked AS (
                    SELECT domain, revision,
                        row_number() OVER (PARTITION BY domain ORDER BY revision DESC) AS n,
                        sum(coalesce(octet_length(site_json), 0) + $4::integer)
                            OVER (PARTITION BY domain ORDER BY revision DESC) AS running
                    FROM domain_revisions WHERE domain = ANY($1::text[])
                ), gone AS (
                    DELETE FROM domain_revisions r USING ranked k
                    WHERE r.domain = k.domain AND r.revision = k.revision AND k.n > 1
                        AND (k.n > $2::integer OR k.running > $3::bigint)
                    RETURNING coalesce(octet_length(r.site_json), 0) + $4::integer AS bytes
                )
                UPDATE history_usage SET bytes = bytes - (SELECT coalesce(sum(bytes), 0) FROM gone)
                """,
                [
                    .text(Self.textArray(names)), .integer(policy.revisions), .integer(policy.bytesPerDomain),
                    .integer(HistoryPolicy.entryBytes),
                ])
        }
    }

    /// The sweeps across domains: the history of each domain removed over ``HistoryPolicy/retention`` ago (its
    /// newest entry a removal and no row in `domains`), then the `changes` rows older than ``HistoryPolicy/changesRetention`` that no
    /// row of `domains` or `certificates` names, the id pruned through kept in `changes_pruned`.
    func sweepHistory(_ policy: HistoryPolicy) throws {
        let entry = PostgresValue.integer(HistoryPolicy.entryBytes)
        try connection.execute(
            """
            WITH removed AS (
                SELECT r.domain FROM domain_revisions r
                WHERE r.site_json IS NULL AND r.at < now() - make_interval(secs => $1::integer)
                    AND r.revision = (SELECT max(x.revision) FROM domain_revisions x WHERE x.domain = r.domain)
                    AND NOT EXISTS (SELECT 1 FROM domains d WHERE d.name = r.domain)
            ), gone AS (
                DELETE FROM domain_revisions WHERE domain IN (SELECT domain FROM removed)
                RETURNING coalesce(octet_length(site_json), 0) + $2::integer AS bytes
            )
            UPDATE history_usage SET bytes = bytes - (SELECT coalesce(sum(bytes), 0) FROM gone)
            """, [.integer(Int64(policy.retention.rounded(.up))), entry])
        try pruneChanges(olderThan: policy.changesRetention)
    }

    /// Deletes the oldest entries of all domains until they fit ``HistoryPolicy/totalBytes``: read from
    /// `history_usage`, so a write that fits costs one row's read.
    func pruneHistoryTotal(_ policy: HistoryPolicy) throws {
        let entry = PostgresValue.integer(HistoryPolicy.entryBytes)
        while true {
            let usage = try connection.execute("SELECT bytes FROM history_usage")
            let excess = (usage.text(0, 0).flatMap(Int64.init) ?? 0) - Int64(policy.totalBytes)
            guard excess > 0 else { break }
            // The oldest entries of all domains, up to the one that brings the total within the bound.
            let left = try connection.execute(
                """
                WITH oldest AS (
                    SELECT revision,
                        sum(coalesce(octet_length(site_json), 0) + $2::integer) OVER (ORDER BY revision) AS running,
                        coalesce(octet_length(site_json), 0) + $2::integer AS bytes
                    FROM domain_revisions ORDER BY revision LIMIT 1000
                ), gone AS (
                    DELETE FROM domain_revisions r USING oldest o
                    WHERE r.revision = o.revision AND o.running - o.bytes < $1::bigint
                    RETURNING o.bytes
                )
                UPDATE history_usage SET bytes = bytes - (SELECT coalesce(sum(bytes), 0) FROM gone)
                RETURNING (SELECT count(*) FROM gone)
                """, [.integer(excess), entry])
            let deleted = Int64(left.text(0, 0) ?? "0") ?? 0
            if deleted == 0 { break }
        }
    }

    /// Deletes the `changes` rows older than `retention` seconds that no row names (a row's `change_id` or
    /// `files_change_id` dates its files) and records the newest id pruned in `changes_pruned`: a replica that
    /// applied less than that reads everything (``StoreFollower``).
    func pruneChanges(olderThan retention: Double) throws {
        let cut = try connection.execute(
            "SELECT coalesce(max(id), 0) FROM changes WHERE at < now() - make_interval(secs => $1::integer)",
            [.integer(Int64(retention.rounded(.up)))])
        guard let through = cut.text(0, 0).flatMap(Int64.init), through > (try changesPrunedThrough()) else { return }
        try connection.execute(
            """
            DELETE FROM changes c WHERE c.id <= $1::bigint
                AND NOT EXISTS (SELECT 1 FROM domains d WHERE d.change_id = c.id)
                AND NOT EXISTS (SELECT 1 FROM domains d WHERE d.files_change_id = c.id)
                AND NOT EXISTS (SELECT 1 FROM certificates r WHERE r.change_id = c.id)
            """, [.integer(through)])
        try connection.execute("UPDATE changes_pruned SET through = greatest(through, $1::bigint)", [.integer(through)])
    }

    /// The newest change id `changes` was pruned through (0: none was).
    func changesPrunedThrough() throws -> Int64 {
        let result = try connection.execute("SELECT coalesce(max(through), 0) FROM changes_pruned")
        return Int64(result.text(0, 0) ?? "0") ?? 0
    }
}
