import AASACore
import AASAPostgres
import AASATestSupport
import Foundation
import Testing

/// A value out of range in what a replica reads back (a change dated `infinity` in the store, a snapshot record whose
/// time is NaN) is that row's or record's error: the replica keeps running, names the row and the fix, and serves
/// every other domain, at the change and at every restart. Real replicas (`serve --store`) on a real PostgreSQL.
@Suite(.storeCluster, .serialized) struct StoredValueTests: StoreFleetSuite {
    func status(_ serve: ServeProcess) throws -> [String: Any] {
        let answer = try Curl.request("http://127.0.0.1:\(serve.admin)/status")
        return try #require(try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any])
    }

    /// The `state` of `domain` in `/status`, or what was seen instead.
    func state(_ serve: ServeProcess, _ domain: String) -> String {
        let domains = (try? status(serve)["domains"] as? [String: Any]) ?? [:]
        return (domains[domain] as? [String: Any])?["state"] as? String ?? "absent (\(domains.keys.sorted()))"
    }

    func text(_ file: String) -> String { (try? String(contentsOfFile: file, encoding: .utf8)) ?? "" }

    /// Writes a change of `domain` dated `infinity`, as a database without this server's constraints holds (a store
    /// an older server wrote, or one whose constraint was dropped), and announces it; returns its id.
    func writeInfiniteChange(_ uri: String, _ domain: String) throws -> String {
        let connection = try PostgresConnection(uri: uri)
        defer { connection.close() }
        try connection.execute("ALTER TABLE changes DROP CONSTRAINT IF EXISTS changes_at_range")
        return try connection.transaction {
            let inserted = try connection.execute(
                "INSERT INTO changes (kind, name, at) VALUES ('domain', $1, 'infinity') RETURNING id", [.text(domain)])
            let id = try #require(inserted.text(0, 0))
            try connection.execute(
                "UPDATE domains SET change_id = $1::bigint WHERE name = $2", [.text(id), .text(domain)])
            try connection.notify("aasa_changes", payload: id)
            return id
        }
    }

    /// Waits until `serve` answers shop.example over HTTPS; then `/readyz` is 503 naming `domain` and `named`.
    func servesAndNames(_ serve: ServeProcess, _ workspace: TemporaryDirectory, _ domain: String, _ named: String)
        throws
    {
        Wait.until("shop.example served over HTTPS", seconds: 30) {
            guard serve.process.isRunning else { return "exited with \(serve.process.terminationStatus)" }
            let answer = try? fetch(workspace, serve, "shop.example")
            return answer?.status == 200 ? nil : "\(answer?.status ?? 0) \(answer?.error ?? "")"
        }
        let ready = try Curl.request("http://127.0.0.1:\(serve.admin)/readyz")
        #expect(ready.status == 503 && ready.text.contains(domain) && ready.text.contains(named), "\(ready.text)")
    }

    @Test func aChangeDatedInfinityIsThatRowsErrorAtTheChangeAndAtEveryStart() throws {
        let (workspace, uri) = try pushed("infinity")
        let log = workspace.path + "/replica.log"
        let (serve, _) = try replica(workspace, uri, "r0", log: log)
        #expect(serve.waitUntilReady())
        let good = try fetch(workspace, serve, "links.example").body

        let change = try writeInfiniteChange(uri, "links.example")
        let named = "changes.at of change \(change) is inf"
        Wait.until("the replica names the row", seconds: 10) {
            guard serve.process.isRunning else { return "exited with \(serve.process.terminationStatus)" }
            return text(log).contains(named) ? nil : String(text(log).suffix(1500))
        }
        #expect(serve.process.isRunning, "\(text(log).suffix(2000))")
        let line = text(log).components(separatedBy: "\n").first { $0.contains(named) } ?? ""
        #expect(line.contains("links.example") && line.contains("[stored-value]") && line.contains("fix:"), "\(line)")
        #expect(try fetch(workspace, serve, "links.example").body == good, "the last good version is still served")
        #expect(try fetch(workspace, serve, "shop.example").status == 200, "another domain is untouched")
        #expect(state(serve, "links.example") == "stale")

        // A replica started now reads the same row: it starts, serves the other domain, and names the row.
        let restartLog = workspace.path + "/restart.log"
        let (restarted, _) = try replica(workspace, uri, "r1", log: restartLog)
        #expect(restarted.waitUntilHealthy(), "\(text(restartLog).suffix(2000))")
        try servesAndNames(restarted, workspace, "links.example", named)
        #expect(try fetch(workspace, restarted, "links.example").status == 404, "a row not read is not served")
        #expect(state(restarted, "links.example") == "failed")
        #expect(text(restartLog).contains(named), "\(text(restartLog).suffix(2000))")
    }

    @Test func aSnapshotRecordWhoseTimeIsNaNIsThatRecordsErrorAndTheRestIsServed() throws {
        let (workspace, uri) = try pushed("nansnapshot")
        let cache = workspace.path + "/cache"
        let (first, _) = try replica(workspace, uri, "r0", arguments: ["--store-cache", cache])
        #expect(first.waitUntilReady())
        Wait.until("the snapshot's state", seconds: 10) {
            FileManager.default.fileExists(atPath: cache + "/state") ? nil : "no state yet"
        }
        #expect(first.terminate(within: 10) == 0)

        // The time of the record's last frame, the 8 bytes after the record's magic and change id, made NaN (and the
        // frame's check made again: a frame that fails it is a write cut short).
        let record = cache + "/domains.pack"
        var bytes = Array(try #require(FileManager.default.contents(atPath: record)))
        let read = SnapshotFrame.frames(in: bytes, maximumRecordBytes: 1 << 26)
        let (offset, frame) = try #require(read.frames.last { $0.frame.name == "links.example" })
        var changed = frame
        let nan = Double.nan.bitPattern
        for index in 0..<8 { changed.record[16 + index] = UInt8(truncatingIfNeeded: nan >> UInt64(56 - 8 * index)) }
        bytes.replaceSubrange(offset..<(offset + frame.bytes.count), with: changed.bytes)
        try Data(bytes).write(to: URL(fileURLWithPath: record))

        let cluster = try StoreCluster.current()
        cluster.stop()
        defer { try? cluster.start() }
        let log = workspace.path + "/snapshot-start.log"
        let (serve, _) = try replica(workspace, uri, "r0", arguments: ["--store-cache", cache], log: log)
        #expect(serve.waitUntilHealthy(), "\(text(log).suffix(2000))")
        try servesAndNames(serve, workspace, "links.example", record)
        #expect(try status(serve)["store"].flatMap { ($0 as? [String: Any])?["servingSnapshot"] as? Bool } == true)
        #expect(try fetch(workspace, serve, "shop.example").status == 200, "the other records are served")
        #expect(try fetch(workspace, serve, "links.example").status == 404)
        #expect(state(serve, "links.example") == "failed")
        let line = text(log).components(separatedBy: "\n").first { $0.contains("[stored-value]") } ?? ""
        #expect(line.contains(record) && line.contains("nan") && line.contains("fix:"), "\(text(log).suffix(2000))")
        #expect(serve.process.isRunning)
    }
}
