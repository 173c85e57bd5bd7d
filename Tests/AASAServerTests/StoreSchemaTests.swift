import AASACore
import AASAPostgres
import AASATestSupport
import Foundation
import Testing

@testable import AASAServer

/// Schema version 6 (``StoreSchema``), on a real PostgreSQL: a store of version 5 holding values no replica can use
/// upgrades, its rows repaired as docs/store.md says, and the constraints then refuse such values.
@Suite(.storeCluster, .serialized) struct StoreSchemaTests {
    /// A database at version 5, as a server of that version left it.
    func versionFive(_ name: String) throws -> (uri: String, connection: PostgresConnection) {
        let uri = try StoreCluster.database(name)
        let connection = try PostgresConnection(uri: uri)
        try connection.transaction {
            try connection.execute("CREATE TABLE schema_version (version integer NOT NULL)")
            for (offset, statements) in StoreSchema.migrations.prefix(5).enumerated() {
                for statement in statements { try connection.execute(statement) }
                try StoreSchema.backfill(connection, reaching: offset + 1)
            }
            try connection.execute("INSERT INTO schema_version (version) VALUES (5)")
        }
        return (uri, connection)
    }

    @Test func rowsOutOfRangeAreRepairedAndTheConstraintsRefuseThemAfterwards() throws {
        let (uri, connection) = try versionFive("schema_six")
        defer { connection.close() }
        for (kind, at) in [("domain", "infinity"), ("domain", "-infinity"), ("certificate", "2026-01-02 03:04:05+00")] {
            try connection.execute(
                "INSERT INTO changes (kind, name, at) VALUES ($1, 'shop.example', $2::timestamptz)",
                [.text(kind), .text(at)])
        }
        try connection.execute(
            """
            INSERT INTO domain_revisions (domain, revision, at, actor, summary) VALUES
                ('shop.example', 1, 'infinity', 'store push', 'pushed'), ('shop.example', 3, now(), 'store push', 'x')
            """)
        try connection.execute(
            "INSERT INTO acme_pacing (id, tokens, refilled_at) VALUES (1, 'NaN'::float8, 'Infinity'::float8)")

        let before = Date()
        let store = try Store(uri: uri)
        defer { store.connection.close() }
        #expect(try StoreSchema.version(connection) == StoreSchema.currentVersion)
        // The changes out of range are dated at the upgrade; the one within keeps its time.
        let times = try connection.execute("SELECT id, extract(epoch FROM at)::float8 FROM changes ORDER BY id")
        let seconds = (0..<times.rowCount).compactMap { times.text($0, 1).flatMap(Double.init) }
        #expect(seconds.count == 3)
        #expect(
            seconds.prefix(2).allSatisfy { abs($0 - before.timeIntervalSince1970) < TestTime.seconds(60) }, "\(seconds)"
        )
        #expect(seconds.last == 1_767_323_045)
        let revisions = try connection.execute(
            "SELECT count(*) FROM domain_revisions WHERE isfinite(at) AND at <= now()")
        #expect(revisions.text(0, 0) == "2")
        // The pacing row is deleted: the bucket starts full, as before the first order.
        #expect(try connection.execute("SELECT count(*) FROM acme_pacing").text(0, 0) == "0")

        // Every value out of range is refused from now on, NaN included (PostgreSQL sorts it above every number).
        let refused = [
            "INSERT INTO changes (kind, name, at) VALUES ('domain', 'shop.example', 'infinity')",
            "INSERT INTO changes (kind, name, at) VALUES ('domain', 'shop.example', '10000-01-01')",
            "UPDATE changes SET at = '-infinity'",
            "INSERT INTO domain_revisions (domain, revision, at, actor, summary) VALUES ('a', 9, 'infinity', 'x', 'y')",
            "INSERT INTO acme_pacing (id, tokens, refilled_at) VALUES (1, 'NaN', 0)",
            "INSERT INTO acme_pacing (id, tokens, refilled_at) VALUES (1, 'Infinity', 0)",
            "INSERT INTO acme_pacing (id, tokens, refilled_at) VALUES (1, 1e7, 0)",
            "INSERT INTO acme_pacing (id, tokens, refilled_at) VALUES (1, 1, 'NaN')",
            "INSERT INTO acme_pacing (id, tokens, refilled_at, paused_until) VALUES (1, 1, 0, 'Infinity')",
        ]
        for statement in refused {
            do {
                try connection.execute(statement)
                Issue.record("accepted: \(statement)")
            } catch {
                #expect("\(error)".contains("violates check constraint"), "\(statement): \(error)")
            }
        }
        try connection.execute(
            "INSERT INTO acme_pacing (id, tokens, refilled_at, paused_until) VALUES (1, 300, 1767225600, NULL)")
    }
}
