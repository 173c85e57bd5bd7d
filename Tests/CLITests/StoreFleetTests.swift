import AASACore
import AASAPostgres
import AASAServer
import AASATestSupport
import Foundation
import Synchronization
import Testing

/// Replicas of `serve --store` on one real PostgreSQL cluster, run as a fleet runs them: the built binary, each replica
/// in a folder of its own holding no site-config/ and no certs/, the store filled by `store push`.
@Suite(.storeCluster, .serialized) struct StoreFleetTests: StoreFleetSuite {
    static let association = "/.well-known/apple-app-site-association"

    /// The SHA-256 fingerprint of the certificate `serve` presents for `domain`.
    func fingerprint(_ serve: ServeProcess, _ domain: String) throws -> String {
        let output = try Command.run(
            "sh",
            [
                "-c",
                "openssl s_client -connect 127.0.0.1:\(serve.port) -servername \(domain) </dev/null 2>/dev/null "
                    + "| openssl x509 -noout -fingerprint -sha256",
            ], timeout: 30)
        return output.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func status(_ serve: ServeProcess) throws -> [String: Any] {
        let answer = try Curl.request("http://127.0.0.1:\(serve.admin)/status")
        return try #require(try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any])
    }

    func store(_ serve: ServeProcess) throws -> [String: Any] {
        try #require(try status(serve)["store"] as? [String: Any])
    }

    /// Polls `condition` every 20 ms for up to `seconds` (of a fast machine, scaled by ``TestTime``); returns how
    /// long it took, or `nil`.
    func waitFor(_ seconds: Double, _ condition: () throws -> Bool) rethrows -> Double? {
        let started = Date()
        while Date().timeIntervalSince(started) < TestTime.seconds(seconds) {
            if try condition() { return Date().timeIntervalSince(started) }
            usleep(20_000)
        }
        return nil
    }

    /// links.example's site.json with one more rule, `/fleet-<marker>/*`.
    func edit(_ workspace: TemporaryDirectory, marker: String) throws {
        let file = workspace.path + "/site-config/links.example/site.json"
        let text = try String(contentsOfFile: file, encoding: .utf8)
        try text.replacingOccurrences(
            of: #"{ "path": "/beta/*" }"#, with: #"{ "path": "/beta/*" }, { "path": "/fleet-\#(marker)/*" }"#
        ).write(toFile: file, atomically: true, encoding: .utf8)
    }

    @Test func threeReplicasConvergeOnAPushedChange() throws {
        let (workspace, uri) = try pushed("converge")
        let replicas = try (0..<3).map { try replica(workspace, uri, "r\($0)") }
        for (serve, _) in replicas { #expect(serve.waitUntilReady()) }

        // Every replica serves the same bytes and the same certificate for every domain.
        for domain in ["shop.example", "links.example"] {
            let answers = try replicas.map { try fetch(workspace, $0.0, domain) }
            #expect(answers.allSatisfy { $0.status == 200 }, "\(domain): \(answers.map(\.error))")
            #expect(Set(answers.map(\.body)).count == 1, "\(domain): the replicas serve different bytes")
            #expect(Set(answers.map { $0.headers["etag"] ?? "" }).count == 1)
            let prints = try replicas.map { try fingerprint($0.0, domain) }
            #expect(prints.allSatisfy { $0.contains("Fingerprint") } && Set(prints).count == 1, "\(prints)")
        }
        // A page of shop.example's pages/ folder, dated by its change: the same Last-Modified everywhere.
        let pages = try replicas.map { try fetch(workspace, $0.0, "shop.example", "/") }
        #expect(pages.allSatisfy { $0.status == 200 }, "\(pages.map(\.status))")
        #expect(Set(pages.map { $0.headers["last-modified"] ?? "" }).count == 1)

        // A change pushed is served by every replica within the target.
        try edit(workspace, marker: "one")
        let before = try store(replicas[0].0)["lastChange"] as? Double ?? 0
        try push(workspace, uri)
        let took = waitFor(10) {
            replicas.allSatisfy { (try? fetch(workspace, $0.0, "links.example").text.contains("/fleet-one/*")) == true }
        }
        #expect(took != nil && took! < 5, "every replica serves the change (took \(String(describing: took)) s)")
        for (serve, _) in replicas {
            let store = try store(serve)
            #expect(store["state"] as? String == "connected")
            #expect((store["lastChange"] as? Double ?? 0) > before)
            #expect((store["changesApplied"] as? Double ?? 0) >= 1)
            let metrics = try Curl.request("http://127.0.0.1:\(serve.admin)/metrics").text
            #expect(metrics.contains("aasa_store_up 1"), "\(metrics.prefix(300))")
            #expect(metrics.contains("aasa_store_changes_applied_total "))
        }
        let replicaNames = try replicas.map { try store($0.0)["replica"] as? String ?? "" }
        #expect(replicaNames == ["r0", "r1", "r2"])

        // The dashboard of a replica says which replica it is, that the store is connected, and its last change.
        let profile = TemporaryDirectory("aasa-devtools")
        let browser = try DevTools(profile: profile.path)
        let page = try browser.openPage(width: 1280, height: 900)
        try page.navigate("http://127.0.0.1:\(replicas[1].0.admin)/")
        try page.wait(for: "!document.querySelector('#store-fact').hidden")
        let shown = try #require(try page.evaluate("document.querySelector('#store').textContent") as? String)
        let last = try store(replicas[1].0)["lastChange"] as? Double ?? 0
        #expect(shown.contains("connected") && shown.contains("replica r1"), "\(shown)")
        #expect(shown.contains("change \(Int(last))"), "\(shown)")
    }

    @Test func aBrokenRowIsThatDomainsErrorAndTheLastGoodVersionStays() throws {
        let (workspace, uri) = try pushed("broken")
        let log = workspace.path + "/replica.log"
        let (serve, _) = try replica(workspace, uri, "r0", log: log)
        #expect(serve.waitUntilReady())
        let good = try fetch(workspace, serve, "links.example").body

        // A row written past `store push` (which would refuse it): a syntax error on line 3.
        let store = try Store(uri: uri)
        let stored = try #require(try store.domain("links.example"))
        try store.put(
            StoredDomain(name: "links.example", siteJSON: Array("{\n  \"legacyFormat\": false,\n  oops\n}".utf8)))
        _ = stored
        let reported = waitFor(10) {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("links.example/site.json:3:")
        }
        #expect(reported != nil, "the diagnostic names the row as <domain>/site.json:line:col")
        #expect(try fetch(workspace, serve, "links.example").body == good, "the last good version is still served")
        #expect(try fetch(workspace, serve, "shop.example").status == 200, "another domain is untouched")
        let domains = try #require(try status(serve)["domains"] as? [String: Any])
        let links = try #require(domains["links.example"] as? [String: Any])
        #expect(links["state"] as? String == "stale", "\(links)")

        // Rows no push would write: a site.json over the cap, and a file whose path leaves the domain folder. Each is
        // its domain's error; nothing is written for either.
        let site = try #require(try store.domain("shop.example")).siteJSON
        try store.put(StoredDomain(name: "huge.example", siteJSON: Array(repeating: 0x20, count: (1 << 20) + 1)))
        try store.put(
            StoredDomain(name: "escape.example", siteJSON: site, files: ["../../../escaped-\(getpid())": [1]]))
        let failed = waitFor(10) {
            let domains = (try? status(serve)["domains"] as? [String: Any]) ?? [:]
            return ["huge.example", "escape.example"].allSatisfy {
                (domains[$0] as? [String: Any])?["state"] as? String == "failed"
            }
        }
        #expect(failed != nil, "both are listed as failed")
        let text = try String(contentsOfFile: log, encoding: .utf8)
        #expect(text.contains("huge.example/site.json") && text.contains("over the 1048576"), "\(text.suffix(3000))")
        #expect(text.contains("'../../../escaped-\(getpid())' is not a path inside the domain folder"))
        // A domain folder written below TMPDIR would have put it three levels up: TMPDIR's parent.
        let above = (NSTemporaryDirectory() as NSString).standardizingPath
        #expect(
            !FileManager.default.fileExists(
                atPath: (above as NSString).deletingLastPathComponent + "/escaped-\(getpid())"))
        #expect(try fetch(workspace, serve, "shop.example").status == 200)
    }

    @Test func aDomainThatSignsIsSignedWithItsCertificateFromTheStore() throws {
        let uri = try StoreCluster.database("signing")
        let workspace = TemporaryDirectory("aasa-fleet-signing")
        try workspace.copy(RepositoryPaths.siteConfig, to: "site-config")
        #expect(try aasa(["certs", "dev"], in: workspace.path).status == 0)
        let key = try workspace.write("store.key", String(repeating: "b", count: 63) + "2\n")
        #expect(chmod(key, 0o600) == 0)
        let file = workspace.path + "/site-config/links.example/site.json"
        try String(contentsOfFile: file, encoding: .utf8).replacingOccurrences(
            of: #""legacyFormat": false,"#, with: #""legacyFormat": false, "signing": true,"#
        ).write(toFile: file, atomically: true, encoding: .utf8)
        // The chain as a CA's would be, leaf then issuer: a replica knows no development CA (it has no folders).
        let chain = try FileHandle(
            forWritingTo: URL(fileURLWithPath: workspace.path + "/certs/links.example/fullchain.pem"))
        chain.seekToEndOfFile()
        chain.write(try Data(contentsOf: URL(fileURLWithPath: workspace.path + "/certs/dev-ca/ca.pem")))
        try chain.close()
        try push(workspace, uri)
        let log = workspace.path + "/replica.log"
        let (serve, _) = try replica(workspace, uri, "r0", log: log)
        #expect(serve.waitUntilReady(), "\((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")

        let json = try fetch(workspace, serve, "links.example")
        let signed = try fetch(workspace, serve, "links.example", "/apple-app-site-association")
        #expect(signed.status == 200)
        #expect(signed.headers["content-type"] == "application/pkcs7-mime", "\(signed.headers)")
        let signature = try workspace.write("signed.der", "")
        try Data(signed.body).write(to: URL(fileURLWithPath: signature))
        let verified = try Command.run(
            "openssl",
            [
                "cms", "-verify", "-inform", "DER", "-in", signature, "-CAfile",
                workspace.path + "/certs/dev-ca/ca.pem", "-purpose", "any",
            ], timeout: 30)
        #expect(verified.status == 0, "\(verified.stderr)")
        #expect(verified.stdoutBytes == json.body, "the signed content is the JSON the domain serves")
    }

    @Test func aDomainDeletedFromTheStoreIsServedThroughItsGraceThenGone() throws {
        let (workspace, uri) = try pushed("removal")
        let (serve, _) = try replica(workspace, uri, "r0", arguments: ["--removal-grace", "2"])
        #expect(serve.waitUntilReady())
        try FileManager.default.removeItem(atPath: workspace.path + "/site-config/links.example")
        try push(workspace, uri)
        // The change reaches the replica at once; the domain stays until its grace ends, then answers 404.
        let removing = waitFor(10) {
            let domains = (try? status(serve)["domains"] as? [String: Any]) ?? [:]
            return (domains["links.example"] as? [String: Any])?["state"] as? String == "removing"
        }
        #expect(removing != nil, "the replica marks the domain removing")
        #expect(try fetch(workspace, serve, "links.example").status == 200, "served through its grace")
        let gone = waitFor(15) { (try? fetch(workspace, serve, "links.example").status) == 404 }
        #expect(gone != nil && gone! > 0.5, "unpublished when its grace ends (after \(String(describing: gone)) s)")
        #expect(try fetch(workspace, serve, "shop.example").status == 200)
    }

    @Test func aStoreKeyThatDoesNotOpenTheKeysIsAnErrorNamingTheKeyFile() throws {
        let (workspace, uri) = try pushed("wrongkey")
        let other = try workspace.write("other.key", String(repeating: "c", count: 63) + "3\n")
        #expect(chmod(other, 0o600) == 0)
        let log = workspace.path + "/replica.log"
        let folder = TemporaryDirectory("aasa-replica-wrongkey")
        let serve = try ServeProcess(
            in: folder.path, arguments: ["--store", uri, "--store-key-file", other], errorLog: log)
        let exited = waitFor(30) { !serve.process.isRunning }
        #expect(exited != nil, "with no certificate usable, HTTPS cannot start")
        #expect(serve.process.terminationStatus != 0)
        let text = try String(contentsOfFile: log, encoding: .utf8)
        #expect(text.contains("\(other) does not open it"), "\(text.suffix(2000))")
        #expect(text.contains("certs/shop.example/privkey.pem"), "the row is named as the folder it was pushed from")
        #expect(!text.contains("PRIVATE KEY"))
    }

    @Test func databaseStoppedAndStartedUnderLoadFailsNoRequest() throws {
        let (workspace, uri) = try pushed("outage")
        let log = workspace.path + "/replica.log"
        let (serve, _) = try replica(workspace, uri, "r0", log: log)
        #expect(serve.waitUntilReady())

        let stop = Atomic<Bool>(false)
        let counts = Mutex((ok: 0, failed: [String]()))
        let (port, ca) = (serve.port, workspace.path + "/certs/dev-ca/ca.pem")
        let load = Thread {
            while !stop.load(ordering: .relaxed) {
                for domain in ["shop.example", "links.example"] {
                    let answer = try? Curl.request(
                        "https://\(domain):\(port)\(Self.association)", caFile: ca, resolve: (domain, port))
                    counts.withLock {
                        if answer?.status == 200 {
                            $0.ok += 1
                        } else {
                            $0.failed.append("\(domain): \(answer?.error ?? "no answer")")
                        }
                    }
                }
            }
        }
        load.start()
        defer { stop.store(true, ordering: .relaxed) }
        usleep(500_000)
        let cluster = try StoreCluster.current()
        cluster.stop()
        let noticed = waitFor(30) { (try? store(serve)["state"] as? String) == "reconnecting" }
        #expect(noticed != nil, "/status says the store is reconnecting")
        let metrics = try Curl.request("http://127.0.0.1:\(serve.admin)/metrics").text
        #expect(metrics.contains("aasa_store_up 0"))
        usleep(1_500_000)
        try cluster.start()
        let back = waitFor(30) { (try? store(serve)["state"] as? String) == "connected" }
        #expect(back != nil, "the replica reconnects")

        // The change made after the database is back is served.
        try edit(workspace, marker: "after")
        try push(workspace, uri)
        let served = waitFor(10) {
            (try? fetch(workspace, serve, "links.example").text.contains("/fleet-after/*")) == true
        }
        #expect(served != nil)
        stop.store(true, ordering: .relaxed)
        while !load.isFinished { usleep(10_000) }
        let (ok, failed) = counts.withLock { ($0.ok, $0.failed) }
        #expect(ok > 20, "requests were made throughout (\(ok))")
        #expect(failed.isEmpty, "\(failed.prefix(5))")
        // The loss and the recovery are logged once each.
        let text = try String(contentsOfFile: log, encoding: .utf8)
        #expect(text.components(separatedBy: "store connection lost").count - 1 == 1, "\(text.suffix(2000))")
        #expect(text.components(separatedBy: "store connection restored").count - 1 == 1)
    }

    @Test func replicaStartsFromItsSnapshotWhileTheDatabaseIsDown() throws {
        let (workspace, uri) = try pushed("snapshot")
        let cache = workspace.path + "/cache"
        var (serve, folder) = try replica(workspace, uri, "r0", arguments: ["--store-cache", cache])
        #expect(serve.waitUntilReady())
        let served = try fetch(workspace, serve, "links.example").body
        #expect(waitFor(10) { FileManager.default.fileExists(atPath: cache + "/state") } != nil)
        #expect(serve.terminate(within: 10) == 0)
        // The snapshot keeps the keys sealed.
        for file in try FileManager.default.subpathsOfDirectory(atPath: cache) {
            let bytes = FileManager.default.contents(atPath: cache + "/" + file) ?? Data()
            #expect(!String(decoding: bytes, as: UTF8.self).contains("PRIVATE KEY"), "\(file)")
        }

        let cluster = try StoreCluster.current()
        cluster.stop()
        defer { try? cluster.start() }
        // A write cut short: half of a frame of links.example after the last whole one. The rows before it are
        // served, and it is named in one log line.
        let pack = cache + "/domains.pack"
        let frame = SnapshotFrame(put: "links.example", record: Array(repeating: 1, count: 600)).bytes
        let handle = try #require(FileHandle(forWritingAtPath: pack))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(frame.prefix(300)))
        try handle.close()
        let log = workspace.path + "/snapshot-start.log"
        (serve, folder) = try replica(workspace, uri, "r0", arguments: ["--store-cache", cache], log: log)
        _ = folder
        #expect(serve.waitUntilReady(), "a replica starts from its snapshot with the database down")
        #expect(try fetch(workspace, serve, "links.example").body == served)
        #expect(try fetch(workspace, serve, "shop.example").status == 200)
        #expect(try store(serve)["servingSnapshot"] as? Bool == true)
        let text = try String(contentsOfFile: log, encoding: .utf8)
        #expect(text.components(separatedBy: "not a whole frame").count - 1 == 1, "\(text.suffix(2000))")
        #expect(text.contains("bytes=300") && text.contains(pack), "\(text.suffix(2000))")

        // Without a snapshot, a replica is alive but not ready while the database is down, and keeps trying.
        let (waiting, _) = try replica(workspace, uri, "r1")
        #expect(waiting.waitUntilHealthy(), "its admin listener answers while it waits")
        usleep(1_500_000)
        let notReady = try Curl.request("http://127.0.0.1:\(waiting.admin)/readyz")
        #expect(notReady.status == 503, "\(notReady.status) \(notReady.text)")
        let starting = try Curl.request("http://127.0.0.1:\(waiting.admin)/status")
        #expect(starting.status == 503)
        let waitingStore = try #require(
            (try JSONSerialization.jsonObject(with: Data(starting.body)) as? [String: Any])?["store"] as? [String: Any])
        #expect(waitingStore["state"] as? String == "connecting", "\(waitingStore)")
        #expect((waitingStore["problem"] as? String ?? "").contains("127.0.0.1"), "\(waitingStore)")

        try cluster.start()
        let ready = waitFor(30) { (try? Curl.request("http://127.0.0.1:\(waiting.admin)/readyz"))?.status == 200 }
        #expect(ready != nil, "it is ready once the database is back")
        #expect(waitFor(30) { (try? store(serve)["servingSnapshot"] as? Bool) == false } != nil)
        try edit(workspace, marker: "snap")
        try push(workspace, uri)
        for replica in [serve, waiting] {
            #expect(
                waitFor(10) { (try? fetch(workspace, replica, "links.example").text.contains("/fleet-snap/*")) == true }
                    != nil)
        }
    }

    @Test func aReplicaStartedFromAnotherShardsSnapshotReadsItsOwnRowsOnceTheStoreIsBack() throws {
        let (workspace, uri) = try pushed("snapshotshard")
        let template = try String(
            contentsOfFile: workspace.path + "/site-config/links.example/site.json", encoding: .utf8)
        let names = (1...12).map { "tenant-\($0).example" }
        for name in names {
            _ = try workspace.write(
                "site-config/\(name)/site.json", template.replacingOccurrences(of: "links.example", with: name))
        }
        #expect(try aasa(["certs", "dev"], in: workspace.path).status == 0, "a certificate for each new domain")
        try push(workspace, uri)
        let cache = workspace.path + "/cache"
        let (first, _) = try replica(workspace, uri, "r0", arguments: ["--shard", "0/2", "--store-cache", cache])
        #expect(first.waitUntilReady())
        #expect(waitFor(10) { FileManager.default.fileExists(atPath: cache + "/state") } != nil)
        #expect(first.terminate(within: 10) == 0)

        // The same cache, now shard 1/2, started while the database is down: it serves what its snapshot holds of
        // shard 1 (nothing), and once the store is back, every domain of shard 1.
        let cluster = try StoreCluster.current()
        cluster.stop()
        defer { try? cluster.start() }
        let log = workspace.path + "/second.log"
        let (second, _) = try replica(
            workspace, uri, "r0", arguments: ["--shard", "1/2", "--store-cache", cache], log: log)
        #expect(second.waitUntilHealthy())
        try cluster.start()
        let shard = try Shard(index: 1, count: 2)
        let expected = Set(names + ["shop.example", "links.example"]).filter { shard.owns($0) }
        #expect(!expected.isEmpty)
        let loaded = waitFor(30) {
            let domains = (try? status(second)["domains"] as? [String: Any]) ?? [:]
            return Set(domains.keys) == expected
        }
        #expect(loaded != nil, "the replica reads its shard's rows once the store is back")
        for domain in expected {
            let answer = try fetch(workspace, second, domain)
            #expect(
                answer.status == 200,
                "\(domain): \(answer.error) \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        }
    }

    @Test func shardReplicaLoadsOnlyItsPartition() throws {
        let (workspace, uri) = try pushed("shards")
        // Twenty more domains, copies of links.example.
        let template = try String(
            contentsOfFile: workspace.path + "/site-config/links.example/site.json", encoding: .utf8)
        let names = (1...20).map { "tenant-\($0).example" }
        for name in names {
            _ = try workspace.write(
                "site-config/\(name)/site.json", template.replacingOccurrences(of: "links.example", with: name))
        }
        try push(workspace, uri)
        let all = Set(names + ["shop.example", "links.example"])
        var seen: Set<String> = []
        for index in 0..<2 {
            let shard = try Shard(index: index, count: 2)
            let (serve, _) = try replica(workspace, uri, "s\(index)", arguments: ["--shard", "\(index)/2"])
            #expect(serve.waitUntilReady())
            let domains = try #require(try status(serve)["domains"] as? [String: Any])
            let expected = all.filter { shard.owns($0) }
            #expect(Set(domains.keys) == expected, "shard \(index)/2")
            seen.formUnion(domains.keys)
        }
        #expect(seen == all)
    }
}
