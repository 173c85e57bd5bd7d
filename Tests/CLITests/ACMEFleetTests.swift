import AASAPostgres
import AASATestSupport
import Foundation
import Testing

/// `serve --store --acme`: replicas on one real PostgreSQL store ordering from Debian's pebble, whose http-01
/// validations reach them round-robin through Debian's nginx, as a load balancer in front of a fleet sends them.
@Suite(.storeCluster, .serialized, .enabled(if: Pebble.isInstalled && NginxRouter.isInstalled))
struct ACMEFleetTests {
    /// The fleet's world: a store with `domains` pushed, pebble validating at nginx's port, nginx sending each
    /// connection to the next replica's HTTP listener.
    final class Fleet {
        let workspace = TemporaryDirectory("aasa-acme-fleet")
        let uri: String
        let domains: [String]
        let httpPorts: [UInt16]
        let router: NginxRouter
        let pebble: Pebble
        /// The front in front of pebble (rate limits, pauses, delays), when the test needs one.
        let front: ACMEFront?
        var replicas: [ServeProcess?] = []
        var folders: [TemporaryDirectory] = []

        /// With `dns`, pebble resolves through its resolver (for dns-01).
        init(
            _ name: String, domains count: Int, replicas: Int, front: Bool = false,
            rate: (count: Int, seconds: Int)? = nil, dns: BindDNS? = nil
        ) throws {
            uri = try StoreCluster.database(name)
            domains = (1...count).map { String(format: "d%02d.fleet.example", $0) }
            for domain in domains {
                _ = try workspace.write(
                    "site-config/\(domain)/site.json",
                    #"{"universalLinks":{"apps":[{"appIDs":["ABCDE12345.com.example.fleet"],"rules":[{"path":"/x/*"}]}]}}"#
                )
            }
            let key = try workspace.write("store.key", String(repeating: "c", count: 63) + "3\n")
            #expect(chmod(key, 0o600) == 0)
            let push = try Command.run(
                RepositoryPaths.executable,
                ["store", "push", "--config", "site-config", "--store", uri, "--store-key-file", "store.key"],
                currentDirectory: workspace.path, timeout: 120)
            #expect(push.status == 0, "\(push.stdout)\(push.stderr)")
            httpPorts = (0..<replicas).map { _ in freePort() }
            let balancer = freePort()
            // Never marked down: a replica still starting refuses, and nginx tries the next one.
            let upstreams = httpPorts.map { "        server 127.0.0.1:\($0) max_fails=0;\n" }.joined()
            let include = try workspace.write(
                "balancer.conf",
                """
                stream {
                    upstream replicas {
                \(upstreams)    }
                    server {
                        listen 127.0.0.1:\(balancer);
                        proxy_pass replicas;
                        proxy_connect_timeout 1s;
                    }
                }

                """)
            router = try NginxRouter(directory: workspace.path, include: include, port: balancer)
            let pebble = try Pebble(httpPort: balancer, dnsServer: dns?.resolver)
            self.pebble = pebble
            self.front = front ? try ACMEFront(pebble: pebble, rate: rate) : nil
        }

        var directoryURL: String { front?.directoryURL ?? pebble.directoryURL }

        /// Starts replica `index` with `extra` options.
        func start(_ index: Int, extra: [String] = []) throws {
            let folder = TemporaryDirectory("aasa-acme-replica-\(index)")
            let serve = try ServeProcess(
                in: folder.path,
                arguments: [
                    "--store", uri, "--store-key-file", workspace.path + "/store.key", "--replica", "r\(index)",
                    "--http-port", "\(httpPorts[index])", "--acme", "--acme-agree-tos", "--acme-directory",
                    directoryURL, "--acme-ca-file", pebble.caFile, "--acme-retry-min", "1",
                ] + extra, errorLog: folder.path + "/serve.log")
            while replicas.count <= index { replicas.append(nil) }
            replicas[index] = serve
            folders.append(folder)
        }

        func log(_ index: Int) -> String {
            (try? String(contentsOfFile: folders[index].path + "/serve.log", encoding: .utf8)) ?? ""
        }

        /// `/status` of a replica.
        func status(_ serve: ServeProcess) -> [String: Any]? {
            guard let answer = try? Curl.request("http://127.0.0.1:\(serve.admin)/status"), answer.status == 200 else {
                return nil
            }
            return try? JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any]
        }

        /// Whether `serve` presents a certificate for `domain` that verifies against `root` (pebble's issuing root).
        func servesTrusted(_ serve: ServeProcess, _ domain: String, root: String) -> Bool {
            let answer = try? Curl.request(
                "https://\(domain):\(serve.port)/.well-known/apple-app-site-association", caFile: root,
                resolve: (domain, serve.port))
            return answer?.status == 200
        }

        /// Starts three replicas answering dns-01 through `bind` (zone fleet.example, the resolver only) with
        /// `which` (the names, or a wildcard), and waits until every one serves every domain, trusted.
        func startWithDNS(_ bind: BindDNS, _ which: [String]) throws -> [ServeProcess] {
            let dns =
                which + [
                    "--acme-dns-server", bind.server, "--acme-dns-tsig-key-file", bind.keyFile, "--acme-dns-zone",
                    "fleet.example", "--acme-dns-resolver", bind.resolver, "--acme-dns-propagation", "resolver",
                ]
            for index in 0..<3 { try start(index, extra: dns) }
            let replicas = self.replicas.compactMap { $0 }
            let root = try pebble.rootFile()
            let took = waitFor(240) {
                replicas.allSatisfy { serve in domains.allSatisfy { servesTrusted(serve, $0, root: root) } }
            }
            #expect(took != nil, "pebble: \(pebble.log.suffix(3000))\nr0: \(log(0).suffix(3000))")
            return replicas
        }

        /// What pebble logged of `marker` (one `Added order` per new order, `set INVALID` per failed validation).
        func pebbleCount(_ marker: String) -> Int { pebble.log.components(separatedBy: marker).count - 1 }

        /// Polls `condition` every 200 ms for up to `seconds` (of a fast machine, scaled by ``TestTime``); returns
        /// how long it took, or `nil`.
        func waitFor(_ seconds: Double, _ condition: () -> Bool) -> Double? {
            let started = Date()
            while Date().timeIntervalSince(started) < TestTime.seconds(seconds) {
                if condition() { return Date().timeIntervalSince(started) }
                usleep(200_000)
            }
            return nil
        }
    }

    @Test func threeReplicasOrderEachCertificateOnceAndEveryReplicaServesIt() throws {
        let fleet = try Fleet("acme_fleet_thirty", domains: 30, replicas: 3)
        for index in 0..<3 { try fleet.start(index) }
        let replicas = fleet.replicas.compactMap { $0 }
        for (index, serve) in replicas.enumerated() {
            #expect(serve.waitUntilReady(seconds: 60), "\(fleet.log(index).suffix(3000))")
        }
        let root = try fleet.pebble.rootFile()
        let took = fleet.waitFor(240) {
            replicas.allSatisfy { serve in fleet.domains.allSatisfy { fleet.servesTrusted(serve, $0, root: root) } }
        }
        #expect(took != nil, "pebble: \(fleet.pebble.log.suffix(3000))\nr0: \(fleet.log(0).suffix(3000))")
        // The CA's own count: one order per certificate, and no validation failed on whichever replica it reached.
        #expect(
            fleet.pebbleCount("Added order") == 30,
            "\(fleet.log(0).split(separator: "\n").filter { $0.contains("no certificate") }.prefix(3).joined(separator: "\n"))"
        )
        #expect(
            fleet.pebbleCount("set INVALID") == 0,
            "\(fleet.pebble.log.split(separator: "\n").filter { !$0.contains("calling handler") && !$0.contains("orders in the db") }.prefix(60).joined(separator: "\n"))"
        )
        // The certificates are rows of the store, with the record of the CA that issued them.
        let store = try PostgresConnection(uri: fleet.uri)
        defer { store.close() }
        let rows = try store.execute(
            "SELECT count(*) FROM certificates WHERE acme_json IS NOT NULL AND privkey_sealed IS NOT NULL")
        #expect(rows.text(0, 0) == "30")
        // No private key is stored in plaintext.
        let plain = try store.execute(
            "SELECT count(*) FROM certificates WHERE position('PRIVATE KEY'::bytea in privkey_sealed) > 0")
        #expect(plain.text(0, 0) == "0")
        for serve in replicas { #expect(serve.terminate() == 0) }
    }

    @Test(.enabled(if: BindDNS.isInstalled))
    func threeReplicasPlaceOneDNS01OrderPerCertificateAndLeaveNoRecord() throws {
        let bind = try BindDNS(zones: ["fleet.example": ["ns IN A 127.0.0.1"]])
        let fleet = try Fleet("acme_fleet_dns", domains: 10, replicas: 3, dns: bind)
        // A record an earlier run left, listed in the store: the first replica to start removes it.
        try bind.update("update add _acme-challenge.d01.fleet.example 60 TXT \"left-by-a-crash\"")
        let store = try PostgresConnection(uri: fleet.uri)
        defer { store.close() }
        _ = try store.execute(
            "INSERT INTO acme_orders (name, history) VALUES ($1, $2)",
            [
                .text("d01.fleet.example"),
                .bytes(
                    Array(
                        #"{"failures":0,"challengeRecords":[{"domain":"d01.fleet.example","name":"_acme-challenge.d01.fleet.example","value":"left-by-a-crash","zone":"fleet.example"}]}"#
                            .utf8)),
            ])
        let replicas = try fleet.startWithDNS(bind, ["--acme-dns-names", "*"])
        // One order per certificate across the fleet, every validation passed, and no record left in the zone.
        #expect(fleet.pebbleCount("Added order") == 10)
        #expect(fleet.pebbleCount("set INVALID") == 0)
        for domain in fleet.domains {
            #expect(bind.dig("_acme-challenge.\(domain)", "TXT", resolver: false).isEmpty, "\(domain)")
        }
        let left = try store.execute(
            "SELECT count(*) FROM acme_orders WHERE position('\"challengeRecords\":[{'::bytea IN history) > 0")
        #expect(left.text(0, 0) == "0")
        #expect(
            (0..<3).contains { fleet.log($0).contains("removed a dns-01 record an earlier run left") },
            "\(fleet.log(0).suffix(2000))")
        for serve in replicas { #expect(serve.terminate() == 0) }
    }

    @Test(.enabled(if: BindDNS.isInstalled))
    func threeReplicasPlaceOneWildcardOrderForEveryDomainItCovers() throws {
        let bind = try BindDNS(zones: ["fleet.example": ["ns IN A 127.0.0.1"]])
        let fleet = try Fleet("acme_fleet_wildcard", domains: 10, replicas: 3, dns: bind)
        let replicas = try fleet.startWithDNS(bind, ["--acme-wildcard", "fleet.example"])
        // One order for the fleet, for fleet.example and *.fleet.example, kept in one row.
        #expect(fleet.pebbleCount("Added order") == 1)
        let store = try PostgresConnection(uri: fleet.uri)
        defer { store.close() }
        let rows = try store.execute("SELECT name FROM certificates WHERE acme_json IS NOT NULL")
        #expect(rows.rowCount == 1 && rows.text(0, 0) == "fleet.example")
        #expect(bind.dig("_acme-challenge.fleet.example", "TXT", resolver: false).isEmpty)
        for serve in replicas { #expect(serve.terminate() == 0) }
    }

    @Test func killingTheReplicaThatHoldsAnOrderLetsAnotherFinishIt() throws {
        let fleet = try Fleet("acme_fleet_kill", domains: 1, replicas: 3, front: true)
        // The first answer to the challenge waits 20 s at the front: the order stays in flight meanwhile.
        try #require(fleet.front).delay(pathPrefix: "/chalZ/", seconds: 20)
        for index in 0..<3 { try fleet.start(index) }
        let replicas = fleet.replicas.compactMap { $0 }
        for (index, serve) in replicas.enumerated() {
            #expect(serve.waitUntilReady(seconds: 60), "\(fleet.log(index).suffix(3000))")
        }
        // The lock holder names itself in pg_stat_activity: kill it with SIGKILL while the order is in flight.
        let store = try PostgresConnection(uri: fleet.uri)
        defer { store.close() }
        var holder: Int?
        _ = fleet.waitFor(30) {
            let result = try? store.execute(
                """
                SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
                WHERE l.locktype = 'advisory' AND l.classid = $1::bigint AND l.granted
                """, [.integer(Int64(0x6163_6D65))])
            guard let result, result.rowCount == 1, let name = result.text(0, 0), name.hasPrefix("aasa-acme-lock r"),
                let index = Int(name.dropFirst("aasa-acme-lock r".count)), index < replicas.count
            else { return false }
            holder = index
            // The lock is taken before the order is placed: wait until pebble has it, so it is counted below.
            return fleet.pebbleCount("Added order") >= 1
        }
        let killed = try #require(holder, "no replica took the order's lock: \(fleet.log(0).suffix(2000))")
        let ordersBefore = fleet.pebbleCount("Added order")
        kill(fleet.replicas[killed]!.process.processIdentifier, SIGKILL)
        fleet.replicas[killed]!.process.waitUntilExit()
        let root = try fleet.pebble.rootFile()
        let survivors = replicas.indices.filter { $0 != killed }.map { replicas[$0] }
        let took = fleet.waitFor(90) {
            survivors.allSatisfy { fleet.servesTrusted($0, fleet.domains[0], root: root) }
        }
        #expect(took != nil, "r: \(fleet.log(survivors.isEmpty ? 0 : 1).suffix(3000))")
        #expect((took ?? 999) < 75, "taken over after \(took ?? -1) s")
        // The killed replica's order never finished (or had just finished): at most one more order was placed.
        #expect(fleet.pebbleCount("Added order") <= ordersBefore + 1)
        #expect(fleet.pebbleCount("Issued certificate") >= 1)
        for serve in survivors { #expect(serve.terminate() == 0) }
    }

    @Test func thirtyDomainsAtTenOrdersAMinuteTakeAboutThreeMinutesAndTheQueueSaysSo() throws {
        let fleet = try Fleet("acme_fleet_paced", domains: 30, replicas: 3, front: true, rate: (10, 60))
        let front = try #require(fleet.front)
        let started = Date()
        for index in 0..<3 { try fleet.start(index, extra: ["--acme-order-rate", "10/1m"]) }
        let replicas = fleet.replicas.compactMap { $0 }
        for (index, serve) in replicas.enumerated() {
            #expect(serve.waitUntilReady(seconds: 60), "\(fleet.log(index).suffix(3000))")
        }
        // While the bucket refills, every replica tells when the last pending order is placed: at one every 6 s.
        var sawQueue = false
        _ = fleet.waitFor(60) {
            guard let status = fleet.status(replicas[0]), let acme = status["acme"] as? [String: Any],
                let queue = acme["queue"] as? [String: Any], let pending = queue["pending"] as? Int, pending >= 5,
                let eta = queue["etaSeconds"] as? Int, let rate = queue["ratePerHour"] as? Double
            else { return false }
            #expect(rate == 600)
            // The n-th pending order at one every 6 s (give or take the token being earned, and a slow machine).
            #expect(eta >= (pending - 2) * 6 && eta <= pending * 6 + 30, "pending \(pending), eta \(eta)")
            let domains = status["domains"] as? [String: [String: Any]] ?? [:]
            let positions = domains.values.compactMap {
                ($0["certificate"] as? [String: Any])?["queuePosition"] as? Int
            }
            #expect(positions.sorted() == Array(1...pending), "\(positions.sorted())")
            sawQueue = true
            return true
        }
        #expect(sawQueue, "no queue seen on /status: \(fleet.log(0).suffix(2000))")
        let root = try fleet.pebble.rootFile()
        let took = fleet.waitFor(300) {
            replicas.allSatisfy { serve in fleet.domains.allSatisfy { fleet.servesTrusted(serve, $0, root: root) } }
        }
        let elapsed = Date().timeIntervalSince(started)
        #expect(took != nil, "front: \(front.log.suffix(2000))")
        // Ten at once, then twenty at one every 6 s: about two minutes, never a burst past the CA's limit.
        #expect(elapsed >= 100 && elapsed <= 280, "\(elapsed) s")
        let stats = try front.stats()
        // The CA's own count.
        #expect(fleet.pebbleCount("Added order") == 30, "\(stats)")
        // A few at most (a timing edge between the two buckets), never one per queued domain (20 without pacing).
        #expect(stats.rateLimited <= 5, "\(stats)")
        for serve in replicas { #expect(serve.terminate() == 0) }
    }

    @Test func aRateLimitPausesEveryNewOrderOfTheFleetUntilItsRetryAfter() throws {
        let fleet = try Fleet("acme_fleet_pause", domains: 12, replicas: 3, front: true)
        let front = try #require(fleet.front)
        try front.pause(seconds: 25)
        let started = Date()
        for index in 0..<3 { try fleet.start(index, extra: ["--acme-concurrency", "1"]) }
        let replicas = fleet.replicas.compactMap { $0 }
        for (index, serve) in replicas.enumerated() {
            #expect(serve.waitUntilReady(seconds: 60), "\(fleet.log(index).suffix(3000))")
        }
        // Every replica shows the fleet's pause, with the CA's reason.
        let paused = fleet.waitFor(30) {
            replicas.allSatisfy { serve in
                let queue = (fleet.status(serve)?["acme"] as? [String: Any])?["queue"] as? [String: Any]
                return queue?["pausedUntil"] as? String != nil && (queue?["pauseReason"] as? String)?.isEmpty == false
            }
        }
        #expect(paused != nil, "\(fleet.log(0).suffix(2000))")
        let root = try fleet.pebble.rootFile()
        let took = fleet.waitFor(120) {
            replicas.allSatisfy { serve in fleet.domains.allSatisfy { fleet.servesTrusted(serve, $0, root: root) } }
        }
        #expect(took != nil, "\(fleet.log(0).suffix(2000))")
        // Nothing before the pause ended, and one refused order per replica at most, not one per queued domain.
        #expect(Date().timeIntervalSince(started) >= 20)
        let stats = try front.stats()
        #expect(stats.rateLimited >= 1 && stats.rateLimited <= 3, "\(stats)")
        #expect(fleet.pebbleCount("Added order") == 12, "\(stats)")
        for serve in replicas { #expect(serve.terminate() == 0) }
    }

    @Test func aStoredOrderStateOutOfRangeIsNamedAndTheFleetStillOrders() throws {
        let fleet = try Fleet("acme_fleet_state", domains: 2, replicas: 1)
        // A store written past this server's constraints (an older server, or a constraint dropped by hand).
        let connection = try PostgresConnection(uri: fleet.uri)
        defer { connection.close() }
        try connection.execute("ALTER TABLE acme_pacing DROP CONSTRAINT IF EXISTS acme_pacing_finite")
        try connection.execute("INSERT INTO acme_pacing (id, tokens, refilled_at) VALUES (1, 'NaN', 'Infinity')")
        try connection.execute(
            "INSERT INTO acme_orders (name, history) VALUES ($1, $2)",
            [.text(fleet.domains[0]), .bytes(Array(#"{"failures": 1e300}"#.utf8))])
        try fleet.start(0)
        let serve = try #require(fleet.replicas[0])
        #expect(serve.waitUntilReady(seconds: 60), "\(fleet.log(0).suffix(3000))")
        let root = try fleet.pebble.rootFile()
        let took = fleet.waitFor(90) {
            serve.process.isRunning && fleet.domains.allSatisfy { fleet.servesTrusted(serve, $0, root: root) }
        }
        #expect(took != nil, "\(fleet.log(0).suffix(3000))")
        let lines = fleet.log(0).components(separatedBy: "\n")
        let orders = lines.first { $0.contains("acme_orders") && $0.contains(fleet.domains[0]) } ?? ""
        #expect(orders.contains("\"failures\" is 1e+300") && orders.contains("fix:"), "\(fleet.log(0).suffix(3000))")
        let pacing = lines.first { $0.contains("acme_pacing") } ?? ""
        #expect(pacing.contains("tokens is nan") && pacing.contains("fix:"), "\(fleet.log(0).suffix(3000))")
        #expect(serve.terminate() == 0)
    }
}
