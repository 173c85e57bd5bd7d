import AASACore
import AASATestSupport
import Foundation
import Synchronization
import Testing

/// The issue's test of shards that survive a machine, on one machine: two shards of two `serve --store` replicas
/// each on one PostgreSQL store, Debian's nginx routing by SNI to the replicas `shards nginx --replicas 2` lists,
/// and clients opening a new connection for every request while replicas are stopped and killed.
@Suite(
    .storeCluster, .serialized,
    .enabled(
        if: NginxRouter.isInstalled,
        "nginx or its stream module is missing: run scripts/setup.sh --test (nginx libnginx-mod-stream)"))
struct ShardReplicaTests {
    static let association = "/.well-known/apple-app-site-association"
    static let shards = 2
    static let replicas = 2
    /// Domains besides the sample's two, so that each shard holds several.
    static let tenants = (1...10).map { "tenant-\($0).example" }
    /// How long the clients keep going once a replica is gone (after its exit, or after the grace of a kill).
    static let window: Duration = .seconds(3)
    /// How long after a SIGKILL a new connection may still fail: nginx learns that a replica is gone from the
    /// first connection it refuses (`max_fails=1`), so only connections in flight at the kill are expected here.
    static let killGrace: Duration = .seconds(1)

    /// What is done to a replica, and which.
    struct Step: Sendable, CustomStringConvertible {
        enum Signal: Sendable { case term, kill }
        var signal: Signal
        var shard: Int
        var replica: Int
        var description: String { "\(signal == .term ? "SIGTERM" : "SIGKILL") s\(shard)r\(replica)" }
    }

    /// Every replica position once, each shard both stopped and killed, the shards in turn; each replica is started
    /// again after its step, so the fleet is whole at the start of the next.
    static let steps = [
        Step(signal: .term, shard: 0, replica: 0), Step(signal: .kill, shard: 1, replica: 1),
        Step(signal: .kill, shard: 0, replica: 1), Step(signal: .term, shard: 1, replica: 0),
    ]
    /// The router's `fail_timeout`: once a connection to a replica failed, nginx passes it none for this long, even
    /// after it is back. A shard whose other replica goes away within it has no live upstream, so a step waits this
    /// long after the restart of its shard's last replica (a rolling restart must too).
    static let failTimeout: Duration = .seconds(5)

    /// One request a client made: on its own connection, through the router.
    struct Attempt: Sendable {
        var domain: String
        var started: ContinuousClock.Instant
        var ended: ContinuousClock.Instant
        /// Empty when the request got 200 and the domain's own bytes; else what went wrong.
        var failure: String
    }

    /// Threads that each request the domains' association files in turn through the router, one `curl` (one new
    /// connection and TLS handshake) per request, recording every attempt, until stopped.
    final class Clients: Sendable {
        let attempts = Mutex<[Attempt]>([])
        private let stopping = Atomic<Bool>(false)
        private let running = Atomic<Int>(0)

        init(count: Int, domains: [String], expected: [String: [UInt8]], port: UInt16, caFile: String) {
            for offset in 0..<count {
                running.add(1, ordering: .relaxed)
                Thread { [self] in
                    var index = offset
                    while !stopping.load(ordering: .relaxed) {
                        let domain = domains[index % domains.count]
                        index += 1
                        let started = ContinuousClock.now
                        var failure: String
                        do {
                            let answer = try Curl.request(
                                "https://\(domain):\(port)\(ShardReplicaTests.association)", caFile: caFile,
                                resolve: (domain, port))
                            failure =
                                answer.status != 200
                                ? "HTTP \(answer.status) \(answer.error.trimmingCharacters(in: .whitespacesAndNewlines))"
                                : answer.body != expected[domain] ? "not its own file" : ""
                        } catch {
                            failure = "\(error)"
                        }
                        let attempt = Attempt(
                            domain: domain, started: started, ended: ContinuousClock.now, failure: failure)
                        attempts.withLock { $0.append(attempt) }
                    }
                    running.subtract(1, ordering: .relaxed)
                }.start()
            }
        }

        /// The attempts that started in `range`.
        func attempts(startedIn range: Range<ContinuousClock.Instant>) -> [Attempt] {
            attempts.withLock { $0.filter { range.contains($0.started) } }
        }

        /// Stops the threads and waits for their last requests.
        func stop() {
            stopping.store(true, ordering: .relaxed)
            while running.load(ordering: .relaxed) > 0 { usleep(10_000) }
        }
    }

    /// The four replicas: fixed ports (the router's upstreams name them), each in an empty folder of its own.
    final class Fleet {
        let workspace: TemporaryDirectory
        let uri: String
        let ports: [[(https: UInt16, admin: UInt16)]]
        let folders: [[TemporaryDirectory]]
        var processes: [[ServeProcess?]]

        init(workspace: TemporaryDirectory, uri: String) {
            self.workspace = workspace
            self.uri = uri
            ports = (0..<ShardReplicaTests.shards).map { _ in
                (0..<ShardReplicaTests.replicas).map { _ in (freePort(), freePort()) }
            }
            folders = (0..<ShardReplicaTests.shards).map { shard in
                (0..<ShardReplicaTests.replicas).map { TemporaryDirectory("aasa-shard-replica-s\(shard)r\($0)") }
            }
            processes = ports.map { $0.map { _ in nil } }
        }

        /// Starts replica `replica` of shard `shard`, its standard error appended to `serve.log` in its folder.
        func start(_ shard: Int, _ replica: Int) throws {
            let folder = folders[shard][replica].path
            let log = folder + "/serve.log"
            if !FileManager.default.fileExists(atPath: log) {
                _ = FileManager.default.createFile(atPath: log, contents: nil)
            }
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
            handle.seekToEndOfFile()
            processes[shard][replica] = try ServeProcess(
                in: folder,
                arguments: [
                    "--store", uri, "--store-key-file", workspace.path + "/store.key", "--shard",
                    "\(shard)/\(ShardReplicaTests.shards)", "--replica", "s\(shard)r\(replica)", "--bind", "127.0.0.1",
                ], errorOutput: handle, ports: ports[shard][replica])
        }

        /// Waits (up to 20 s of a fast machine, scaled by ``TestTime``) until replica `replica` of shard `shard`
        /// answers `/readyz` with 200.
        func waitUntilReady(_ shard: Int, _ replica: Int) -> Bool {
            let url = "http://127.0.0.1:\(ports[shard][replica].admin)/readyz"
            return Wait.until("shard \(shard) replica \(replica) at \(url) to answer 200", seconds: 20, interval: 0.1) {
                let answer = try? Curl.request(url)
                return answer?.status == 200 ? nil : answer.map { "\($0.status) \($0.text.prefix(200))" } ?? "no answer"
            } != nil
        }

        func log(_ shard: Int, _ replica: Int) -> String {
            (try? String(contentsOfFile: folders[shard][replica].path + "/serve.log", encoding: .utf8)) ?? ""
        }

        /// The upstream addresses, shard by shard, as `shards nginx --upstream` takes them.
        var upstreams: [String] { ports.joined().map { "127.0.0.1:\($0.https)" } }
    }

    func aasa(_ arguments: [String], in directory: String) throws -> Command.Output {
        try Command.run(RepositoryPaths.executable, arguments, currentDirectory: directory, timeout: 120)
    }

    /// The sample site-config/ and ten tenants (copies of links.example), dev certificates for all of them and a
    /// store key, pushed to a new database.
    func pushed(_ name: String) throws -> (workspace: TemporaryDirectory, uri: String, domains: [String]) {
        let uri = try StoreCluster.database(name)
        let workspace = TemporaryDirectory("aasa-shard-replicas")
        try workspace.copy(RepositoryPaths.siteConfig, to: "site-config")
        let template = try String(
            contentsOfFile: workspace.path + "/site-config/links.example/site.json", encoding: .utf8)
        for tenant in Self.tenants {
            try workspace.write(
                "site-config/\(tenant)/site.json", template.replacingOccurrences(of: "links.example", with: tenant))
        }
        let certificates = try aasa(["certs", "dev"], in: workspace.path)
        #expect(certificates.status == 0, "\(certificates.stderr)")
        let key = try workspace.write("store.key", String(repeating: "c", count: 63) + "5\n")
        #expect(chmod(key, 0o600) == 0)
        let push = try aasa(
            [
                "store", "push", "--config", "site-config", "--certs", "certs", "--store", uri, "--store-key-file",
                "store.key",
            ], in: workspace.path)
        #expect(push.status == 0, "\(push.stdout)\(push.stderr)")
        return (workspace, uri, ["links.example", "shop.example"] + Self.tenants)
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }

    static func seconds(_ duration: Duration) -> String {
        String(format: "%.2f s", Double(duration.components.attoseconds) / 1e18 + Double(duration.components.seconds))
    }

    /// `attempts` as lines for a failure message: when each started relative to `origin`, its domain and failure.
    static func describe(_ attempts: [Attempt], from origin: ContinuousClock.Instant) -> String {
        attempts.prefix(10).map { "\(seconds($0.started - origin)) \($0.domain): \($0.failure)" }.joined(
            separator: "; ")
    }

    @Test func killingAnyReplicaFailsNoNewConnection() throws {
        let (workspace, uri, domains) = try pushed("shardreplicas")
        let shardOf = Dictionary(uniqueKeysWithValues: domains.map { ($0, Shard.index(of: $0, count: Self.shards)) })
        for shard in 0..<Self.shards {
            #expect(shardOf.values.filter { $0 == shard }.count >= 3, "shard \(shard) holds several domains")
        }
        let fleet = Fleet(workspace: workspace, uri: uri)
        for shard in 0..<Self.shards {
            for replica in 0..<Self.replicas { try fleet.start(shard, replica) }
        }
        for shard in 0..<Self.shards {
            for replica in 0..<Self.replicas {
                #expect(fleet.waitUntilReady(shard, replica), "s\(shard)r\(replica): \(fleet.log(shard, replica))")
            }
        }

        // Each domain's bytes, the same from both replicas of its shard.
        let caFile = workspace.path + "/certs/dev-ca/ca.pem"
        var expected: [String: [UInt8]] = [:]
        for domain in domains {
            let answers = try (0..<Self.replicas).map { replica in
                let port = fleet.ports[shardOf[domain] ?? 0][replica].https
                return try Curl.request(
                    "https://\(domain):\(port)\(Self.association)", caFile: caFile, resolve: (domain, port))
            }
            #expect(answers.allSatisfy { $0.status == 200 }, "\(domain): \(answers.map(\.error))")
            #expect(Set(answers.map(\.body)).count == 1, "\(domain): the replicas of its shard serve different bytes")
            expected[domain] = answers[0].body
        }

        // The router, as an operator makes it from the store.
        let routerPort = freePort()
        let generated = try aasa(
            ["shards", "nginx", "--count", "\(Self.shards)", "--replicas", "\(Self.replicas)", "--store", uri]
                + fleet.upstreams.flatMap { ["--upstream", $0] } + ["--listen", "127.0.0.1:\(routerPort)"],
            in: workspace.path)
        #expect(generated.status == 0, "\(generated.stderr)")
        for directive in [
            "proxy_next_upstream on;", "proxy_next_upstream_tries 2;", "proxy_connect_timeout 1s;",
            "max_fails=1 fail_timeout=5s;",
        ] {
            #expect(generated.stdout.contains(directive), "the router relies on \(directive)")
        }
        let router = try NginxRouter(
            directory: workspace.path, include: try workspace.write("router.conf", generated.stdout), port: routerPort)

        // Domains of both shards in turn.
        let order = domains.sorted { (shardOf[$0] ?? 0, $0) < (shardOf[$1] ?? 0, $1) }
        let interleaved = (0..<order.count).map { $0 % 2 == 0 ? order[$0 / 2] : order[order.count - 1 - $0 / 2] }
        let clients = Clients(
            count: 2, domains: interleaved, expected: expected, port: routerPort, caFile: caFile)
        defer { clients.stop() }
        let began = ContinuousClock.now
        usleep(1_000_000)
        let warmUp = clients.attempts(startedIn: began..<ContinuousClock.now)
        #expect(!warmUp.isEmpty && warmUp.allSatisfy(\.failure.isEmpty), "\(Self.describe(warmUp, from: began))")

        var rejoined: [Int: ContinuousClock.Instant] = [:]
        var excused = 0
        for step in Self.steps {
            let (shard, replica) = (step.shard, step.replica)
            if let back = rejoined[shard] {
                let wait = back + Self.failTimeout + .milliseconds(500) - ContinuousClock.now
                if wait > .zero { usleep(UInt32(Self.milliseconds(wait)) * 1000) }
            }
            let process = try #require(fleet.processes[shard][replica])
            let signalled = ContinuousClock.now
            switch step.signal {
            case .term:
                // A graceful stop: not one request may fail, from the signal until the replica is back.
                let status = process.terminate(within: 10)
                #expect(status == 0, "\(step): exit status \(String(describing: status))")
                let exited = ContinuousClock.now
                usleep(UInt32(Self.window.components.seconds) * 1_000_000)
                try fleet.start(shard, replica)
                #expect(fleet.waitUntilReady(shard, replica), "\(step): \(fleet.log(shard, replica))")
                rejoined[shard] = ContinuousClock.now
                let phase = clients.attempts(startedIn: signalled..<ContinuousClock.now)
                let failed = phase.filter { !$0.failure.isEmpty }
                #expect(phase.count >= 10, "\(step): \(phase.count) requests")
                #expect(
                    failed.isEmpty,
                    "\(step): \(failed.count) of \(phase.count) failed: \(Self.describe(failed, from: signalled))")
                print(
                    "\(step): exited after \(Self.seconds(exited - signalled)); \(phase.count) requests, "
                        + "\(failed.count) failed")
            case .kill:
                // A crash: requests in flight at the kill may fail, and so may those nginx sends there before the
                // first refused connection marks the replica down; after the grace, not one.
                kill(process.process.processIdentifier, SIGKILL)
                process.process.waitUntilExit()
                let graceEnds = signalled + Self.killGrace
                usleep(UInt32((Self.killGrace + Self.window).components.seconds) * 1_000_000)
                let after = clients.attempts(startedIn: graceEnds..<ContinuousClock.now)
                let grace = clients.attempts(startedIn: signalled..<graceEnds)
                let inFlight = clients.attempts(startedIn: began..<signalled).filter { $0.ended > signalled }
                let failed = after.filter { !$0.failure.isEmpty }
                #expect(after.count >= 10, "\(step): \(after.count) requests after the grace")
                #expect(
                    failed.isEmpty,
                    "\(step): \(failed.count) of \(after.count) failed after the grace: \(Self.describe(failed, from: signalled))"
                )
                // Every domain is still served, through the router, by its shard's other replica.
                for domain in domains {
                    let answer = try Curl.request(
                        "https://\(domain):\(routerPort)\(Self.association)", caFile: caFile,
                        resolve: (domain, routerPort))
                    #expect(answer.status == 200 && answer.body == expected[domain], "\(step): \(domain)")
                }
                let lost = (inFlight + grace).filter { !$0.failure.isEmpty }
                excused += lost.count
                print(
                    "\(step): \(inFlight.count) in flight at the kill, \(grace.count) in the grace "
                        + "(\(lost.count) failed: \(Self.describe(lost, from: signalled))), \(after.count) after, "
                        + "\(failed.count) failed")
                try fleet.start(shard, replica)
                #expect(fleet.waitUntilReady(shard, replica), "\(step): \(fleet.log(shard, replica))")
                rejoined[shard] = ContinuousClock.now
            }
        }
        clients.stop()
        let all = clients.attempts(startedIn: began..<ContinuousClock.now)
        let longest = all.map { $0.ended - $0.started }.max() ?? .zero
        let failed = all.filter { !$0.failure.isEmpty }
        // Between the steps too (the restarts, the waits), nothing failed but what a kill excused.
        #expect(
            failed.count == excused, "\(failed.count) failed, \(excused) excused: \(Self.describe(failed, from: began))"
        )
        print(
            "shard replicas: \(all.count) requests, \(failed.count) failed (\(excused) excused by a kill), "
                + "longest \(Self.seconds(longest)), \(Self.seconds(ContinuousClock.now - began)) in all")
        #expect(!router.log.contains("[emerg]"), "\(router.log)")
        #expect(!router.log.contains("no live upstreams"), "\(router.log)")
    }
}
