import AASACore
import AASATestSupport
import Foundation
import Logging
import Testing

@testable import AASAServer

/// A port on 127.0.0.1 that behaves as a host that is gone: a listening socket with a backlog of 0 whose one
/// queued connection is never accepted, so the kernel drops every further SYN and a connect neither completes
/// nor is refused until the client's own timeout. Closed when released.
final class BlackHole: @unchecked Sendable {
    /// The port.
    let port: UInt16
    private let listener: Int32
    private let queued: Int32

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard bound == 0, listen(fd, 0) == 0 else {
            close(fd)
            throw HTTPProbe.Failure(description: "black hole: \(String(cString: strerror(errno)))")
        }
        listener = fd
        port = UInt16(bigEndian: address.sin_port)
        do {
            queued = try HTTPProbe.connect(port: port)
        } catch {
            close(fd)
            throw error
        }
    }

    deinit {
        close(queued)
        close(listener)
    }
}

/// Issue 24's test of sharding on one machine: two shards (in-process servers with `shard` set) behind Debian's
/// nginx as the router, 1,000 domains each with its own file and certificate.
@Suite(.serialized) struct ShardRoutingLiveTests {
    static let count = 2
    static let domains = (1...1000).map { ShardRoutingLiveTests.domain($0) }
    static let path = "/.well-known/apple-app-site-association"

    /// `shard-0001.example` for 1.
    static func domain(_ number: Int) -> String {
        let digits = String(number)
        return "shard-" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits + ".example"
    }

    /// A site.json whose generated file names the domain, so every domain's file differs.
    static func siteJSON(_ domain: String) -> String {
        let app = domain.replacingOccurrences(of: "-", with: "").replacingOccurrences(of: ".example", with: "")
        return #"{"webCredentials": ["ABCDE12345.com.example.\#(app)"]}"#
    }

    /// The bytes a shard must serve as `domain`'s association file.
    static func generated(_ domain: String) throws -> [UInt8] {
        let loaded = SiteConfigLoader().loadDomain(
            domain: domain, source: SourceText(name: "site.json", bytes: Array(siteJSON(domain).utf8)))
        return try #require(loaded.generated?.bytes, "\(loaded.diagnostics)")
    }

    /// Starts shard `index` of ``count`` on free loopback ports (HTTPS and admin), reloading only when told.
    static func startShard(_ index: Int, config: String, certs: String) throws -> Server {
        var configuration = ServerConfiguration()
        configuration.configDirectory = config
        configuration.certificateDirectory = certs
        configuration.bindAddress = "127.0.0.1"
        configuration.httpsPort = 0
        configuration.httpPort = nil
        configuration.adminPort = 0
        configuration.threadPoolSize = 2
        configuration.watchForChanges = false
        configuration.shard = try Shard(index: index, count: count)
        var logger = Logger(label: "shard-\(index)")
        logger.logLevel = .warning
        let server = Server(configuration: configuration, logger: logger)
        try server.start()
        return server
    }

    /// A shard's `/status` document.
    static func status(_ server: Server) throws -> [String: Any] {
        let answer = try HTTPProbe.get(port: server.adminPort ?? 0, host: "127.0.0.1", path: "/status")
        #expect(answer.status == 200)
        return try #require(try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any])
    }

    /// Fetches each domain's association file through the router with one curl process (16 transfers at a time,
    /// each its own connection and TLS handshake with the domain as SNI), verifying every certificate against the
    /// dev CA and the domain's name; returns what went wrong, one line per failing domain.
    static func fetchThroughRouter(
        _ domains: [String], port: UInt16, caFile: String, expected: [String: [UInt8]], scratch: String
    ) throws -> [String] {
        let outputs = scratch + "/fetched-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: outputs, withIntermediateDirectories: true)
        var lines = [
            "--parallel", "--parallel-max 16", "--silent", "--no-progress-meter", "--max-time 20", "--proto =https",
            "--cacert \"\(caFile)\"", #"--write-out "%{exitcode} %{http_code} %{url_effective}\n""#,
        ]
        for domain in domains {
            lines.append("--resolve \"\(domain):\(port):127.0.0.1\"")
            lines.append("--url \"https://\(domain):\(port)\(path)\"")
            lines.append("--output \"\(outputs)/\(domain)\"")
        }
        let configFile = outputs + ".curlrc"
        try (lines.joined(separator: "\n") + "\n").write(toFile: configFile, atomically: true, encoding: .utf8)
        let run = try Command.run("curl", ["--config", configFile], timeout: 120)
        var results: [String: (exit: String, status: String)] = [:]
        for line in run.stdout.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count == 3, fields[2].hasPrefix("https://") else { continue }
            let host = fields[2].dropFirst("https://".count).prefix { $0 != ":" }
            results[String(host)] = (String(fields[0]), String(fields[1]))
        }
        var failures: [String] = []
        for domain in domains {
            guard let result = results[domain] else {
                failures.append("\(domain): no transfer (\(run.stderr.prefix(200)))")
                continue
            }
            // curl's exit status 60 is a certificate that does not verify for the name.
            guard result.exit == "0", result.status == "200" else {
                failures.append("\(domain): curl exit \(result.exit), HTTP \(result.status)")
                continue
            }
            let body = FileManager.default.contents(atPath: outputs + "/" + domain).map { [UInt8]($0) }
            if body != expected[domain] {
                failures.append("\(domain): not its own file: \(String(decoding: body ?? [], as: UTF8.self))")
            }
        }
        return failures
    }

    @Test func theCommandExpandsTheTemplateAndRefusesWhatCannotWork() throws {
        let binary = RepositoryPaths.executable
        let sample = try Command.run(
            binary, ["shards", "nginx", "--count", "3", "--config", RepositoryPaths.siteConfig])
        #expect(sample.status == 0, "\(sample.stderr)")
        #expect(sample.stdout.hasPrefix("# Generated by: aasa-server shards nginx --count 3 --config "))
        #expect(sample.stdout.contains("        links.example aasa_shard_0;\n        shop.example aasa_shard_1;\n"))
        #expect(sample.stdout.contains("        33.33% aasa_shard_1;\n        * aasa_shard_2;\n"))
        #expect(sample.stdout.contains("    upstream aasa_shard_2 {\n        server aasa-server-shard-2:8443;\n"))
        #expect(sample.stdout.contains("        listen 8443;\n"))

        let directory = TemporaryDirectory("aasa-shards-cli")
        try directory.write("ok.example/site.json", Self.siteJSON("ok.example"))
        try directory.write("Bad_Name/site.json", Self.siteJSON("ok.example"))
        let skipping = try Command.run(
            binary, ["shards", "nginx", "--count", "1", "--config", directory.path, "--upstream", "10.0.0.1:8443"])
        #expect(skipping.status == 0, "\(skipping.stderr)")
        #expect(skipping.stdout.contains("        ok.example aasa_shard_0;\n"))
        #expect(skipping.stdout.contains("        server 10.0.0.1:8443;\n"))
        #expect(!skipping.stdout.contains("Bad_Name") && !skipping.stdout.contains("bad_name"))
        #expect(skipping.stderr.contains("warning: [domain-name]") && skipping.stderr.contains("left out of the map"))

        let missing = try Command.run(
            binary, ["shards", "nginx", "--count", "2", "--config", directory.path + "/none"])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("cannot list the config folder"), "\(missing.stderr)")
        #expect(missing.stdout.isEmpty)

        let refused: [([String], String)] = [
            (["--count", "0"], "the shard count must be 1...100"),
            (["--count", "101"], "the shard count must be 1...100"),
            (["--count", "3", "--upstream", "a:1", "--upstream", "b:2"], "give --upstream once as a template"),
            (["--count", "2", "--upstream", "a:1"], "and no {index}"),
            (["--count", "2", "--upstream", "a b {index}"], "is not a host:port"),
            (["--count", "2", "--listen", "80; include /etc/passwd"], "is not a port or address:port"),
        ]
        for (arguments, message) in refused {
            let result = try Command.run(
                binary, ["shards", "nginx", "--config", RepositoryPaths.siteConfig] + arguments)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
    }

    /// The upstream blocks of a generated file, as `shard: [address]`.
    static func upstreamBlocks(_ text: String) -> [Int: [String]] {
        var blocks: [Int: [String]] = [:]
        var current: Int?
        for line in text.split(separator: "\n") {
            if line.hasPrefix("    upstream aasa_shard_") {
                current = Int(line.dropFirst("    upstream aasa_shard_".count).prefix { $0.isNumber })
            } else if line == "    }" {
                current = nil
            } else if let shard = current, line.hasPrefix("        server ") {
                blocks[shard, default: []].append(String(line.dropFirst("        server ".count)))
            }
        }
        return blocks
    }

    /// `--replicas R`: each shard's upstream lists its R replicas, from a template holding {index} and {replica}
    /// or from N x R addresses given shard by shard; the failover directives are written once a shard has two.
    @Test(arguments: [
        (
            ["--count", "2", "--replicas", "2", "--upstream", "shard-{index}-{replica}:8443"],
            [0: ["shard-0-0:8443", "shard-0-1:8443"], 1: ["shard-1-0:8443", "shard-1-1:8443"]]
        ),
        (
            ["--count", "2", "--replicas", "2"] + ["a:1", "b:1", "c:1", "d:1"].flatMap { ["--upstream", $0] },
            [0: ["a:1", "b:1"], 1: ["c:1", "d:1"]]
        ),
        (
            ["--count", "1", "--replicas", "3", "--upstream", "10.0.{replica}.1:8443"],
            [0: ["10.0.0.1:8443", "10.0.1.1:8443", "10.0.2.1:8443"]]
        ),
        (
            ["--count", "3", "--replicas", "1", "--upstream", "s{index}-{replica}:1"],
            [0: ["s0-0:1"], 1: ["s1-0:1"], 2: ["s2-0:1"]]
        ),
    ])
    func theCommandListsEachShardsReplicasInItsUpstream(arguments: [String], expected: [Int: [String]]) throws {
        let result = try Command.run(
            RepositoryPaths.executable, ["shards", "nginx", "--config", RepositoryPaths.siteConfig] + arguments)
        #expect(result.status == 0, "\(result.stderr)")
        let replicas = expected[0]?.count ?? 0
        let parameters = replicas > 1 ? " max_fails=1 fail_timeout=5s;" : ";"
        #expect(Self.upstreamBlocks(result.stdout) == expected.mapValues { $0.map { $0 + parameters } })
        let failover = [
            "        proxy_connect_timeout 1s;", "        proxy_next_upstream on;",
            "        proxy_next_upstream_tries \(replicas);",
        ]
        for line in failover {
            #expect(result.stdout.contains("\n" + line + "\n") == (replicas > 1), "\(line)")
        }
    }

    /// What `--replicas` cannot work with is refused before anything is printed, saying what to give instead.
    @Test(arguments: [
        (["--count", "2", "--replicas", "0"], "the replicas per shard must be 1...10; got --replicas 0"),
        (["--count", "2", "--replicas", "11"], "the replicas per shard must be 1...10; got --replicas 11"),
        (["--count", "2", "--replicas", "2"], "with --replicas 2, --upstream needs {replica} as well as {index}"),
        (
            ["--count", "2", "--replicas", "2", "--upstream", "shard-{index}:8443"],
            "with --replicas 2, --upstream needs {replica}"
        ),
        (
            ["--count", "2", "--replicas", "2", "--upstream", "r{replica}:8443"],
            "--upstream 'r{replica}:8443' has no {index}"
        ),
        (
            ["--count", "2", "--replicas", "2", "--upstream", "a:1", "--upstream", "b:1", "--upstream", "c:1"],
            "--count x --replicas = 2 x 2 = 4 times, one address per replica: shard 0's 2, then shard 1's...; got 3"
        ),
        (
            ["--count", "2", "--replicas", "2"] + ["a:1", "b:1", "c:1", "a:1"].flatMap { ["--upstream", $0] },
            "--upstream 'a:1' is given for shard 0, replica 0 and shard 1, replica 1"
        ),
        (
            ["--count", "2", "--upstream", "a:1", "--upstream", "a:1"],
            "--upstream 'a:1' is given for shard 0 and shard 1"
        ),
        (
            ["--count", "1", "--replicas", "2", "--upstream", "a:1", "--upstream", "b;1"],
            "--upstream 'b;1' is not a host:port"
        ),
        (["--count", "1", "--store", "postgresql://x@127.0.0.1:1/db"], "give --config or --store, not both"),
    ])
    func replicaUpstreamsThatCannotWorkAreRefused(arguments: [String], message: String) throws {
        let result = try Command.run(
            RepositoryPaths.executable, ["shards", "nginx", "--config", RepositoryPaths.siteConfig] + arguments)
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    /// Two shards of three replicas each, of which one per shard is live, one refuses connections (a process that
    /// is gone) and one never answers (a host that is gone): every new connection through the router reaches its
    /// shard's live replica, within curl's 10 s (nginx's own connect timeout is 60 s; the file's is 1 s).
    @Test(
        .enabled(
            if: NginxRouter.isInstalled,
            "nginx or its stream module is missing: run scripts/setup.sh --test (nginx libnginx-mod-stream)"))
    func aNewConnectionPassesOverAReplicaThatRefusesOrNeverAnswers() throws {
        let directory = TemporaryDirectory("aasa-shards-failover")
        let config = directory.path + "/site-config"
        let certs = directory.path + "/certs"
        let domains = Array(Self.domains.prefix(6))
        var expected: [String: [UInt8]] = [:]
        for domain in domains {
            try directory.write("site-config/\(domain)/site.json", Self.siteJSON(domain))
            expected[domain] = try Self.generated(domain)
        }
        #expect(Set(domains.map { Shard.index(of: $0, count: Self.count) }) == [0, 1])
        let caFile = try DevCertificates(certificateDirectory: certs).ensure(names: domains).caCertificatePath
        let servers = try (0..<Self.count).map { try Self.startShard($0, config: config, certs: certs) }
        defer { servers.forEach { $0.stop(timeout: .seconds(1)) } }
        let holes = try (0..<Self.count).map { _ in try BlackHole() }
        let refusing = (0..<Self.count).map { _ in freePort() }
        // Each shard's live replica comes last, so that the first connections to each shard meet the others.
        let replicas = [
            ["127.0.0.1:\(refusing[0])", "127.0.0.1:\(holes[0].port)", "127.0.0.1:\(servers[0].httpsPort ?? 0)"],
            ["127.0.0.1:\(holes[1].port)", "127.0.0.1:\(refusing[1])", "127.0.0.1:\(servers[1].httpsPort ?? 0)"],
        ]
        let routerPort = freePort()
        let generated = try Command.run(
            RepositoryPaths.executable,
            ["shards", "nginx", "--count", String(Self.count), "--replicas", "3", "--config", config]
                + replicas.joined().flatMap { ["--upstream", $0] } + ["--listen", "127.0.0.1:\(routerPort)"])
        #expect(generated.status == 0, "\(generated.stderr)")
        let router = try NginxRouter(
            directory: directory.path, include: try directory.write("router.conf", generated.stdout), port: routerPort)

        var durations: [Duration] = []
        for _ in 0..<3 {
            for domain in domains {
                let clock = ContinuousClock()
                let start = clock.now
                let answer = try Curl.request(
                    "https://\(domain):\(routerPort)\(Self.path)", caFile: caFile, resolve: (domain, routerPort))
                durations.append(clock.now - start)
                #expect(answer.status == 200, "\(domain): \(answer.error)")
                if answer.status == 200 { #expect(answer.body == expected[domain], "\(domain)") }
            }
        }
        // nginx met both kinds of gone replica and went on to the next one.
        #expect(router.log.contains("Connection refused) while connecting to upstream"), "\(router.log)")
        #expect(router.log.contains("upstream timed out"), "\(router.log)")
        print("failover: \(durations.count) connections, slowest \(durations.max() ?? .zero)")
    }

    @Test(
        .enabled(
            if: NginxRouter.isInstalled,
            "nginx or its stream module is missing: run scripts/setup.sh --test (nginx libnginx-mod-stream)"))
    func twoShardsBehindNginxServeEveryDomainAndANewDomainLandsOnExactlyOne() throws {
        let directory = TemporaryDirectory("aasa-shards")
        let config = directory.path + "/site-config"
        let certs = directory.path + "/certs"
        var expected: [String: [UInt8]] = [:]
        for domain in Self.domains {
            try directory.write("site-config/\(domain)/site.json", Self.siteJSON(domain))
            expected[domain] = try Self.generated(domain)
        }
        let caFile = try DevCertificates(certificateDirectory: certs).ensure(names: Self.domains).caCertificatePath
        let servers = try (0..<Self.count).map { try Self.startShard($0, config: config, certs: certs) }
        defer { servers.forEach { $0.stop(timeout: .seconds(1)) } }
        let ports = servers.map { $0.httpsPort ?? 0 }
        #expect(!ports.contains(0))

        // The router's configuration, as an operator makes it.
        let routerPort = freePort()
        #expect(FileManager.default.isExecutableFile(atPath: RepositoryPaths.executable), "build aasa-server first")
        let generated = try Command.run(
            RepositoryPaths.executable,
            ["shards", "nginx", "--count", String(Self.count), "--config", config]
                + ports.flatMap { ["--upstream", "127.0.0.1:\($0)"] } + ["--listen", "127.0.0.1:\(routerPort)"])
        #expect(generated.status == 0, "\(generated.stderr)")
        #expect(generated.stderr.isEmpty, "\(generated.stderr)")
        let routerConfig = try directory.write("router.conf", generated.stdout)
        let router = try NginxRouter(directory: directory.path, include: routerConfig, port: routerPort)

        // Every domain gets its own file, over a certificate that verifies for its name, through the router.
        let failures = try Self.fetchThroughRouter(
            Self.domains, port: router.port, caFile: caFile, expected: expected, scratch: directory.path)
        #expect(failures.isEmpty, "\(failures.count) of \(Self.domains.count) failed: \(failures.prefix(10))")

        // Each shard lists only its own domains, and together they list every domain once.
        var owners: [String: Int] = [:]
        for (index, server) in servers.enumerated() {
            let status = try Self.status(server)
            let shard = status["shard"] as? [String: Any]
            #expect(shard?["index"] as? Int == index, "\(String(describing: shard))")
            #expect(shard?["count"] as? Int == Self.count)
            for domain in (status["domains"] as? [String: Any] ?? [:]).keys {
                #expect(owners[domain] == nil, "\(domain) is on shards \(owners[domain] ?? -1) and \(index)")
                owners[domain] = index
            }
            let metrics = try HTTPProbe.get(port: server.adminPort ?? 0, host: "127.0.0.1", path: "/metrics").text
            #expect(metrics.contains(#"aasa_shard_info{index="\#(index)",count="\#(Self.count)"} 1"#))
        }
        #expect(Set(owners.keys) == Set(Self.domains))
        let misplaced = owners.filter { Shard.index(of: $0.key, count: Self.count) != $0.value }
        #expect(misplaced.isEmpty, "\(misplaced.prefix(10))")
        #expect(owners.values.filter { $0 == 0 }.count > 400 && owners.values.filter { $0 == 1 }.count > 400)

        // A shard does not answer for another's domain.
        let elsewhere = try #require(Self.domains.first { Shard.index(of: $0, count: Self.count) == 1 })
        let direct = try Curl.request(
            "https://\(elsewhere):\(ports[0])\(Self.path)", resolve: (elsewhere, ports[0]), extra: ["-k"])
        #expect(direct.status == 404, "\(direct.status) \(direct.error)")

        // A domain added after the router's configuration was made: published by exactly the shard the hash
        // names, and reached through the router's split_clients, which computes the same hash. It belongs to the
        // second shard, so a router that sent unmapped names to the first would fail here.
        let added = Self.domain(1001)
        #expect(Shard.index(of: added, count: Self.count) == 1)
        #expect(!generated.stdout.contains(added))
        try directory.write("site-config/\(added)/site.json", Self.siteJSON(added))
        expected[added] = try Self.generated(added)
        _ = try DevCertificates(certificateDirectory: certs).ensure(names: [added])
        for server in servers {
            let diagnostics = server.reload()
            #expect(!diagnostics.hasErrors, "\(diagnostics)")
        }
        #expect(servers.map { $0.publishedDomains.contains(added) } == [false, true])
        #expect(servers.map { $0.publishedDomains.count }.reduce(0, +) == Self.domains.count + 1)
        let afterReload = try Self.fetchThroughRouter(
            [added, Self.domains[0]], port: router.port, caFile: caFile, expected: expected, scratch: directory.path)
        #expect(afterReload.isEmpty, "\(afterReload)")
        #expect(!router.log.contains("[emerg]") && !router.log.contains("[error]"), "\(router.log)")
    }
}
