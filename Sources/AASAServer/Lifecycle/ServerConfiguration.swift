public import AASACore
public import AASAMicroHTTPD

/// How the listeners wait for socket events (poll or epoll); see `AASAMicroHTTPD.EventLoop`.
public typealias ListenerEventLoop = AASAMicroHTTPD.EventLoop

/// Everything `serve` needs to know; the CLI fills it from flags and the environment.
public struct ServerConfiguration: Sendable {
    /// The folder holding `<domain>/site.json`.
    public var configDirectory: String = "site-config"
    /// The folder holding `<name>/fullchain.pem` and `privkey.pem`.
    public var certificateDirectory: String = "certs"
    /// HTTPS port (0 picks a free one); `nil` disables HTTPS.
    public var httpsPort: UInt16? = 8443
    /// Plain HTTP port, for operators behind a TLS-terminating proxy; `nil` (default) disables it.
    public var httpPort: UInt16?
    /// Address the public listeners bind to; `nil` means every interface.
    public var bindAddress: String?
    /// Admin listener port; `nil` disables it.
    public var adminPort: UInt16? = 9090
    /// Address the admin listener binds to: loopback unless told otherwise.
    public var adminAddress: String = "127.0.0.1"
    /// Which requests the admin listener answers: Host names besides localhost and IP literals, and the bearer
    /// token its revealing routes need (``AdminAccess``).
    public var adminAccess = AdminAccess()
    /// Worker threads per listener; `nil` means one per processor.
    public var threadPoolSize: Int?
    /// Threads of the admin listener that answer the tenant API, `/status` and `/match`, apart from the threads that
    /// answer the probes (`AASAMicroHTTPD.ListenerConfiguration.deferredWorkers`).
    public var apiWorkers: Int = 4
    /// Calls that may wait for one of the ``apiWorkers``; beyond, 503 with `Retry-After` at once.
    public var apiQueue: Int = 16
    /// The most bytes of one-off answers (the API's, `/status`) the admin listener's connections hold at once, each
    /// shared buffer counted once; past it, 503 with `Retry-After` (`AASAMicroHTTPD.ListenerConfiguration`'s
    /// `bytesInFlight`).
    public var apiBytesInFlight: Int = 256 << 20
    /// The longest one store statement of the tenant API may run, or wait for a lock.
    public var apiStoreTimeout: Duration = StoreDomainRepository.defaultTimeout
    /// Most simultaneous client connections per listener; more are accepted and closed at once.
    public var maxConnections: Int = 10_000
    /// Most simultaneous connections from one client address per listener; on the plain HTTP listener, also
    /// the most requests in progress at once from one client a trusted proxy names (``trustedProxies``).
    public var maxConnectionsPerIP: Int = 256
    /// Most simultaneous connections from one address on the plain HTTP listener (0: no limit), where a proxy
    /// is one address for all its clients; `nil`: ``maxConnectionsPerIP``.
    public var httpMaxConnectionsPerIP: Int?
    /// Proxies trusted to name the client in `X-Forwarded-For` or `Forwarded` on the plain HTTP listener: for
    /// requests from these addresses, the named client is what the access log, the fetch log and the
    /// per-client limit see. Empty: those headers are ignored.
    public var trustedProxies: [IPNetwork] = []
    /// How long each TLS 1.3 session ticket key is used and each ticket valid; `nil` turns resumption off
    /// (`AASAMicroHTTPD.TLSConfiguration.sessionTicketLifetime`).
    public var sessionTicketLifetime: Duration? = .seconds(3600)
    /// Seconds a connection may stay silent before it is closed.
    public var idleTimeoutSeconds: Int = 15
    /// The deadline for a complete request head (TLS handshake included), however actively the client
    /// trickles bytes: the defence against slowloris. `.zero` disables it.
    public var headerTimeout: Duration = .seconds(10)
    /// Bytes a request line plus headers may take: 414 or 431 beyond (`Cookie` headers count twice).
    public var maxRequestHeadBytes: Int = 16 * 1024
    /// Whether a certificate whose `privkey.pem` other users can read is refused (`serve --strict`): the folder
    /// then keeps its last good certificate, as when its files fail to load. Otherwise such a key only gets a warning.
    public var refusesExposedPrivateKeys = false
    /// Whether an error in any domain refuses the start (`serve --strict`, for CI and staging). Otherwise every
    /// domain that loads is served, the others are reported, and the start fails only when no domain at all can be
    /// served. A certificate folder that fails never stops the start while another certificate is usable.
    public var refusesToStartWithErrors = false
    /// How long a domain whose folder disappeared keeps being served before it is unpublished, so a `git checkout`,
    /// an `rsync --delete` or an editor that replaces folders never publishes a transient 404 (which Apple's CDN
    /// would cache). `.zero` unpublishes at the next reload.
    public var removalGrace: Duration = .seconds(30)
    /// The bytes of pages all domains of one load may read together (``PagesBudget``).
    public var pagesMemory: Int = 1 << 30
    /// How many certificates the HTTPS listener keeps imported for handshakes (``CredentialCache``); the others are
    /// imported when a client first asks for one of their names.
    public var certificateCache = ServerConfiguration.defaultCertificateCache
    /// ``certificateCache`` unless set: Caddy's default, and about 33 MB of GnuTLS's state.
    public static let defaultCertificateCache = 10_000
    /// Where the leaves and keys of the certificates served wait, sealed, for a handshake to import them
    /// (``CredentialVault``).
    public var credentialVault = CredentialVaultPlace.temporary
    /// How many native responses the public listeners keep built (``ResponseCache``): each domain's association
    /// file, assetlinks.json and pages are built for libmicrohttpd when first asked for, the least recently asked for
    /// let go first.
    public var responseCache = ServerConfiguration.defaultResponseCache
    /// ``responseCache`` unless set: about 12 MB of libmicrohttpd's responses.
    public static let defaultResponseCache = ResponseCache.defaultCapacity
    /// How the public listeners wait for sockets; `nil`: poll for HTTPS, epoll for HTTP (see `EventLoop`).
    public var eventLoop: ListenerEventLoop?
    /// Whether to reload when the config or certificate folder changes (inotify); SIGHUP reloads either way.
    public var watchForChanges: Bool = true
    /// How long file changes must stop before a reload, so a burst of writes is read once, complete.
    public var reloadQuietPeriod: Duration = .milliseconds(250)
    /// The longest a reload waits after the first change of a burst, however long the burst lasts.
    public var reloadMaximumDelay: Duration = .seconds(1)

    /// The shard this process is (`serve --shard I/N`): it serves only the domains whose name hashes to it
    /// (``Shard``); `nil`: every domain.
    public var shard: Shard?

    /// Read domains and certificates from a PostgreSQL store (`serve --store`) instead of ``configDirectory`` and
    /// ``certificateDirectory``; `nil`: the folders.
    public var store: StoreSettings?
    /// What the tenant API's history keeps (`serve --history-*`, `--changes-retention`).
    public var history = HistoryPolicy()

    /// Obtain and renew certificates by ACME (`serve --acme`); `nil`: certificates come from the folder only.
    public var acme: ACMESettings?
    /// The folder whose `.well-known/acme-challenge/` files the public listeners answer (`--acme-webroot`), for
    /// an ACME client outside the server.
    public var acmeWebroot: String?

    /// Check Apple's CDN and Google's Digital Asset Links API in the background (`--cdn-check-interval`); `nil`:
    /// never.
    public var cdnCheck: CDNMonitor.Settings?

    /// Creates a configuration with the defaults.
    public init() {}
}
