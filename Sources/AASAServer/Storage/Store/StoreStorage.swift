import AASACore
import Logging

/// The store (PostgreSQL, `serve --store`) as the server's storage: the rows a replica reads in memory
/// (``StoreReplica``), the tenant API's reads and writes on connections of its own, and ACME's state sealed with the
/// store key.
struct StoreStorage: Storage {
    let configuration: ServerConfiguration
    /// The replica whose source every load reads.
    let replica: StoreReplica
    /// The stored files the replica read, which the API's checks share.
    let files: StoredFiles

    /// The store's settings (`--store`, `--store-key-file`, `--replica`).
    var settings: StoreSettings { replica.settings }

    var source: any ConfigSource { replica.source }

    /// The store has no folders to watch: its follower hears of every change.
    func sourceOfFirstLoad(watchedBy watcher: ConfigWatcher?) -> any ConfigSource {
        replica.source
    }

    func makeRepository() -> any DomainRepository {
        StoreDomainRepository(
            uri: settings.uri, policy: configuration.history, connections: configuration.apiWorkers,
            timeout: configuration.apiStoreTimeout, files: files)
    }

    /// ACME's state in the store, its keys sealed with the store key.
    func acme(logger: Logger) throws(Server.StartupError) -> any ACMEStorage {
        guard let key = settings.key else { throw Self.acmeWithoutKey }
        return StoreACMEStorage(uri: settings.uri, key: key, replica: settings.replica, logger: logger)
    }

    /// Why `--acme` with `--store` needs the store key: checked before the replica waits for its store.
    static let acmeWithoutKey = Server.StartupError(
        diagnostics: [
            Diagnostic(
                .error, rule: .acmeSetup,
                "--acme with --store keeps the ACME account and every certificate's key in the store, sealed with the store key, which was not given",
                hint: "pass --store-key-file (the same key file on every replica)")
        ], isConfigurationError: true)
}
