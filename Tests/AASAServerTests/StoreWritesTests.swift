import AASACore
import AASAPostgres
import AASATestSupport
import Foundation
import Testing

@testable import AASAServer

/// The store's batch writes on a real PostgreSQL: many domains in one transaction, each with its own change in the
/// order given, exactly its files, and history bounds applied to each domain of the batch apart.
@Suite(.storeCluster, .serialized) struct StoreWritesTests {
    func number(_ connection: PostgresConnection, _ sql: String) throws -> Int {
        Int(try connection.execute(sql).text(0, 0) ?? "") ?? -1
    }

    func site(_ name: String, _ version: Int) -> [UInt8] {
        Array(#"{"webCredentials": ["ABCDE12345.com.example.\#(name).v\#(version)"]}"#.utf8)
    }

    @Test func aBatchWritesEachDomainWithItsOwnChangeAndFiles() throws {
        let store = try Store(uri: try StoreCluster.database("batchwrites"))
        let connection = store.connection
        let names = ["c.example", "a.example", "b.example"]
        let first = try store.put(
            names.map { name in
                Store.DomainWrite(
                    StoredDomain(
                        name: name, siteJSON: site(name, 0),
                        files: name == "a.example" ? ["pages/index.html": [1], "pages/about.html": [2]] : [:]),
                    summary: "added \(name)")
            })
        // The ids follow the order given, each naming its domain, and each domain row points at its own.
        #expect(first == first.sorted() && Set(first).count == 3)
        for (name, change) in zip(names, first) {
            let row = try connection.execute("SELECT name, kind FROM changes WHERE id = $1::bigint", [.integer(change)])
            #expect(row.text(0, 0) == name && row.text(0, 1) == "domain")
            let domain = try connection.execute(
                "SELECT change_id FROM domains WHERE name = $1", [.text(name)])
            #expect(domain.text(0, 0) == String(change))
        }
        #expect(try store.domain("a.example")?.files == ["pages/index.html": [1], "pages/about.html": [2]])

        // A second batch writes a.example whole (one file gone, one changed) and leaves the others' files alone.
        try store.put([
            Store.DomainWrite(
                StoredDomain(name: "a.example", siteJSON: site("a.example", 1), files: ["pages/index.html": [3]]),
                summary: "edited")
        ])
        #expect(try store.domain("a.example")?.files == ["pages/index.html": [3]])
        #expect(try store.domain("a.example")?.siteJSON == site("a.example", 1))
        #expect(try store.domain("c.example")?.siteJSON == site("c.example", 0))
        let digests = try store.domainDigests(names + ["missing.example"])
        #expect(Set(digests.keys) == Set(names))
        #expect(digests["a.example"]?.files == ["pages/index.html": SHA256.digest([3])])
        #expect(digests["a.example"]?.siteJSON == site("a.example", 1))

        // Removals: each domain its own change and removal entry.
        let removed = try store.deleteDomains(["b.example", "c.example"])
        #expect(removed.count == 2 && removed.allSatisfy { $0 > first.max()! })
        #expect(try store.domainNames() == ["a.example"])
        #expect(try number(connection, "SELECT count(*) FROM domain_revisions WHERE site_json IS NULL") == 2)
    }

    /// The per-domain bounds of a batch's history apply to each domain apart: a batch adding entries to two domains
    /// keeps each one's newest, and never touches a third's.
    @Test func aBatchsHistoryIsBoundedPerDomain() throws {
        let store = try Store(uri: try StoreCluster.database("batchhistory"))
        let connection = store.connection
        let names = ["a.example", "b.example", "c.example"]
        try store.put(names.map { Store.DomainWrite(StoredDomain(name: $0, siteJSON: site($0, 0)), summary: "added") })
        let policy = HistoryPolicy(revisions: 2)
        var change: Int64 = 1_000
        for version in 1...3 {
            let revisions = ["a.example", "b.example"].map { name in
                change += 1
                return Store.Revision(name: name, change: change, summary: "v\(version)", siteJSON: site(name, version))
            }
            try store.recordRevisions(revisions, actor: "test", policy: policy)
        }
        for name in ["a.example", "b.example"] {
            let kept = try connection.execute(
                "SELECT summary FROM domain_revisions WHERE domain = $1 ORDER BY revision DESC", [.text(name)])
            #expect((0..<kept.rowCount).compactMap { kept.text($0, 0) } == ["v3", "v2"], "\(name)")
        }
        #expect(try number(connection, "SELECT count(*) FROM domain_revisions WHERE domain = 'c.example'") == 1)
        // The usage counter equals what the entries left count.
        #expect(
            try number(connection, "SELECT bytes FROM history_usage")
                == (try number(
                    connection,
                    "SELECT sum(coalesce(octet_length(site_json), 0) + \(HistoryPolicy.entryBytes)) FROM domain_revisions"
                )))
    }
}
