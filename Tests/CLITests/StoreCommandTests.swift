import AASAPostgres
import AASAServer
import AASATestSupport
import Foundation
import Synchronization
import Testing

/// `aasa-server store init|push|pull` against a real PostgreSQL cluster, run as an operator and a GitOps pipeline run
/// them: the built binary, real folders, each test on a database of its own.
@Suite(.storeCluster, .serialized) struct StoreCommandTests {
    func aasa(_ arguments: [String], in directory: String) throws -> Command.Output {
        try Command.run(RepositoryPaths.executable, arguments, currentDirectory: directory, timeout: 120)
    }

    /// A folder with the repository's site-config/, a dev certs/ and a store key file (mode 0600).
    func workspace(_ name: String) throws -> TemporaryDirectory {
        let directory = TemporaryDirectory(name)
        try directory.copy(RepositoryPaths.siteConfig, to: "site-config")
        let certs = try aasa(["certs", "dev"], in: directory.path)
        #expect(certs.status == 0, "\(certs.stderr)")
        try writeKey(directory, "store.key", byte: "a")
        return directory
    }

    func writeKey(_ directory: TemporaryDirectory, _ name: String, byte: Character) throws {
        let path = try directory.write(name, String(repeating: byte, count: 63) + "1\n")
        #expect(chmod(path, 0o600) == 0)
    }

    /// Every file below `folder`, by relative path.
    func files(_ folder: String) throws -> [String: Data] {
        var found: [String: Data] = [:]
        let enumerator = try #require(FileManager.default.enumerator(atPath: folder))
        while let relative = enumerator.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: folder + "/" + relative, isDirectory: &isDirectory),
                !isDirectory.boolValue
            {
                found[relative] = FileManager.default.contents(atPath: folder + "/" + relative)
            }
        }
        return found
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String($0 >> 4, radix: 16) + String($0 & 15, radix: 16) }.joined()
    }

    func changeCount(_ uri: String) throws -> Int {
        let connection = try PostgresConnection(uri: uri)
        defer { connection.close() }
        return Int(try connection.execute("SELECT count(*) FROM changes").text(0, 0) ?? "") ?? -1
    }

    /// `store push` of the workspace's site-config/ and certs/ to `uri`, sealed with store.key.
    func pushArguments(_ uri: String) -> [String] {
        [
            "store", "push", "--config", "site-config", "--certs", "certs", "--store", uri, "--store-key-file",
            "store.key",
        ]
    }

    @Test func pushThenPullRoundTripsTheConfigAndCertificatesByteForByte() throws {
        let uri = try StoreCluster.database("roundtrip")
        let directory = try workspace("aasa-store-roundtrip")
        for _ in 0..<2 {
            let initialised = try aasa(["store", "init", "--store", uri], in: directory.path)
            #expect(initialised.status == 0, "\(initialised.stderr)")
            #expect(
                initialised.stdout.contains("schema version \(StoreSchema.currentVersion)"), "\(initialised.stdout)")
        }
        let push = try aasa(
            [
                "store", "push", "--config", "site-config", "--certs", "certs", "--store", uri,
                "--store-key-file", "store.key",
            ], in: directory.path)
        #expect(push.status == 0, "\(push.stdout)\(push.stderr)")
        #expect(push.stdout.contains("shop.example: added"), "\(push.stdout)")
        #expect(push.stdout.contains("certificate shop.example: added"), "\(push.stdout)")

        // No private key in a dump: no armour, and no 8-byte run of any key's PEM, as text or as the hex pg_dump
        // writes bytea in.
        let cluster = try StoreCluster.current()
        let dump = try cluster.run(
            "pg_dump", ["-h", "127.0.0.1", "-p", String(cluster.port), "-U", "postgres", "roundtrip"])
        #expect(dump.status == 0)
        #expect(dump.output.contains("certificates"))
        #expect(!dump.output.contains("PRIVATE KEY"))
        #expect(!dump.output.contains(Self.hex(Array("PRIVATE KEY".utf8))))
        // A key's PEM shares its armour dashes and its public key with the certificate, which is public and
        // stored as it is: a run that is also in a certificate's PEM says nothing; any other one is the secret.
        let source = try files(directory.path + "/certs")
        let certificatePEMs = source.filter { $0.key.hasSuffix("fullchain.pem") }.values.map {
            String(decoding: $0, as: UTF8.self)
        }
        for (path, key) in source where path.hasSuffix("privkey.pem") {
            let bytes = [UInt8](key)
            let secret = (0...(bytes.count - 8)).filter { start in
                let text = String(decoding: bytes[start..<start + 8], as: UTF8.self)
                return !certificatePEMs.contains { $0.contains(text) }
            }
            #expect(secret.count > 100, "\(path): only \(secret.count) runs of the key are not in a certificate")
            let leaked = secret.filter { start in
                let run = Array(bytes[start..<start + 8])
                return dump.output.contains(String(decoding: run, as: UTF8.self)) || dump.output.contains(Self.hex(run))
            }
            #expect(leaked.isEmpty, "\(path): \(leaked.count) 8-byte runs of the key's PEM in the dump")
        }

        let pull = try aasa(
            [
                "store", "pull", "--store", uri, "--config", "pulled/site-config", "--certs", "pulled/certs",
                "--store-key-file", "store.key",
            ], in: directory.path)
        #expect(pull.status == 0, "\(pull.stdout)\(pull.stderr)")
        let original = try files(directory.path + "/site-config")
        #expect(original.keys.contains("shop.example/pages/index.html"))
        #expect(try files(directory.path + "/pulled/site-config") == original)
        // Every certificate folder (dev-ca/ holds a CA, not a certificate: it is not pushed).
        let certificates = try files(directory.path + "/certs").filter { !$0.key.hasPrefix("dev-ca/") }
        #expect(certificates.keys.contains("shop.example/privkey.pem"))
        #expect(try files(directory.path + "/pulled/certs") == certificates)
        let mode =
            try FileManager.default.attributesOfItem(
                atPath: directory.path + "/pulled/certs/shop.example/privkey.pem")[.posixPermissions] as? Int
        #expect(mode == 0o600)

        // Another key file opens nothing: named, and no certificate file written, nor a key resealed by a push.
        try writeKey(directory, "other.key", byte: "b")
        let changes = try changeCount(uri)
        let otherPush = try aasa(
            [
                "store", "push", "--config", "site-config", "--certs", "certs", "--store", uri,
                "--store-key-file", "other.key",
            ], in: directory.path)
        #expect(otherPush.status == 1)
        #expect(otherPush.stderr.contains("other.key: error: the store key does not open"), "\(otherPush.stderr)")
        #expect(try changeCount(uri) == changes)
        let wrong = try aasa(
            [
                "store", "pull", "--store", uri, "--config", "wrong/site-config", "--certs", "wrong/certs",
                "--store-key-file", "other.key",
            ], in: directory.path)
        #expect(wrong.status == 1)
        #expect(wrong.stderr.contains("other.key: error:"), "\(wrong.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/wrong/certs/shop.example"))
    }

    @Test func aSecondIdenticalPushChangesNothingAndPruneRemoves() throws {
        let uri = try StoreCluster.database("repeat")
        let directory = try workspace("aasa-store-repeat")
        let arguments = pushArguments(uri)
        // A dry run writes nothing, not even the schema.
        let early = try aasa(arguments + ["--dry-run"], in: directory.path)
        #expect(early.status == 1)
        #expect(early.stderr.contains("run aasa-server store init"), "\(early.stderr)")
        let connection = try PostgresConnection(uri: uri)
        defer { connection.close() }
        #expect(try connection.execute("SELECT to_regclass('schema_version') IS NULL").text(0, 0) == "t")

        let first = try aasa(arguments, in: directory.path)
        #expect(first.status == 0, "\(first.stderr)")
        let changes = try changeCount(uri)
        #expect(changes >= 4)
        let second = try aasa(arguments, in: directory.path)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdout.contains("nothing changed"), "\(second.stdout)")
        #expect(try changeCount(uri) == changes)

        // A semantic change is summarised as diff would; --dry-run writes nothing.
        try DiffCommandTests.moveExclusion(directory.path + "/site-config/shop.example/site.json")
        let dry = try aasa(arguments + ["--dry-run"], in: directory.path)
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stdout.contains("shop.example: 1 class of URLs change (1 web-to-app)"), "\(dry.stdout)")
        #expect(try changeCount(uri) == changes)
        let changed = try aasa(arguments, in: directory.path)
        #expect(changed.stdout.contains("shop.example: 1 class of URLs change"), "\(changed.stdout)")
        #expect(!changed.stdout.contains("links.example"), "\(changed.stdout)")
        #expect(try changeCount(uri) == changes + 1)

        try FileManager.default.removeItem(atPath: directory.path + "/site-config/links.example")
        let kept = try aasa(arguments, in: directory.path)
        #expect(kept.stdout.contains("nothing changed"), "\(kept.stdout)")
        let pruned = try aasa(arguments + ["--prune"], in: directory.path)
        #expect(pruned.status == 0, "\(pruned.stderr)")
        #expect(pruned.stdout.contains("links.example: removed"), "\(pruned.stdout)")
        let pull = try aasa(["store", "pull", "--store", uri, "--config", "pulled"], in: directory.path)
        #expect(pull.status == 0, "\(pull.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/pulled/links.example"))
        #expect(FileManager.default.fileExists(atPath: directory.path + "/pulled/shop.example/site.json"))

        // Each push that changed a domain is in its history (the API's), by `store push`, with the line it printed.
        let repository = StoreDomainRepository(uri: uri)
        let shop = try repository.history("shop.example", limit: 10)
        #expect(shop.map(\.actor) == ["store push", "store push"])
        #expect(shop.first?.summary.hasPrefix("1 class of URLs change") == true, "\(shop)")
        #expect(shop.last?.summary.hasPrefix("added") == true, "\(shop)")
        let current = try #require(try repository.read("shop.example"))
        #expect(shop.first?.revision == current.revision)
        #expect(try repository.siteJSON("shop.example", revision: shop[1].revision) != current.siteJSON)
        let links = try repository.history("links.example", limit: 10)
        #expect(links.map(\.removed) == [true, false], "\(links)")
    }

    @Test func aFolderUnchangedSincePushedIsNotReadAgainUntilAFileItsRowOrTheKeyMoves() throws {
        let uri = try StoreCluster.database("stamps")
        let directory = try workspace("aasa-store-stamps")
        let arguments = pushArguments(uri)
        let certificates = try FileManager.default.contentsOfDirectory(atPath: directory.path + "/certs").filter {
            FileManager.default.fileExists(atPath: directory.path + "/certs/\($0)/fullchain.pem")
        }
        let folders = 2 + certificates.count
        // Every file was written just now, within the settling time: nothing is stamped.
        let first = try aasa(arguments, in: directory.path)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(!first.stdout.contains("not read again"), "\(first.stdout)")
        Thread.sleep(forTimeInterval: 2.2)
        let changes = try changeCount(uri)
        let second = try aasa(arguments, in: directory.path)
        #expect(second.stdout.contains("nothing changed"), "\(second.stdout)")
        #expect(!second.stdout.contains("not read again"), "\(second.stdout)")
        let third = try aasa(arguments, in: directory.path)
        #expect(third.status == 0, "\(third.stderr)")
        #expect(third.stdout.contains("\(folders) folders unchanged since a push compared them"), "\(third.stdout)")
        #expect(third.stdout.contains("nothing changed"), "\(third.stdout)")
        // Keeping the stamps wrote no change.
        #expect(try changeCount(uri) == changes)

        // A page rewritten in place to the same size: only its times moved.
        let page = directory.path + "/site-config/shop.example/pages/index.html"
        var bytes = try #require(FileManager.default.contents(atPath: page))
        bytes[bytes.startIndex] = bytes.first == UInt8(ascii: "x") ? UInt8(ascii: "y") : UInt8(ascii: "x")
        let handle = try #require(FileHandle(forWritingAtPath: page))
        try handle.write(contentsOf: bytes)
        try handle.close()
        Thread.sleep(forTimeInterval: 2.2)
        let rewritten = try aasa(arguments, in: directory.path)
        #expect(rewritten.stdout.contains("shop.example: site.json unchanged; pages: 1 changed"), "\(rewritten.stdout)")
        #expect(rewritten.stdout.contains("\(folders - 1) folders unchanged"), "\(rewritten.stdout)")

        // Another writer (the tenant API) moves the row: its stamp no longer holds, and the push puts the folder's
        // site.json back.
        let repository = StoreDomainRepository(uri: uri)
        let current = try #require(try repository.read("links.example"))
        _ = try repository.write(
            "links.example", siteJSON: Array(#"{"universalLinks": {"apps": []}}"#.utf8),
            expecting: .revision(current.revision), actor: "test", summary: "edited")
        let restored = try aasa(arguments, in: directory.path)
        #expect(restored.stdout.contains("links.example:"), "\(restored.stdout)")
        #expect(restored.stdout.contains("\(folders - 1) folders unchanged"), "\(restored.stdout)")
        #expect(try repository.read("links.example")?.siteJSON == current.siteJSON)

        // Another store key stamps differently: every certificate is compared again, and the key that does not open
        // the stored ones is named.
        try writeKey(directory, "other.key", byte: "b")
        let before = try changeCount(uri)
        let otherKey = try aasa(
            Array(arguments.dropLast()) + ["other.key"], in: directory.path)
        #expect(otherKey.status == 1)
        #expect(otherKey.stderr.contains("other.key: error: the store key does not open"), "\(otherKey.stderr)")
        #expect(try changeCount(uri) == before)
    }

    @Test func anInvalidDomainIsRefusedWithItsDiagnosticAndTheOthersAreWritten() throws {
        let uri = try StoreCluster.database("invalid")
        let directory = try workspace("aasa-store-invalid")
        try directory.write("site-config/broken.example/site.json", #"{ "universalLinks": { "apps": [ }"#)
        let push = try aasa(["store", "push", "--config", "site-config", "--store", uri], in: directory.path)
        #expect(push.status == 2, "\(push.stdout)\(push.stderr)")
        #expect(push.stderr.contains("broken.example: refused"), "\(push.stderr)")
        #expect(push.stderr.contains("broken.example/site.json:1:"), "\(push.stderr)")
        #expect(push.stdout.contains("shop.example: added"))
        #expect(push.stdout.contains("links.example: added"))
        let connection = try PostgresConnection(uri: uri)
        defer { connection.close() }
        let names = try connection.execute("SELECT name FROM domains ORDER BY name")
        #expect((0..<names.rowCount).compactMap { names.text($0, 0) } == ["links.example", "shop.example"])
    }

    /// A push of thousands of domains goes in batches (several transactions), yet every domain is checked and
    /// written as alone: the invalid one among them is refused and named, every other is stored with its own change
    /// and history entry, a second push writes nothing, a change to a few writes only those, and pruning removes
    /// hundreds with an entry each.
    @Test func aBulkPushRefusesOnlyTheInvalidDomainAndWritesEachOtherOnce() throws {
        let uri = try StoreCluster.database("bulk")
        let directory = TemporaryDirectory("aasa-store-bulk")
        let count = StorePush.domainsPerBatch * 2 + 500
        func site(_ index: Int, version: Int = 0) -> String {
            #"{"webCredentials": ["ABCDE12345.com.example.d\#(index).v\#(version)"]}"#
        }
        for index in 0..<count { try directory.write("site-config/d\(index).example/site.json", site(index)) }
        try directory.write("site-config/d1200.example/pages/index.html", "<p>one</p>")
        try directory.write("site-config/d1200.example/pages/about.html", "<p>about</p>")
        try directory.write("site-config/d1500.example/site.json", #"{ "webCredentials": [ }"#)
        let arguments = ["store", "push", "--config", "site-config", "--store", uri]
        let first = try aasa(arguments, in: directory.path)
        #expect(first.status == 2, "\(first.stderr)")
        #expect(first.stderr.contains("d1500.example: refused"), "\(first.stderr)")
        #expect(first.stderr.contains("d1500.example/site.json:1:"), "\(first.stderr)")
        #expect(first.stdout.components(separatedBy: ": added").count - 1 == count - 1)
        let connection = try PostgresConnection(uri: uri)
        defer { connection.close() }
        func number(_ sql: String) throws -> Int { Int(try connection.execute(sql).text(0, 0) ?? "") ?? -1 }
        #expect(try number("SELECT count(*) FROM domains") == count - 1)
        #expect(try number("SELECT count(*) FROM domains WHERE name = 'd1500.example'") == 0)
        #expect(try number("SELECT count(DISTINCT name) FROM changes WHERE kind = 'domain'") == count - 1)
        #expect(try number("SELECT count(*) FROM changes") == count - 1)
        #expect(
            try number("SELECT count(*) FROM domains d JOIN changes c ON c.id = d.change_id AND c.name = d.name")
                == count - 1)
        #expect(try number("SELECT count(*) FROM domain_revisions WHERE actor = 'store push'") == count - 1)
        #expect(try number("SELECT count(*) FROM domain_files WHERE domain = 'd1200.example'") == 2)
        let stored = try #require(try Store(uri: uri, migrating: false).domain("d7.example"))
        #expect(stored.siteJSON == Array(site(7).utf8))

        // The same folders again: every domain compared, nothing written.
        let changes = try changeCount(uri)
        let second = try aasa(arguments, in: directory.path)
        #expect(second.status == 2, "\(second.stderr)")
        #expect(!second.stdout.contains(".example: "), "\(second.stdout)")
        #expect(try changeCount(uri) == changes)

        // A few domains in different batches: only they are written, each summarised.
        try directory.write("site-config/d3.example/site.json", site(3, version: 1))
        try directory.write("site-config/d2400.example/site.json", site(2400, version: 1))
        try directory.write("site-config/d1200.example/pages/index.html", "<p>two</p>")
        try directory.write("site-config/d1500.example/site.json", site(1500))
        let third = try aasa(arguments, in: directory.path)
        #expect(third.status == 0, "\(third.stderr)")
        let lines = third.stdout.split(separator: "\n").filter { $0.contains(".example: ") }
        #expect(lines.count == 4, "\(third.stdout)")
        #expect(third.stdout.contains("d1200.example: site.json unchanged; pages: 1 changed, 0 added, 0 removed"))
        #expect(third.stdout.contains("d1500.example: added"))
        #expect(third.stdout.contains("d3.example: "))
        #expect(third.stdout.contains("d2400.example: "))
        #expect(try changeCount(uri) == changes + 4)

        // Hundreds removed at once, each with its removal in the history.
        for index in 100..<700 {
            try FileManager.default.removeItem(atPath: directory.path + "/site-config/d\(index).example")
        }
        let pruned = try aasa(arguments + ["--prune"], in: directory.path)
        #expect(pruned.status == 0, "\(pruned.stderr)")
        #expect(pruned.stdout.components(separatedBy: ": removed").count - 1 == 600)
        #expect(try number("SELECT count(*) FROM domains") == count - 600)
        #expect(try number("SELECT count(*) FROM domain_revisions WHERE site_json IS NULL") == 600)
        #expect(try changeCount(uri) == changes + 4 + 600)
    }

    @Test func aDomainSigningWithFilesOfItsFolderIsRefused() throws {
        let uri = try StoreCluster.database("namedsigning")
        let directory = try workspace("aasa-store-named-signing")
        // A valid signing identity of the domain's own folder, which `check` accepts and a store cannot hold.
        try FileManager.default.createDirectory(
            atPath: directory.path + "/site-config/links.example/signing", withIntermediateDirectories: true)
        try directory.copy(
            directory.path + "/certs/links.example/fullchain.pem", to: "site-config/links.example/signing/cert.pem")
        try directory.copy(
            directory.path + "/certs/links.example/privkey.pem", to: "site-config/links.example/signing/key.pem")
        let file = directory.path + "/site-config/links.example/site.json"
        try String(contentsOfFile: file, encoding: .utf8).replacingOccurrences(
            of: #""legacyFormat": false,"#,
            with: #""legacyFormat": false, "signing": {"certificate": "signing/cert.pem", "key": "signing/key.pem"},"#
        ).write(toFile: file, atomically: true, encoding: .utf8)
        let check = try aasa(["check", "--no-certificates"], in: directory.path)
        #expect(!check.stdout.contains("[signing-identity]") && !check.stderr.contains("[signing-identity]"))
        let push = try aasa(["store", "push", "--config", "site-config", "--store", uri], in: directory.path)
        #expect(push.status == 2, "\(push.stdout)\(push.stderr)")
        #expect(push.stderr.contains("[signing-identity]"), "\(push.stderr)")
        #expect(push.stderr.contains("a store does not hold"), "\(push.stderr)")
        #expect(push.stdout.contains("shop.example: added"))
    }

    @Test func certificatesWithoutAKeyFileAreAUsageErrorNamingBothFlags() throws {
        let directory = try workspace("aasa-store-usage")
        let push = try aasa(
            ["store", "push", "--certs", "certs", "--store", "postgresql://nobody@127.0.0.1:1/none"],
            in: directory.path)
        #expect(push.status == 64, "\(push.stderr)")
        #expect(push.stderr.contains("--certs needs --store-key-file"), "\(push.stderr)")
    }

    @Test func aStoreErrorNamesTheServerAndNeverThePassword() throws {
        let directory = TemporaryDirectory("aasa-store-down")
        let refused = try aasa(
            ["store", "init", "--store", "postgresql://aasa:s3cret-word@127.0.0.1:\(freePort())/fleet"],
            in: directory.path)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("127.0.0.1:"), "\(refused.stderr)")
        #expect(refused.stderr.contains("/fleet"), "\(refused.stderr)")
        #expect(!refused.stderr.contains("s3cret-word"), "\(refused.stderr)")
    }

    @Test func aStoreNewerThanTheServerIsRefused() throws {
        let uri = try StoreCluster.database("newer")
        let directory = TemporaryDirectory("aasa-store-newer")
        #expect(try aasa(["store", "init", "--store", uri], in: directory.path).status == 0)
        let connection = try PostgresConnection(uri: uri)
        defer { connection.close() }
        try connection.execute("UPDATE schema_version SET version = 99")
        let refused = try aasa(["store", "init", "--store", uri], in: directory.path)
        #expect(refused.status == 1)
        #expect(
            refused.stderr.contains("schema version 99, newer than this server's \(StoreSchema.currentVersion)"),
            "\(refused.stderr)")
    }

    @Test func concurrentInitsBothSucceed() throws {
        let uri = try StoreCluster.database("concurrent")
        let directory = TemporaryDirectory("aasa-store-concurrent")
        let statuses = Mutex<[Int32]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            let status = (try? aasa(["store", "init", "--store", uri], in: directory.path))?.status ?? -1
            statuses.withLock { $0.append(status) }
        }
        #expect(statuses.withLock { $0 } == [0, 0, 0, 0])
    }

    @Test func aPushIsAnnouncedOnTheChangesChannel() throws {
        let uri = try StoreCluster.database("notify")
        let directory = try workspace("aasa-store-notify")
        let initialised = try aasa(["store", "init", "--store", uri], in: directory.path)
        #expect(initialised.status == 0)
        let listener = try PostgresConnection(uri: uri)
        defer { listener.close() }
        try listener.listen("aasa_changes")
        let push = try aasa(["store", "push", "--config", "site-config", "--store", uri], in: directory.path)
        #expect(push.status == 0, "\(push.stderr)")
        var payloads: [String] = []
        while let notification = try listener.waitForNotification(timeout: .seconds(5)) {
            payloads.append(notification.payload)
        }
        let ids = try listener.execute("SELECT id FROM changes ORDER BY id")
        #expect(payloads == (0..<ids.rowCount).compactMap { ids.text($0, 0) })
        #expect(payloads.count == 2)
    }

    /// A landing template the domain names outside `pages/` is part of what the domain serves: pushed, and pulled
    /// back byte for byte.
    @Test func aLandingTemplateOutsidePagesIsPushedAndPulled() throws {
        let uri = try StoreCluster.database("template")
        let directory = try workspace("aasa-store-template")
        let site = directory.path + "/site-config/shop.example/site.json"
        var json = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: site))) as? [String: Any])
        var pages = json["pages"] as? [String: Any] ?? [:]
        pages["landingPage"] = ["template": "templates/landing.html"]
        json["pages"] = pages
        try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: site))
        let template = "<!doctype html><title>TEMPLATE-OUTSIDE</title><body>{{title}}</body>"
        _ = try directory.write("site-config/shop.example/templates/landing.html", template)
        let push = try aasa(["store", "push", "--config", "site-config", "--store", uri], in: directory.path)
        #expect(push.status == 0, "\(push.stdout)\(push.stderr)")
        let pull = try aasa(["store", "pull", "--store", uri, "--config", "pulled"], in: directory.path)
        #expect(pull.status == 0, "\(pull.stdout)\(pull.stderr)")
        let pulled = try String(
            contentsOfFile: directory.path + "/pulled/shop.example/templates/landing.html", encoding: .utf8)
        #expect(pulled == template)
    }

    /// A row the database holds over what a domain folder may hold is refused from the sizes the database reports,
    /// naming the domain, before its bytes are read.
    @Test func aStoredRowOverTheCapsIsRefusedBeforeItIsRead() throws {
        let uri = try StoreCluster.database("oversized")
        let directory = try workspace("aasa-store-oversized")
        let push = try aasa(["store", "push", "--config", "site-config", "--store", uri], in: directory.path)
        #expect(push.status == 0, "\(push.stdout)\(push.stderr)")
        let connection = try PostgresConnection(uri: uri)
        defer { connection.close() }
        try connection.execute(
            "UPDATE domains SET site_json = $1 WHERE name = 'shop.example'",
            [.bytes(Array(repeating: UInt8(ascii: " "), count: (1 << 20) + 1))])
        let pull = try aasa(["store", "pull", "--store", uri, "--config", "pulled"], in: directory.path)
        #expect(pull.status == 1)
        #expect(pull.stderr.contains("domain shop.example"), "\(pull.stderr)")
        #expect(pull.stderr.contains("1048577 bytes of site.json"), "\(pull.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/pulled/shop.example/site.json"))
    }
}
