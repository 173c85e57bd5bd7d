import AASACore
import AASAOpenSSL
import AASAServer
import ArgumentParser
import Foundation

/// Everything `serve` passes to the server: each option (with its `AASA_SERVER_*` variable) becomes one field of a
/// ``ServerConfiguration``.
struct ServerOptions: ParsableArguments {
    @OptionGroup var configOptions: ConfigOptions
    @OptionGroup var certsOptions: CertsOptions
    @OptionGroup(title: "ACME") var acmeOptions: ACMEOptions
    @OptionGroup(title: "Tenant API") var apiOptions: APIOptions
    @OptionGroup(title: "History") var historyOptions: HistoryOptions

    @Flag(
        help: """
            Obtain and renew a certificate for every configured domain that has none of the operator's, by ACME \
            (http-01, answered on --http-port, which the CA reaches on port 80). Issued files go to \
            <certs>/<domain>/ in certbot's layout (env: \(EnvironmentVariable.acme)=1).
            """)
    var acme = false

    @Option(
        help: ArgumentHelp(
            "Also answer /.well-known/acme-challenge/ from <dir>/.well-known/acme-challenge/, where an ACME client "
                + "outside the server (certbot --webroot, lego --http.webroot, `certs acme`) writes its answers "
                + "(env: \(EnvironmentVariable.acmeWebroot)).", valueName: "dir"))
    var acmeWebroot: String?

    @Option(
        help: ArgumentHelp("HTTPS port, 0 disables HTTPS (env: \(EnvironmentVariable.httpsPort)).", valueName: "port"))
    var httpsPort: UInt16 = Environment.value(.httpsPort, 8443)

    @Option(
        help: ArgumentHelp(
            "Also serve plain HTTP on this port, behind a TLS-terminating proxy (env: \(EnvironmentVariable.httpPort)).",
            valueName: "port"))
    var httpPort: UInt16?

    @Option(
        help: ArgumentHelp(
            "Address the public listeners bind to; default all interfaces (env: \(EnvironmentVariable.bind)).",
            valueName: "address"))
    var bind: String?

    @Option(
        help: ArgumentHelp(
            "Admin listener port for /healthz, /readyz, /metrics, /status, /match, /fetches; 0 disables it "
                + "(env: \(EnvironmentVariable.adminPort)).", valueName: "port"))
    var adminPort: UInt16 = Environment.value(.adminPort, 9090)

    @Option(
        help: ArgumentHelp(
            "Address the admin listener binds to (env: \(EnvironmentVariable.adminAddress)).", valueName: "address"))
    var adminAddress = Environment.value(.adminAddress, "127.0.0.1")

    @Option(
        name: .customLong("admin-host"),
        help: ArgumentHelp(
            "A host name the admin listener answers besides localhost and IP addresses, e.g. the name Prometheus "
                + "scrapes it by; repeat for more. Requests with any other Host get 421, against DNS rebinding "
                + "(env: \(EnvironmentVariable.adminHost), comma-separated).", valueName: "name"))
    var adminHosts: [String] = Environment.list(.adminHost)

    @Option(
        help: ArgumentHelp(
            "File holding the bearer tokens that /status, /fetches, /match, /metrics and the tenant API /api/v1/ "
                + "then require (Authorization: Bearer <token>); /healthz and /readyz stay open. One token a line, "
                + "NAME SCOPE TOKEN (SCOPE read or write, the token at least 16 characters), or a single bare token "
                + "(a write token named admin). Read once at start; it must not be readable by other users "
                + "(env: \(EnvironmentVariable.adminTokenFile)).", valueName: "path"))
    var adminTokenFile: String?

    @Option(
        help: ArgumentHelp(
            "Worker threads per listener; default one per processor (env: \(EnvironmentVariable.threads)).",
            valueName: "n"))
    var threads: Int?

    @Option(
        help: ArgumentHelp(
            "Most simultaneous client connections per listener (env: \(EnvironmentVariable.maxConnections)).",
            valueName: "n"))
    var maxConnections: Int = Environment.value(.maxConnections, 10_000)

    @Option(
        help: ArgumentHelp(
            "Most simultaneous connections from one client address (env: \(EnvironmentVariable.maxConnectionsPerIp)).",
            valueName: "n"))
    var maxConnectionsPerIp: Int = Environment.value(.maxConnectionsPerIp, 256)

    @Option(
        help: ArgumentHelp(
            "Most simultaneous connections from one address on the plain HTTP listener, where a proxy in front is "
                + "one address for all its clients; 0: no limit; default: --max-connections-per-ip "
                + "(env: \(EnvironmentVariable.httpMaxConnectionsPerIp)).", valueName: "n"))
    var httpMaxConnectionsPerIp: Int?

    @Option(
        help: ArgumentHelp(
            "Comma-separated address blocks (CIDR, IPv4 or IPv6) of proxies in front of the plain HTTP listener: for "
                + "requests from them, the client is the rightmost address of X-Forwarded-For (or Forwarded: for=) "
                + "that is not itself a trusted proxy, and the access log, the fetch log and the per-client limit "
                + "(--max-connections-per-ip requests in progress at once; 429 beyond) use it; other peers' headers "
                + "are ignored (env: \(EnvironmentVariable.trustedProxies)).", valueName: "cidrs"))
    var trustedProxies: String?

    @Option(
        help: ArgumentHelp(
            "Seconds a client has to complete its request head (TLS handshake included), however slowly it "
                + "trickles bytes; 0 disables it (env: \(EnvironmentVariable.headerTimeout)).", valueName: "seconds"))
    var headerTimeout: Double = Environment.value(.headerTimeout, 10.0)

    @Option(
        help: ArgumentHelp(
            "Seconds a connection may stay silent before it is closed (env: \(EnvironmentVariable.idleTimeout)).",
            valueName: "seconds"))
    var idleTimeout: Int = Environment.value(.idleTimeout, 15)

    @Option(
        help: ArgumentHelp(
            "Bytes a request line plus headers may take; 414 or 431 beyond; Cookie headers count twice "
                + "(env: \(EnvironmentVariable.maxRequestHead)).", valueName: "bytes"))
    var maxRequestHead: Int = Environment.value(.maxRequestHead, 16 * 1024)

    @Option(
        help: ArgumentHelp(
            "How the public listeners wait for sockets: auto (poll for HTTPS, epoll for HTTP), epoll or poll "
                + "(env: \(EnvironmentVariable.eventLoop)).", valueName: "loop"))
    var eventLoop: EventLoopChoice = Environment.value(.eventLoop, EventLoopChoice.auto)

    @Flag(
        help:
            "Do not watch the config and certificate folders for changes; reload only on SIGHUP (env: \(EnvironmentVariable.noWatch)=1)."
    )
    var noWatch = false

    @Flag(
        help: """
            Refuse to start on any error in a domain (for CI and staging), and refuse a private \
            key that other users can read (mode bits for others, or for a group the server does not run with): its \
            certificate is not loaded and the folder keeps its last good one. Without it, the domains that load are \
            served and such a key only gets a warning (env: \(EnvironmentVariable.strict)=1).
            """)
    var strict = false

    @Option(
        help: ArgumentHelp(
            "Seconds each TLS 1.3 session ticket key is used (a fresh random key per period, the old one erased) "
                + "and each ticket valid, so reconnecting clients resume without a full handshake; 0 turns "
                + "resumption off (env: \(EnvironmentVariable.sessionTicketLifetime)).", valueName: "seconds"))
    var sessionTicketLifetime: Int = Environment.value(.sessionTicketLifetime, 3600)

    @Option(
        help: ArgumentHelp(
            "Serve only the domains whose name hashes to shard INDEX of COUNT (0-based), behind a router that sends "
                + "each domain to its shard's replicas: `aasa-server shards nginx` prints one "
                + "(env: \(EnvironmentVariable.shard)).", valueName: "index/count"))
    var shard: String?

    @Option(
        help: ArgumentHelp(
            "Read domains and certificates from this PostgreSQL store (a libpq connection URI) instead of --config "
                + "and --certs, and follow its changes (env: \(EnvironmentVariable.store)).", valueName: "uri"))
    var store: String?

    @Option(
        help: ArgumentHelp(
            "The store key that opens the stored private keys: 64 hex characters, readable only by the server's "
                + "user (env: \(EnvironmentVariable.storeKeyFile)).", valueName: "file"))
    var storeKeyFile: String?

    @Option(
        help: ArgumentHelp(
            "Keep a snapshot of the store in this folder, written after each applied change (keys stay sealed), and "
                + "serve it when the store is unreachable at start (env: \(EnvironmentVariable.storeCache)).",
            valueName: "dir"))
    var storeCache: String?

    @Option(
        help: ArgumentHelp(
            "Which replica this is, as /status and the dashboard name it; default the host name "
                + "(env: \(EnvironmentVariable.replica)).", valueName: "name"))
    var replica: String?

    @Option(
        help: ArgumentHelp(
            "Seconds a domain whose folder disappeared keeps being served before it is unpublished, so a git "
                + "checkout or an rsync that replaces folders never publishes a transient 404 "
                + "(env: \(EnvironmentVariable.removalGrace)).", valueName: "seconds"))
    var removalGrace: Double = Environment.value(.removalGrace, 30.0)

    @Option(
        help: ArgumentHelp(
            "Mebibytes of pages all domains may load together; a reload that would exceed it keeps the last good "
                + "pages of the domains it could not fit (env: \(EnvironmentVariable.pagesMemory)).", valueName: "MiB"))
    var pagesMemory: Int = Environment.value(.pagesMemory, 1024)

    @Option(
        help: ArgumentHelp(
            "Certificates kept imported for TLS handshakes, the least recently used let go first; the others are "
                + "held compactly and imported when a client first asks for one of their names; 0 imports at every "
                + "handshake (env: \(EnvironmentVariable.certificateCache)).", valueName: "count"))
    var certificateCache: Int = Environment.value(.certificateCache, ServerConfiguration.defaultCertificateCache)

    @Option(
        help: ArgumentHelp(
            "Responses kept built for the public listeners (each domain's association file, assetlinks.json and "
                + "pages), the least recently asked for let go first; the others are built when next asked for; 0 "
                + "builds one for every request (env: \(EnvironmentVariable.responseCache)).", valueName: "count"))
    var responseCache: Int = Environment.value(.responseCache, ServerConfiguration.defaultResponseCache)

    @Option(
        help: ArgumentHelp(
            "Folder where the leaves and keys of the certificates served wait for their first handshake, sealed "
                + "with a key held only in memory, in files that have no name; default: TMPDIR or /tmp (in memory "
                + "when no file can be made there); 'off' keeps them in memory, about 0.8 KB more a certificate "
                + "(env: \(EnvironmentVariable.credentialVault)).", valueName: "folder|off"))
    var credentialVault: String?

    @Option(
        help: ArgumentHelp(
            "How often Apple's CDN copy (and Google's, for domains serving assetlinks.json) of each served domain is "
                + "checked against what is served, e.g. 30m, 6h, 1d; 0 turns the check off; off with --dev unless given "
                + "(env: \(EnvironmentVariable.cdnCheckInterval)).", valueName: "duration"))
    var cdnCheckInterval: String?

    @Option(
        help: ArgumentHelp(
            "Apple's CDN base URL for the check (env: \(EnvironmentVariable.appleCdn)).", valueName: "url"))
    var appleCdn: String?

    @Option(
        help: ArgumentHelp(
            "Google's Digital Asset Links statements:list URL for the check (env: \(EnvironmentVariable.googleDal)).",
            valueName: "url"))
    var googleDal: String?

    @Option(
        help: ArgumentHelp(
            "PEM file of the only CAs the check trusts; default the system's (env: \(EnvironmentVariable.cdnCacert)).",
            valueName: "file"))
    var cdnCacert: String?

    /// `--cdn-check-interval` as a duration (`nil`: off), once validated.
    var cdnInterval: Duration? {
        guard let text = cdnCheckInterval, let seconds = Self.seconds(text), seconds > 0 else { return nil }
        return .milliseconds(Int64(seconds * 1000))
    }

    /// Seconds in `30s`, `10m`, `6h`, `1d` or a bare number of seconds; `nil` when it is none of those.
    static func seconds(_ text: String) -> Double? {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        if let unit = text.last, let factor = units[unit], let value = Double(text.dropLast()) { return value * factor }
        return Double(text)
    }

    private var trustedProxyBlocks: [String] {
        (trustedProxies ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
    }

    mutating func validate() throws {
        try Environment.naming { try checkValues() }
    }

    private mutating func checkValues() throws {
        // Options without a flag fall back to their AASA_SERVER_* variable.
        if httpPort == nil { httpPort = Environment.optional(.httpPort) }
        if bind == nil { bind = Environment.optional(.bind) }
        if adminTokenFile == nil { adminTokenFile = Environment.optional(.adminTokenFile) }
        if threads == nil { threads = Environment.optional(.threads) }
        if httpMaxConnectionsPerIp == nil {
            httpMaxConnectionsPerIp = Environment.optional(.httpMaxConnectionsPerIp)
        }
        if trustedProxies == nil { trustedProxies = Environment.optional(.trustedProxies) }
        if acmeWebroot == nil { acmeWebroot = Environment.optional(.acmeWebroot) }
        if shard == nil { shard = Environment.optional(.shard) }
        if cdnCheckInterval == nil { cdnCheckInterval = Environment.optional(.cdnCheckInterval) }
        if appleCdn == nil { appleCdn = Environment.optional(.appleCdn) }
        if googleDal == nil { googleDal = Environment.optional(.googleDal) }
        if cdnCacert == nil { cdnCacert = Environment.optional(.cdnCacert) }
        if let interval = cdnCheckInterval,
            !(Self.seconds(interval).map { $0 == 0 || ($0 >= 60 && $0 <= 30 * 86_400) } ?? false)
        {
            throw ValidationError(
                "--cdn-check-interval '\(interval)' is not a duration from 1m to 30d: write 10m, 6h or 1d (0 turns it off)"
            )
        }
        for (option, url) in [("--apple-cdn", appleCdn), ("--google-dal", googleDal)]
        where url.map({ !$0.hasPrefix("https://") && !$0.hasPrefix("http://") }) ?? false {
            throw ValidationError("\(option) '\(url ?? "")' is not an http(s) URL")
        }
        try Environment.requireReadableFile(cdnCacert, option: "--cdn-cacert")
        acme = acme || Environment.flag(.acme)
        if let invalid = Environment.invalidValues.first { throw ValidationError(invalid) }
        for name in adminHosts where HostName.normalized(name) == nil || name.contains(",") {
            throw ValidationError("--admin-host '\(name)' is not a host name")
        }
        if let httpMaxConnectionsPerIp, httpMaxConnectionsPerIp < 0 {
            throw ValidationError("--http-max-connections-per-ip must be 0 (no limit) or more")
        }
        for block in trustedProxyBlocks where IPNetwork(block) == nil {
            throw ValidationError(
                "--trusted-proxies: '\(block)' is not an address block; write CIDR blocks such as 10.0.0.0/8, "
                    + "192.0.2.7 or 2001:db8::/32, separated by commas")
        }
        if let threads, threads < 1 { throw ValidationError("--threads must be at least 1") }
        if maxConnections < 1 { throw ValidationError("--max-connections must be at least 1") }
        if maxConnectionsPerIp < 0 { throw ValidationError("--max-connections-per-ip must be 0 (no limit) or more") }
        if !(headerTimeout >= 0 && headerTimeout <= 3600) {
            throw ValidationError("--header-timeout must be between 0 (off) and 3600 seconds")
        }
        if idleTimeout < 0 { throw ValidationError("--idle-timeout must be 0 (never) or more seconds") }
        if maxRequestHead < 4096 || maxRequestHead > 1 << 20 {  // libmicrohttpd's pool per connection
            throw ValidationError("--max-request-head must be between 4096 and 1048576 bytes")
        }
        if sessionTicketLifetime != 0 && !(60...604_800).contains(sessionTicketLifetime) {
            throw ValidationError("--session-ticket-lifetime must be 0 (off) or between 60 and 604800 seconds")
        }
        if let shard {
            do {
                _ = try Shard(parsing: shard)
            } catch {
                throw ValidationError("--shard: \(error.description)")
            }
        }
        if !(removalGrace >= 0 && removalGrace <= 86_400) {
            throw ValidationError("--removal-grace must be between 0 and 86400 seconds")
        }
        if pagesMemory < 1 || pagesMemory > 1 << 20 {
            throw ValidationError("--pages-memory must be between 1 and 1048576 MiB")
        }
        if certificateCache < 0 || certificateCache > 100_000_000 {
            throw ValidationError("--certificate-cache must be between 0 and 100000000 certificates")
        }
        if responseCache < 0 || responseCache > 100_000_000 {
            throw ValidationError("--response-cache must be between 0 and 100000000 responses")
        }
        if credentialVault?.isEmpty == true {
            throw ValidationError("--credential-vault needs a folder, or 'off' to keep credentials in memory")
        }
        if acme && httpPort == nil {
            // dns-01 for every name needs no HTTP listener (the variables are read by the group's own check too).
            var dns = acmeOptions.dns
            try? dns.validate()
            guard (try? dns.settings())??.names.coversAll == true else {
                throw ValidationError(
                    "--acme needs the plain HTTP listener, where the CA validates each domain "
                        + "(http://<domain>/.well-known/acme-challenge/): add --http-port 80, or a port that port 80 is "
                        + "mapped to, or validate every name with dns-01 (--acme-dns-names '*')")
            }
        }
        if acmeWebroot != nil && httpPort == nil {
            throw ValidationError(
                "--acme-webroot answers the CA on the plain HTTP listener: add --http-port 80, or a port that port 80 "
                    + "is mapped to")
        }
        if acme && httpsPort == 0 {
            throw ValidationError("--acme obtains certificates for HTTPS: drop --https-port 0")
        }
        if httpsPort == 0 && httpPort == nil {
            throw ValidationError("nothing to serve: HTTPS is off (--https-port 0) and no --http-port")
        }
    }

    /// The configuration these options describe; a token file that cannot be used is an error printed here (exit 2).
    func configuration() throws -> ServerConfiguration {
        var configuration = ServerConfiguration()
        configuration.configDirectory = configOptions.config
        configuration.certificateDirectory = certsOptions.certs
        configuration.httpsPort = httpsPort == 0 ? nil : httpsPort
        configuration.httpPort = httpPort
        configuration.bindAddress = bind
        configuration.adminPort = adminPort == 0 ? nil : adminPort
        configuration.adminAddress = adminAddress
        configuration.threadPoolSize = threads
        apiOptions.apply(to: &configuration)
        configuration.adminAccess = AdminAccess(hostNames: adminHosts)
        if let adminTokenFile {
            do {
                configuration.adminAccess.tokens = try AdminAccess.readTokens(path: adminTokenFile)
            } catch {
                DiagnosticPrinter.printError(error.description)
                throw ExitCode(2)
            }
        }
        configuration.maxConnections = maxConnections
        configuration.maxConnectionsPerIP = maxConnectionsPerIp
        configuration.httpMaxConnectionsPerIP = httpMaxConnectionsPerIp
        configuration.trustedProxies = trustedProxyBlocks.compactMap(IPNetwork.init)
        configuration.headerTimeout = .milliseconds(Int64(headerTimeout * 1000))
        configuration.idleTimeoutSeconds = idleTimeout
        configuration.maxRequestHeadBytes = maxRequestHead
        configuration.eventLoop = eventLoop.eventLoop
        configuration.watchForChanges = !(noWatch || Environment.flag(.noWatch))
        configuration.refusesExposedPrivateKeys = strict || Environment.flag(.strict)
        configuration.refusesToStartWithErrors = configuration.refusesExposedPrivateKeys
        configuration.removalGrace = .milliseconds(Int64(removalGrace * 1000))
        configuration.sessionTicketLifetime =
            sessionTicketLifetime == 0 ? nil : .seconds(sessionTicketLifetime)
        configuration.shard = try shard.map { text throws in try Shard(parsing: text) }
        configuration.pagesMemory = pagesMemory << 20
        configuration.certificateCache = certificateCache
        configuration.responseCache = responseCache
        switch credentialVault ?? Environment.optional(.credentialVault) {
        case nil: configuration.credentialVault = .temporary
        case "off": configuration.credentialVault = .memory
        case let folder?: configuration.credentialVault = .folder(folder)
        }
        if let uri = store ?? Environment.optional(.store) {
            var key: StoreKey?
            if let file = storeKeyFile ?? Environment.optional(.storeKeyFile) {
                do {
                    key = try StoreKeyFile.load(file)
                } catch {
                    DiagnosticPrinter.printError(error.description)
                    throw ExitCode(2)
                }
            }
            configuration.store = StoreSettings(
                uri: uri, key: key, cacheFolder: storeCache ?? Environment.optional(.storeCache),
                replica: replica ?? Environment.optional(.replica) ?? ProcessInfo.processInfo.hostName)
        }
        configuration.acme = acme ? acmeOptions.settings : nil
        configuration.history = historyOptions.policy
        configuration.acmeWebroot = acmeWebroot
        if let interval = cdnInterval {
            var check = CDNMonitor.Settings()
            check.interval = interval
            if let appleCdn { check.appleBase = appleCdn }
            if let googleDal { check.googleBase = googleDal }
            check.caFile = cdnCacert
            configuration.cdnCheck = check
        }
        return configuration
    }
}

/// The variables of the server options, in the order of the options.
extension EnvironmentVariable {
    static let acme: Self = "AASA_SERVER_ACME"
    static let acmeWebroot: Self = "AASA_SERVER_ACME_WEBROOT"
    static let httpsPort: Self = "AASA_SERVER_HTTPS_PORT"
    static let httpPort: Self = "AASA_SERVER_HTTP_PORT"
    static let bind: Self = "AASA_SERVER_BIND"
    static let adminPort: Self = "AASA_SERVER_ADMIN_PORT"
    static let adminAddress: Self = "AASA_SERVER_ADMIN_ADDRESS"
    static let adminHost: Self = "AASA_SERVER_ADMIN_HOST"
    static let adminTokenFile: Self = "AASA_SERVER_ADMIN_TOKEN_FILE"
    static let threads: Self = "AASA_SERVER_THREADS"
    static let maxConnections: Self = "AASA_SERVER_MAX_CONNECTIONS"
    static let maxConnectionsPerIp: Self = "AASA_SERVER_MAX_CONNECTIONS_PER_IP"
    static let httpMaxConnectionsPerIp: Self = "AASA_SERVER_HTTP_MAX_CONNECTIONS_PER_IP"
    static let trustedProxies: Self = "AASA_SERVER_TRUSTED_PROXIES"
    static let headerTimeout: Self = "AASA_SERVER_HEADER_TIMEOUT"
    static let idleTimeout: Self = "AASA_SERVER_IDLE_TIMEOUT"
    static let maxRequestHead: Self = "AASA_SERVER_MAX_REQUEST_HEAD"
    static let eventLoop: Self = "AASA_SERVER_EVENT_LOOP"
    static let noWatch: Self = "AASA_SERVER_NO_WATCH"
    static let strict: Self = "AASA_SERVER_STRICT"
    static let sessionTicketLifetime: Self = "AASA_SERVER_SESSION_TICKET_LIFETIME"
    static let shard: Self = "AASA_SERVER_SHARD"
    static let storeCache: Self = "AASA_SERVER_STORE_CACHE"
    static let replica: Self = "AASA_SERVER_REPLICA"
    static let removalGrace: Self = "AASA_SERVER_REMOVAL_GRACE"
    static let pagesMemory: Self = "AASA_SERVER_PAGES_MEMORY"
    static let certificateCache: Self = "AASA_SERVER_CERTIFICATE_CACHE"
    static let responseCache: Self = "AASA_SERVER_RESPONSE_CACHE"
    static let credentialVault: Self = "AASA_SERVER_CREDENTIAL_VAULT"
    static let cdnCheckInterval: Self = "AASA_SERVER_CDN_CHECK_INTERVAL"
    static let appleCdn: Self = "AASA_SERVER_APPLE_CDN"
    static let googleDal: Self = "AASA_SERVER_GOOGLE_DAL"
    static let cdnCacert: Self = "AASA_SERVER_CDN_CACERT"
}
