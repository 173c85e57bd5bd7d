public import AASAOpenSSL

/// How `serve --store` reaches its store (``ServerConfiguration/store``).
public struct StoreSettings: Sendable {
    /// The libpq connection URI (never logged: it may hold a password).
    public var uri: String
    /// The key that opens the stored private keys (`--store-key-file`); `nil`: none given.
    public var key: StoreKey?
    /// The snapshot folder (`--store-cache`); `nil`: none, and a start without the database waits for it.
    public var cacheFolder: String?
    /// Which replica this is (`--replica`), as `/status` and the dashboard name it.
    public var replica: String
    /// How long the start waits for the database before it serves the snapshot, per attempt.
    public var connectTimeout: Duration = .seconds(3)

    /// Settings for the store at `uri`.
    public init(uri: String, key: StoreKey?, cacheFolder: String?, replica: String) {
        self.uri = uri
        self.key = key
        self.cacheFolder = cacheFolder
        self.replica = replica
    }
}
