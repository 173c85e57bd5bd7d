import AASAPostgres
import AASATestSupport
import Foundation
import Testing

/// `aasa-server shards nginx --store URI`: the router's map made from the domains of a real PostgreSQL store, as an
/// operator whose shards serve `serve --store` makes it.
@Suite(.storeCluster, .serialized) struct ShardsNginxStoreTests {
    /// The arguments every run shares: three shards of two replicas.
    static let router = ["shards", "nginx", "--count", "3", "--replicas", "2", "--upstream", "s{index}-{replica}:1"]

    func aasa(_ arguments: [String], in directory: String, environment: [String: String]? = nil) throws
        -> Command.Output
    {
        try Command.run(
            RepositoryPaths.executable, arguments, currentDirectory: directory, environment: environment, timeout: 120)
    }

    /// The file without its first line, which quotes the command.
    static func body(_ text: String) -> Substring { text.drop { $0 != "\n" } }

    @Test func theStoresDomainsMakeTheSameMapAsTheirFolders() throws {
        let uri = try StoreCluster.database("shardsrouter")
        let directory = TemporaryDirectory("aasa-shards-store")
        try directory.copy(RepositoryPaths.siteConfig, to: "site-config")
        let push = try aasa(["store", "push", "--config", "site-config", "--store", uri], in: directory.path)
        #expect(push.status == 0, "\(push.stdout)\(push.stderr)")

        let fromFolders = try aasa(Self.router + ["--config", "site-config"], in: directory.path)
        #expect(fromFolders.status == 0, "\(fromFolders.stderr)")
        #expect(fromFolders.stdout.contains("        shop.example aasa_shard_"))
        // Read from a folder with no site-config/: the names can only come from the store.
        let elsewhere = directory.path + "/elsewhere"
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        let fromStore = try aasa(Self.router + ["--store", uri], in: elsewhere)
        #expect(fromStore.status == 0, "\(fromStore.stderr)")
        #expect(fromStore.stderr.isEmpty, "\(fromStore.stderr)")
        #expect(Self.body(fromStore.stdout) == Self.body(fromFolders.stdout))

        // The variable names the store when no --config is given; an explicit --config wins over it.
        let environment = ["AASA_SERVER_STORE": uri, "PATH": ProcessInfo.processInfo.environment["PATH"] ?? ""]
        let fromVariable = try aasa(Self.router, in: elsewhere, environment: environment)
        #expect(fromVariable.status == 0, "\(fromVariable.stderr)")
        #expect(Self.body(fromVariable.stdout) == Self.body(fromFolders.stdout))
        let flagWins = try aasa(Self.router + ["--config", "."], in: elsewhere, environment: environment)
        #expect(flagWins.status == 0, "\(flagWins.stderr)")
        #expect(!flagWins.stdout.contains("shop.example"))

        // A name written into the store by other means than store push is checked as a folder name is: one that
        // is not a host name is left out and named, never written into the file.
        let hostile = "evil.example; } server { listen 80; }"
        let connection = try PostgresConnection(uri: uri)
        defer { connection.close() }
        _ = try connection.execute(
            """
            WITH change AS (INSERT INTO changes (kind, name) VALUES ('domain', $1) RETURNING id)
            INSERT INTO domains (name, site_json, change_id, shard_hash) SELECT $1, '\\x7b7d'::bytea, id, 0 FROM change
            """, [.text(hostile)])
        let skipping = try aasa(Self.router + ["--store", uri], in: elsewhere)
        #expect(skipping.status == 0, "\(skipping.stderr)")
        #expect(Self.body(skipping.stdout) == Self.body(fromFolders.stdout))
        #expect(skipping.stderr.contains("warning: [domain-name] stored domain '\(hostile)'"), "\(skipping.stderr)")
        #expect(skipping.stderr.contains("left out of the map"), "\(skipping.stderr)")
    }

    /// A store that cannot be read prints nothing on stdout and exits 1, naming the server and database (never the
    /// password) and what to do.
    @Test func aStoreThatCannotBeReadIsExitOneNamingTheServer() throws {
        let directory = TemporaryDirectory("aasa-shards-store-error")
        let closed = freePort()
        let unreachable = try aasa(
            Self.router + ["--store", "postgresql://aasa:s3cret-pass@127.0.0.1:\(closed)/fleet"], in: directory.path)
        #expect(unreachable.status == 1, "\(unreachable.stderr)")
        #expect(unreachable.stdout.isEmpty)
        #expect(unreachable.stderr.contains("127.0.0.1:\(closed)/fleet"), "\(unreachable.stderr)")
        #expect(!unreachable.stderr.contains("s3cret-pass"), "\(unreachable.stderr)")

        // A database the schema was never made in: reading it writes nothing and says to run store init.
        let uri = try StoreCluster.database("shardsempty")
        let uninitialised = try aasa(Self.router + ["--store", uri], in: directory.path)
        #expect(uninitialised.status == 1, "\(uninitialised.stderr)")
        #expect(uninitialised.stdout.isEmpty)
        #expect(uninitialised.stderr.contains("/shardsempty"), "\(uninitialised.stderr)")
        #expect(uninitialised.stderr.contains("store init"), "\(uninitialised.stderr)")
    }
}
