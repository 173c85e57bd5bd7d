import AASATestSupport
import Foundation
import Testing

/// What the suites running replicas of `serve --store` share: the repository's site-config/ pushed to a new database
/// with dev certificates and a store key, and replicas, each in an empty folder of its own, reading it.
protocol StoreFleetSuite {}

extension StoreFleetSuite {
    func aasa(_ arguments: [String], in directory: String) throws -> Command.Output {
        try Command.run(RepositoryPaths.executable, arguments, currentDirectory: directory, timeout: 120)
    }

    /// The repository's site-config/ with dev certificates and a store key, pushed to a new database.
    func pushed(_ name: String) throws -> (workspace: TemporaryDirectory, uri: String) {
        let uri = try StoreCluster.database(name)
        let workspace = TemporaryDirectory("aasa-fleet-\(name)")
        try workspace.copy(RepositoryPaths.siteConfig, to: "site-config")
        #expect(try aasa(["certs", "dev"], in: workspace.path).status == 0)
        let key = try workspace.write("store.key", String(repeating: "b", count: 63) + "2\n")
        #expect(chmod(key, 0o600) == 0)
        try push(workspace, uri)
        return (workspace, uri)
    }

    func push(_ workspace: TemporaryDirectory, _ uri: String) throws {
        let push = try aasa(
            [
                "store", "push", "--config", "site-config", "--certs", "certs", "--store", uri, "--store-key-file",
                "store.key", "--prune",
            ], in: workspace.path)
        #expect(push.status == 0, "\(push.stdout)\(push.stderr)")
    }

    /// A replica in an empty folder of its own, reading `uri`.
    func replica(
        _ workspace: TemporaryDirectory, _ uri: String, _ name: String, arguments: [String] = [], log: String? = nil
    ) throws -> (ServeProcess, TemporaryDirectory) {
        let folder = TemporaryDirectory("aasa-replica-\(name)")
        let arguments =
            ["--store", uri, "--store-key-file", workspace.path + "/store.key", "--replica", name] + arguments
        let serve =
            try log.map { try ServeProcess(in: folder.path, arguments: arguments, errorLog: $0) }
            ?? ServeProcess(in: folder.path, arguments: arguments)
        return (serve, folder)
    }

    func fetch(
        _ workspace: TemporaryDirectory, _ serve: ServeProcess, _ domain: String,
        _ path: String = "/.well-known/apple-app-site-association"
    )
        throws -> CurlResponse
    {
        try Curl.request(
            "https://\(domain):\(serve.port)\(path)", caFile: workspace.path + "/certs/dev-ca/ca.pem",
            resolve: (domain, serve.port))
    }
}
