import Logging

/// Where the server keeps what it serves, and the one choice between the folders (the default) and the store
/// (`serve --store`): domains and their files, certificates and their keys, each domain's history, and ACME's
/// account, records, locks and pacing.
///
/// Everything above it takes what it gives, never a backend: every load reads its ``source``, the tenant API its
/// ``makeRepository()``, ACME its ``acme(logger:)``. A backend is one conformer, in a folder of its own below `Storage/`
/// (``FolderStorage`` in `Storage/Folder/`, ``StoreStorage`` in `Storage/Store/`), with its three parts beside it.
protocol Storage: Sendable {
    /// What every load reads: each domain with its files (through a ``FileTree``), each certificate with its key.
    var source: any ConfigSource { get }
    /// What the start's load reads: ``source``, its folders watched by `watcher` as the load reads each one when the
    /// backend has folders to watch.
    func sourceOfFirstLoad(watchedBy watcher: ConfigWatcher?) -> any ConfigSource
    /// What the tenant API reads and writes: site.json files, pages, and each domain's history. A new one each call
    /// (the store's has a pool of connections of its own): the server makes one.
    func makeRepository() -> any DomainRepository
    /// Where ACME keeps its account, each certificate's record and key, its locks and its pacing.
    ///
    /// - Throws: a configuration error when this backend cannot keep it as configured.
    func acme(logger: Logger) throws(Server.StartupError) -> any ACMEStorage
}
