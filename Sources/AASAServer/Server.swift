import AASACore
import AASAMicroHTTPD
import Foundation
import Logging
import Synchronization

/// The running server: public listeners (HTTPS with per-domain certificates, optional plain HTTP) and the
/// admin listener, all serving immutable snapshots that a reload replaces whole (STYLE §9, §11).
public final class Server: Sendable {
    /// Why the server could not start.
    public struct StartupError: Error, Sendable, CustomStringConvertible {
        /// The findings that stopped it (config errors exit with status 2).
        public var diagnostics: [Diagnostic]
        /// Whether the cause is the configuration (as opposed to the system, e.g. a port in use).
        public var isConfigurationError: Bool

        /// One finding per line.
        public var description: String { diagnostics.map(\.description).joined(separator: "\n") }
    }

    private struct State {
        var https: HTTPListener?
        var http: HTTPListener?
        var admin: HTTPListener?
        /// The last version of each domain that loaded cleanly; a broken edit keeps serving it.
        var published: [String: PublishedDomain] = [:]
        var loaded: [LoadedDomain] = []
    }

    /// What the server was started with.
    public let configuration: ServerConfiguration
    private let logger: Logger
    private let state = Mutex(State())

    /// Creates a server; nothing is loaded or bound until ``start()``.
    public init(configuration: ServerConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// The bound HTTPS port, if HTTPS is on and started.
    public var httpsPort: UInt16? { state.withLock { $0.https?.port } }
    /// The bound plain HTTP port, if on and started.
    public var httpPort: UInt16? { state.withLock { $0.http?.port } }
    /// The bound admin port, if on and started.
    public var adminPort: UInt16? { state.withLock { $0.admin?.port } }
    /// The domains currently published.
    public var publishedDomains: [String] { state.withLock { $0.published.keys.sorted() } }
    /// The most recent load result of every domain folder.
    public var loadedDomains: [LoadedDomain] { state.withLock { $0.loaded } }

    /// Loads every domain and certificate and starts the listeners.
    ///
    /// Refuses to start when any domain has an error: at startup there is no last good version to fall back on.
    public func start() throws(StartupError) {
        let loaded: [LoadedDomain]
        do {
            loaded = try SiteConfigLoader().loadAll(directory: configuration.configDirectory)
        } catch {
            throw StartupError(diagnostics: [error], isConfigurationError: true)
        }
        let diagnostics = loaded.flatMap(\.diagnostics)
        // Errors go back to the caller, which prints them; only what does not stop the start is logged.
        log(diagnostics.filter { $0.severity != .error })
        guard !diagnostics.hasErrors else {
            throw StartupError(diagnostics: diagnostics.errors, isConfigurationError: true)
        }
        if loaded.isEmpty {
            logger.warning(
                "no domain folders found; every request will get 404",
                metadata: ["config": "\(configuration.configDirectory)"])
        }
        let published = Dictionary(uniqueKeysWithValues: loaded.compactMap(\.published).map { ($0.domain, $0) })
        let routes = SiteRoutes(Array(published.values))

        var started = State(published: published, loaded: loaded)
        do {
            if let port = configuration.httpsPort {
                let table = try certificateTable(for: loaded.map(\.domain))
                started.https = try HTTPListener(
                    configuration: listenerConfiguration(
                        port: port, address: configuration.bindAddress,
                        tls: TLSConfiguration(certificates: table)),
                    routes: routes)
            }
            if let port = configuration.httpPort {
                started.http = try HTTPListener(
                    configuration: listenerConfiguration(port: port, address: configuration.bindAddress, tls: nil),
                    routes: routes)
            }
            if let port = configuration.adminPort {
                started.admin = try HTTPListener(
                    configuration: listenerConfiguration(port: port, address: configuration.adminAddress, tls: nil),
                    routes: AdminRoutes(published: Array(published.values)))
            }
        } catch let error as StartupError {
            [started.https, started.http, started.admin].forEach { $0?.stop(timeout: .zero) }
            throw error
        } catch {
            [started.https, started.http, started.admin].forEach { $0?.stop(timeout: .zero) }
            throw StartupError(
                diagnostics: [Diagnostic(.error, rule: "listener", "\(error)")], isConfigurationError: false)
        }
        state.withLock { $0 = started }
        for listener in [("https", started.https), ("http", started.http), ("admin", started.admin)] {
            if let port = listener.1?.port {
                logger.info("listening", metadata: ["listener": "\(listener.0)", "port": "\(port)"])
            }
        }
        logger.info("serving", metadata: ["domains": "\(published.keys.sorted().joined(separator: ","))"])
    }

    /// Stops accepting, lets in-flight requests finish within `timeout`, and releases the ports.
    public func stop(timeout: Duration = .seconds(5)) {
        let listeners = state.withLock { state -> [HTTPListener] in
            defer { state.https = nil; state.http = nil; state.admin = nil }
            return [state.https, state.http, state.admin].compactMap { $0 }
        }
        listeners.forEach { $0.stop(timeout: timeout) }
    }

    /// Reloads configs and certificates: each domain that loads cleanly is republished, a domain that
    /// fails keeps its last good version, and certificates change for new connections only.
    @discardableResult
    public func reload() -> [Diagnostic] {
        let loaded: [LoadedDomain]
        do {
            loaded = try SiteConfigLoader().loadAll(directory: configuration.configDirectory)
        } catch {
            logger.error("reload failed; keeping the current configuration", metadata: ["reason": "\(error)"])
            return [error]
        }
        let diagnostics = loaded.flatMap(\.diagnostics)
        log(diagnostics)
        let (routes, admin, listeners) = state.withLock { state -> (SiteRoutes, AdminRoutes, [HTTPListener]) in
            var next: [String: PublishedDomain] = [:]
            for domain in loaded {
                if let published = domain.published {
                    next[domain.domain] = published
                } else if let previous = state.published[domain.domain] {
                    next[domain.domain] = previous  // keep the last good version
                }
            }
            state.published = next
            state.loaded = loaded
            return (
                SiteRoutes(Array(next.values)), AdminRoutes(published: Array(next.values)),
                [state.https, state.http].compactMap { $0 }
            )
        }
        do {
            for listener in listeners { try listener.replaceRoutes(routes) }
            try state.withLock { $0.admin }?.replaceRoutes(admin)
        } catch {
            logger.error("could not publish the reloaded routes", metadata: ["reason": "\(error)"])
        }
        if let https = state.withLock({ $0.https }) {
            do {
                try https.replaceCertificates(certificateTable(for: loaded.map(\.domain)))
            } catch {
                logger.error("certificates not reloaded; keeping the current ones", metadata: ["reason": "\(error)"])
            }
        }
        logger.info("reloaded", metadata: ["domains": "\(routes.domainNames.joined(separator: ","))"])
        return diagnostics
    }

    /// Builds the SNI table from the certificate folder; warns about domains no certificate covers.
    func certificateTable(for domains: [String]) throws(StartupError) -> CertificateTable {
        let directory = CertificateDirectory(path: configuration.certificateDirectory)
        let (certificates, diagnostics) = directory.load()
        log(diagnostics)
        guard !certificates.isEmpty else {
            throw StartupError(
                diagnostics: diagnostics.errors + [
                    Diagnostic(
                        .error, rule: "no-certificates",
                        "no usable certificate in '\(configuration.certificateDirectory)'",
                        file: configuration.certificateDirectory,
                        hint:
                            "add <domain>/fullchain.pem and privkey.pem, run `aasa-server certs dev`, or start with --dev"
                    )
                ], isConfigurationError: true)
        }
        // Default: certs/default/, else the certificate of the first domain, else the first certificate.
        let defaultIndex =
            certificates.firstIndex { $0.folderName == CertificateDirectory.defaultFolder }
            ?? domains.lazy.compactMap { domain in certificates.firstIndex { $0.covers(domain) } }.first
            ?? 0
        for domain in domains where !certificates.contains(where: { $0.covers(domain) }) {
            logger.warning(
                "no certificate covers this domain; clients will get the default certificate and fail to verify it",
                metadata: ["domain": "\(domain)", "default": "\(certificates[defaultIndex].folderName)"])
        }
        do {
            return try CertificateTable(
                entries: certificates.map {
                    CertificateTable.Entry(names: $0.names, certificateChainPEM: $0.chainPEM, privateKeyPEM: $0.keyPEM)
                },
                defaultEntry: defaultIndex)
        } catch {
            throw StartupError(
                diagnostics: [Diagnostic(.error, rule: "certificate-invalid", "\(error)")], isConfigurationError: true)
        }
    }

    private func listenerConfiguration(port: UInt16, address: String?, tls: TLSConfiguration?) -> ListenerConfiguration
    {
        let logger = self.logger
        var listener = ListenerConfiguration(
            port: port, bindAddress: address, tls: tls,
            logHandler: { message in
                logger.notice("libmicrohttpd", metadata: ["message": "\(message)"])
            })
        if let threads = configuration.threadPoolSize { listener.threadPoolSize = threads }
        return listener
    }

    private func log(_ diagnostics: [Diagnostic]) {
        for diagnostic in diagnostics {
            let metadata: Logger.Metadata = ["diagnostic": "\(diagnostic.description)"]
            switch diagnostic.severity {
            case .error: logger.error("config error", metadata: metadata)
            case .warning: logger.warning("config warning", metadata: metadata)
            case .note: logger.info("config note", metadata: metadata)
            }
        }
    }
}
