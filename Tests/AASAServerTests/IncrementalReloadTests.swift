import AASACore
import AASAMicroHTTPD
import AASATestSupport
import Foundation
import Logging
import Synchronization
import Testing

@testable import AASAServer

/// A reload reads and republishes what changed: the watcher names the folders, the load reads only those, and
/// every other domain keeps its routes and its SNI entry.
@Suite(.serialized) struct IncrementalReloadTests {
    static func config(_ version: Int) -> String {
        #"{"webCredentials": ["ABCDE12345.com.example.v\#(version)"]}"#
    }

    /// 60 domains besides the sample's, watched.
    static func server() throws -> LiveServer {
        let extra = Dictionary(uniqueKeysWithValues: (0..<60).map { ("d\($0).example", config(0)) })
        return try LiveServer(extraDomains: extra)
    }

    /// Waits until `check` holds, for up to ten seconds.
    static func eventually(_ what: String, _ check: () throws -> Bool) throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if try check() { return }
            usleep(20_000)
        }
        Issue.record("never: \(what)")
    }

    /// The newest entry of `/status`' reload history.
    static func lastReload(_ live: LiveServer) throws -> [String: Any] {
        try #require((try live.status()["reloads"] as? [[String: Any]])?.first)
    }

    @Test func anEditRebuildsOnlyItsDomainAndKeepsTheOthersAndTheSNITable() throws {
        let live = try Self.server()
        let table = try #require(live.server.certificateTable)
        let before = try live.fetch("d1.example")
        try Data(Self.config(1).utf8).write(to: URL(fileURLWithPath: live.configDirectory + "/d7.example/site.json"))
        let expected = try LiveReloadTests.generated("d7.example", Self.config(1))
        try Self.eventually("the edit is served") { try live.fetch("d7.example") == .ok(expected) }
        // The reload is recorded just after it is published.
        try Self.eventually("the reload is recorded") {
            try Self.lastReload(live)["trigger"] as? String == "file-change"
        }
        let reload = try Self.lastReload(live)
        #expect(reload["changed"] as? [String] == ["d7.example"])
        // The routes of this version prepared only d7's responses; the others kept theirs.
        let routes = try #require(live.server.siteRoutes)
        let id = live.server.recorder.domainIDs.existingID(for: "d7.example")
        #expect(!routes.preparedResponses.isEmpty && routes.preparedResponses.allSatisfy { $0.domainID == id })
        #expect(live.server.certificateTable === table, "no certificate changed: the same SNI table")
        #expect(try live.fetch("d1.example") == before)
        // The status of the others is as it was, and the edited domain's says what changed once compared.
        try Self.eventually("the change is compared") {
            try LiveReloadTests.domainStatus(live, "d7.example")?["lastChange"] != nil
        }
        #expect((try live.status()["domains"] as? [String: Any])?.count == 62)
    }

    @Test func addingAndRemovingAFolderTouchesOnlyThatDomain() throws {
        let live = try LiveServer(
            extraDomains: Dictionary(uniqueKeysWithValues: (0..<20).map { ("d\($0).example", Self.config(0)) }),
            configure: { $0.removalGrace = .zero })
        _ = try live.directory.write("site-config/added.example/site.json", Self.config(3))
        try Self.eventually("the new domain is served") { try live.fetch("added.example").status == 200 }
        try Self.eventually("the reload for added.example is recorded") {
            try Self.lastReload(live)["changed"] as? [String] == ["added.example"]
        }
        try FileManager.default.removeItem(atPath: live.configDirectory + "/d3.example")
        try Self.eventually("the removed domain is gone") { try live.fetch("d3.example") == .unknownHost }
        try Self.eventually("the reload for d3.example is recorded") {
            try Self.lastReload(live)["changed"] as? [String] == ["d3.example"]
        }
        #expect(try live.fetch("d4.example").status == 200)
        #expect(live.server.publishedDomains.count == 22)
        // A stray file beside the domain folders is no domain: reloaded for, and nothing changes.
        let reloads = try #require(try live.status()["reloads"] as? [[String: Any]]).count
        let entries = live.server.certificateTable?.count
        _ = try live.directory.write("site-config/README.md", "notes")
        try Self.eventually("a reload for the stray file") {
            (try live.status()["reloads"] as? [[String: Any]])?.count ?? 0 > reloads
        }
        #expect(try Self.lastReload(live)["changed"] as? [String] == [])
        #expect(try Self.lastReload(live)["result"] as? String == "ok")
        #expect(live.server.certificateTable?.count == entries)
        #expect((try live.status()["domains"] as? [String: Any])?["README.md"] == nil)
    }

    /// A renewed certificate replaces its own SNI entry: the new table keeps every other certificate's credential,
    /// and new connections for the renewed domain get the new leaf.
    @Test func aRenewedCertificateReplacesOnlyItsOwnEntry() throws {
        let live = try Self.server()
        let table = try #require(live.server.certificateTable)
        let other = try #require(table.credential(id: "d1.example"))
        let old = try #require(table.credential(id: "d2.example"))
        _ = try DevCertificates(certificateDirectory: live.certsDirectory).ensure(names: ["d2.example"], replace: true)
        try Self.eventually("a new SNI table") { live.server.certificateTable !== table }
        let renewed = try #require(live.server.certificateTable)
        #expect(renewed.credential(id: "d1.example") === other)
        #expect(renewed.credential(id: "d2.example") !== old)
        #expect(renewed.count == table.count)
        let served = try Command.run(
            "openssl", ["s_client", "-connect", "127.0.0.1:\(live.https)", "-servername", "d2.example"],
            input: Array("Q\n".utf8), timeout: 15
        ).stdout
        let file = try String(contentsOfFile: live.certsDirectory + "/d2.example/fullchain.pem", encoding: .utf8)
        let leaf = String(file[..<file.range(of: "-----END CERTIFICATE-----")!.upperBound])
        #expect(served.contains(leaf.split(separator: "\n").dropFirst().first.map(String.init) ?? "?"))
        #expect(try live.fetch("d2.example").status == 200)
    }

    /// The watcher names what changed: the domain folder an edit was made in, a new folder, or everything when
    /// a root's hidden entry (a Kubernetes `..data` swap behind a root mounted whole) changes.
    @Test func theWatcherNamesTheFoldersThatChanged() throws {
        let scratch = TemporaryDirectory("aasa-watch-scope")
        for name in ["config/a.example", "config/b.example", "certs/a.example"] {
            try FileManager.default.createDirectory(
                atPath: scratch.path + "/" + name, withIntermediateDirectories: true)
        }
        _ = try scratch.write("config/a.example/site.json", "{}")
        let seen = Mutex<[FolderChanges]>([])
        let watcher = try ConfigWatcher(
            roots: [scratch.path + "/config", scratch.path + "/certs"], quietPeriod: .milliseconds(50),
            maximumDelay: .milliseconds(200), logger: Logger(label: "test")
        ) { changes in seen.withLock { $0.append(changes) } }
        watcher.start()
        defer { watcher.stop() }
        func next(_ change: () throws -> Void) throws -> FolderChanges {
            seen.withLock { $0 = [] }
            try change()
            var found: FolderChanges?
            try Self.eventually("a change is reported") {
                found = seen.withLock { $0.first }
                return found != nil
            }
            usleep(300_000)  // nothing else follows
            #expect(seen.withLock { $0.count } == 1)
            return try #require(found)
        }
        var edit = try next { _ = try scratch.write("config/a.example/site.json", "{ }") }
        #expect(
            !edit.everything && edit.entries(below: .config) == ["a.example"]
                && edit.entries(below: .certificates).isEmpty)
        edit = try next { _ = try scratch.write("config/c.example/site.json", "{}") }
        #expect(!edit.everything && edit.entries(below: .config) == ["c.example"])
        // The new folder is watched from then on.
        edit = try next { _ = try scratch.write("config/c.example/site.json", "{ }") }
        #expect(!edit.everything && edit.entries(below: .config) == ["c.example"])
        edit = try next { _ = try scratch.write("certs/a.example/fullchain.pem", "x") }
        #expect(
            !edit.everything && edit.entries(below: .certificates) == ["a.example"]
                && edit.entries(below: .config).isEmpty)
        edit = try next { _ = try scratch.write("config/..data", "x") }
        #expect(edit.everything)
    }

    /// A start's watcher watches the roots first, each folder when the load is about to read it, and then the folders
    /// the load did not read: an edit is seen in a folder from the moment it was handed to the load, never before.
    @Test func aStartsWatcherWatchesEachFolderAsTheLoadReadsIt() throws {
        let scratch = TemporaryDirectory("aasa-watch-load")
        for name in ["config/a.example", "config/b.example", "certs/a.example"] {
            try FileManager.default.createDirectory(
                atPath: scratch.path + "/" + name, withIntermediateDirectories: true)
        }
        let seen = Mutex<[FolderChanges]>([])
        let watcher = try ConfigWatcher(
            roots: [scratch.path + "/config", scratch.path + "/certs"], quietPeriod: .milliseconds(50),
            maximumDelay: .milliseconds(200), logger: Logger(label: "test"), entriesWatchedByLoad: true
        ) { changes in seen.withLock { $0.append(changes) } }
        watcher.start()
        defer { watcher.stop() }
        func changes(_ change: () throws -> Void) throws -> [FolderChanges] {
            seen.withLock { $0 = [] }
            try change()
            usleep(500_000)
            return seen.withLock { $0 }
        }
        // Not handed to a load yet: only the roots are watched, so a file written inside a folder is not seen.
        #expect(try changes { _ = try scratch.write("config/a.example/site.json", "{}") }.isEmpty)
        // A new entry of a root is.
        var seenNow = try changes { _ = try scratch.write("config/c.example/site.json", "{}") }
        #expect(seenNow.count == 1 && seenNow.first?.entries(below: .config) == ["c.example"])
        // Watching a folder lists it (from the root the load holds open), for the load to read instead of listing
        // it again; a file is no folder.
        let configRoot = OpenFolder(scratch.path + "/config")
        #expect(configRoot != nil)
        let listed = watcher.watchEntry("a.example", ofRoot: .config, from: configRoot)
        #expect(listed?.map(\.name) == ["site.json"] && listed?.first?.kind == .other)
        #expect(try changes { _ = try scratch.write("config/stray.txt", "") }.count == 1)
        #expect(watcher.watchEntry("stray.txt", ofRoot: .config, from: configRoot) == nil)
        #expect(watcher.watchEntry("gone.example", ofRoot: .config) == nil)
        seenNow = try changes { _ = try scratch.write("config/a.example/site.json", "{ }") }
        #expect(seenNow.count == 1 && seenNow.first?.entries(below: .config) == ["a.example"])
        #expect(try changes { _ = try scratch.write("certs/a.example/fullchain.pem", "x") }.isEmpty)
        watcher.watchRemainingEntries()
        seenNow = try changes { _ = try scratch.write("certs/a.example/fullchain.pem", "y") }
        #expect(seenNow.count == 1 && seenNow.first?.entries(below: .certificates) == ["a.example"])
        seenNow = try changes { _ = try scratch.write("config/b.example/site.json", "{}") }
        #expect(seenNow.count == 1 && seenNow.first?.entries(below: .config) == ["b.example"])
    }
}
