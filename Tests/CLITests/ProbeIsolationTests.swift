import AASAPostgres
import AASATestSupport
import Dispatch
import Foundation
import Synchronization
import Testing

/// The control plane never holds the threads that answer the probes: with a table of the store locked, the change
/// lock held by another writer, or a burst of CPU-heavy dry runs, `/healthz` and `/readyz` of a real `serve` answer
/// within 100 ms (scaled by ``TestTime``), every API call ends within its store timeout with an answer (503 with
/// `Retry-After` and the cause when the store is locked or the API's workers are all busy), and reads do not wait
/// behind another caller's write lock.
@Suite(.storeCluster, .serialized) struct ProbeIsolationTests: StoreFleetSuite {
    static let token = String(repeating: "p", count: 40)
    static let storeTimeout = 2.0

    /// A replica of a pushed store with a write token, `--api-store-timeout 2` and `arguments`.
    func replica(_ name: String, arguments: [String] = []) throws -> (
        serve: ServeProcess, workspace: TemporaryDirectory, uri: String, folder: TemporaryDirectory
    ) {
        let (workspace, uri) = try pushed(name)
        let tokens = try workspace.write("tokens", "control-plane write \(Self.token)\n")
        #expect(chmod(tokens, 0o600) == 0)
        let (serve, folder) = try replica(
            workspace, uri, name,
            arguments: ["--admin-token-file", tokens, "--api-store-timeout", "\(Self.storeTimeout)"] + arguments)
        #expect(serve.waitUntilReady())
        return (serve, workspace, uri, folder)
    }

    /// A call of the API on `admin`, with how long it took.
    static func call(_ admin: UInt16, _ method: String, _ path: String, body: String? = nil) -> (
        answer: String, seconds: Double
    ) {
        let start = Date()
        guard let client = try? RawClient(port: admin) else { return ("no connection", 0) }
        var request = "\(method) /api/v1/domains/\(path) HTTP/1.1\r\nHost: localhost\r\n"
        request += "Authorization: Bearer \(token)\r\nConnection: close\r\n"
        if let body { request += "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n" }
        client.send(request + "\r\n" + (body ?? ""))
        let answer = client.readAll(timeout: 60)
        return (answer, Date().timeIntervalSince(start))
    }

    /// Polls `/healthz` and `/readyz` on `admin` every 20 ms while `running` holds and returns the slowest answer's
    /// time and every answer that was not 200.
    static func probe(_ admin: UInt16, while running: () -> Bool) -> (slowest: Double, failures: [String], count: Int) {
        var slowest = 0.0
        var failures: [String] = []
        var count = 0
        while running() {
            for path in ["/healthz", "/readyz"] {
                let start = Date()
                let client = try? RawClient(port: admin)
                client?.send("GET \(path) HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
                let answer = client?.readAll(timeout: 10) ?? "no connection"
                slowest = max(slowest, Date().timeIntervalSince(start))
                count += 1
                if !answer.hasPrefix("HTTP/1.1 200 ") { failures.append("\(path): \(answer.prefix(120))") }
            }
            usleep(20_000)
        }
        return (slowest, failures, count)
    }

    /// `calls` run at once on `admin` while the probes are polled; returns the calls' answers and times and the
    /// probes' figures.
    static func burst(_ admin: UInt16, _ calls: [(method: String, path: String, body: String?)]) -> (
        calls: [(answer: String, seconds: Double)], slowest: Double, failures: [String], probes: Int
    ) {
        let results = Mutex<[(answer: String, seconds: Double)]>([])
        let done = Atomic<Bool>(false)
        let group = DispatchGroup()
        // A thread each, so that every call is in flight at once.
        for call in calls {
            group.enter()
            Thread.detachNewThread {
                let result = Self.call(admin, call.method, call.path, body: call.body)
                results.withLock { $0.append(result) }
                group.leave()
            }
        }
        Thread.detachNewThread {
            group.wait()
            done.store(true, ordering: .releasing)
        }
        // At least two seconds of probes, and as long as the calls run.
        let start = Date()
        let probes = probe(admin) { !done.load(ordering: .acquiring) || Date().timeIntervalSince(start) < 2 }
        return (results.withLock { $0 }, probes.slowest, probes.failures, probes.count)
    }

    static func status(_ answer: String) -> Int { Int(answer.dropFirst(9).prefix(3)) ?? 0 }

    static func site(_ marker: String) -> String {
        #"{ "universalLinks": { "apps": [{ "appIDs": ["ABCDE12345.com.example.probe"], "rules": [{ "path": "/\#(marker)/*" }] }] } }"#
    }

    /// Holds `lock` (a statement run in an open transaction) on a connection of its own until the value is released.
    final class HeldLock {
        let connection: PostgresConnection

        init(_ uri: String, _ lock: String) throws {
            connection = try PostgresConnection(uri: uri)
            try connection.execute("BEGIN")
            try connection.execute(lock)
        }

        deinit {
            _ = try? connection.execute("ROLLBACK")
            connection.close()
        }
    }

    @Test func aLockedTableNeverHoldsTheProbesAndEveryCallEndsWithinTheStoreTimeout() throws {
        let (serve, _, uri, _) = try replica("probe_table_lock")
        var held: HeldLock? = try HeldLock(uri, "LOCK TABLE domains IN ACCESS EXCLUSIVE MODE")
        let calls = (0..<40).map { index in
            index % 2 == 0
                ? (method: "GET", path: "shop.example", body: String?.none)
                : (method: "PUT", path: "shop.example", body: Self.site("locked-\(index)"))
        }
        let result = Self.burst(serve.admin, calls)
        held = nil
        _ = held

        #expect(result.failures.isEmpty, "\(result.failures.prefix(5))")
        #expect(
            result.slowest < TestTime.seconds(0.1),
            "the slowest of \(result.probes) probes took \(Int(result.slowest * 1000)) ms while a table was locked")
        print("probes with a locked table: \(result.probes), slowest \(Int(result.slowest * 1000)) ms")
        #expect(result.calls.count == 40)
        for call in result.calls {
            // Each call ends: answered by a worker after the store timeout, or refused at once while all are busy.
            #expect(Self.status(call.answer) == 503, "\(call.answer.prefix(300))")
            #expect(call.answer.contains("Retry-After: "), "\(call.answer.prefix(300))")
            #expect(call.seconds < TestTime.seconds(Self.storeTimeout * 12 + 5), "a call took \(call.seconds) s")
        }
        #expect(
            result.calls.contains { $0.answer.contains("statement timeout") || $0.answer.contains("lock") },
            "no answer named the store's cause")
        #expect(result.calls.contains { $0.answer.contains("busy: all 4 workers") }, "no call found the pool full")

        // The lock gone, the API answers again.
        let after = Self.call(serve.admin, "GET", "shop.example")
        #expect(Self.status(after.answer) == 200, "\(after.answer.prefix(300))")
    }

    @Test func aHeldChangeLockRefusesWritesInSecondsWhileReadsAndProbesGoOn() throws {
        let (serve, _, uri, _) = try replica("probe_change_lock")
        // Another writer (a long store push) holds the change lock every write takes.
        var held: HeldLock? = try HeldLock(uri, "SELECT pg_advisory_xact_lock(\(0x6161_7361_6368_6E67 as Int64))")
        let write = Self.call(serve.admin, "PUT", "shop.example", body: Self.site("change-lock"))
        #expect(Self.status(write.answer) == 503, "\(write.answer.prefix(400))")
        #expect(write.answer.contains("lock") && write.answer.contains("Retry-After: "), "\(write.answer.prefix(400))")
        #expect(write.seconds < TestTime.seconds(Self.storeTimeout + 3), "the write took \(write.seconds) s")

        // Reads do not wait behind the write: three of them beside two writes, each answered at once.
        let calls =
            [
                (method: "PUT", path: "shop.example", body: Optional(Self.site("a"))),
                (method: "PUT", path: "links.example", body: Optional(Self.site("b"))),
            ] + (0..<3).map { _ in (method: "GET", path: "shop.example", body: String?.none) }
        let result = Self.burst(serve.admin, calls)
        for call in result.calls where call.answer.hasPrefix("HTTP/1.1 200") {
            #expect(call.seconds < TestTime.seconds(1), "a read took \(call.seconds) s beside a held write")
        }
        #expect(result.calls.filter { $0.answer.hasPrefix("HTTP/1.1 200") }.count == 3, "\(result.calls.map(\.answer))")
        #expect(result.failures.isEmpty && result.slowest < TestTime.seconds(0.1), "slowest \(result.slowest) s")
        held = nil
        _ = held
        let after = Self.call(serve.admin, "PUT", "shop.example", body: Self.site("after"))
        #expect(Self.status(after.answer) == 200, "\(after.answer.prefix(300))")
    }

    @Test func beforeItsFirstLoadAReplicaIsAliveAndSaysWhatItWaitsFor() throws {
        let workspace = TemporaryDirectory("aasa-probe-no-store")
        let key = try workspace.write("store.key", String(repeating: "c", count: 64) + "\n")
        #expect(chmod(key, 0o600) == 0)
        // A database nobody listens on, and no snapshot to start from.
        let port = freePort()
        let serve = try ServeProcess(
            in: workspace.path,
            arguments: ["--store", "postgresql://aasa@127.0.0.1:\(port)/aasa", "--store-key-file", key])
        #expect(serve.waitUntilHealthy())
        var ready = ""
        Wait.until("/readyz to name the store and why it is not loaded", seconds: 10) {
            ready =
                (try? Curl.request("http://127.0.0.1:\(serve.admin)/readyz")).map { "\($0.status) \($0.text)" } ?? ""
            return ready.contains("127.0.0.1:\(port)/aasa") && ready.contains("): ") ? nil : ready
        }
        #expect(
            ready.hasPrefix("503 starting: waiting for the first load from the store at 127.0.0.1:\(port)/aasa"),
            "\(ready)")
        #expect(try Curl.request("http://127.0.0.1:\(serve.admin)/healthz").status == 200)
    }

    @Test func aBurstOfCPUHeavyDryRunsNeverHoldsTheProbes() throws {
        let workspace = TemporaryDirectory("aasa-probe-dry-runs")
        let tokens = try workspace.write("tokens", "control-plane write \(Self.token)\n")
        #expect(chmod(tokens, 0o600) == 0)
        let serve = try ServeProcess.withTokens("control-plane write \(Self.token)\n", in: workspace)
        #expect(serve.waitUntilReady())
        // Thousands of rules to validate, lint and compare with the served one, in each of 24 calls.
        let rules = (0..<3_000).map { #"{ "path": "/p\#($0)/*/x?y*" }"# }.joined(separator: ", ")
        let heavy =
            #"{ "universalLinks": { "apps": [{ "appIDs": ["ABCDE12345.com.example.heavy"], "rules": [\#(rules)] }] } }"#
        let calls = (0..<24).map { _ in (method: "PUT", path: "shop.example?dryRun=true", body: Optional(heavy)) }
        let result = Self.burst(serve.admin, calls)
        #expect(result.failures.isEmpty, "\(result.failures.prefix(5))")
        #expect(
            result.slowest < TestTime.seconds(0.1),
            "the slowest of \(result.probes) probes took \(Int(result.slowest * 1000)) ms beside 24 dry runs")
        print("probes beside 24 dry runs: \(result.probes), slowest \(Int(result.slowest * 1000)) ms")
        let statuses = result.calls.map { Self.status($0.answer) }
        #expect(statuses.allSatisfy { [200, 422, 503].contains($0) }, "\(statuses)")
        #expect(statuses.contains(200) || statuses.contains(422), "no dry run was answered: \(statuses)")
    }
}
