public import AASACore
import AASAMicroHTTPD
import Foundation
import Logging
import Synchronization

/// The server's listeners: binds their ports, starts them on the first routes and certificates, swaps in each
/// reload's, and stops them. The public ones (HTTPS with each domain's certificate, plain HTTP) serve one route
/// snapshot between them; the admin listener serves the admin routes.
///
/// As a service, they are first in the start's order and so last in the stop's: they start on the first load's
/// routes (the ``Reloader``'s start), or the admin listener alone ahead of it (``adminAhead(_:)``), and stop once
/// nothing can publish to them any more.
final class Listeners: Service {
    private let configuration: ServerConfiguration
    private let logger: Logger
    private let recorder: TrafficRecorder
    /// With ACME, the temporary certificates of the domains no certificate covers yet, for the SNI table.
    private let temporaryCertificates: TemporaryCertificates?
    /// The certificates imported for handshakes, shared by every SNI table the HTTPS listener serves.
    private let credentialCache: CredentialCache
    /// The native responses built for the public listeners, shared by every route snapshot they serve.
    let responseCache: ResponseCache
    /// The SNI table the HTTPS listener serves, made of the catalog's certificates;
    /// `behind`: the last could not be made, so the one served is not the catalog's and the next is made whole.
    private let sni = Mutex<(table: CertificateTable?, behind: Bool)>((nil, false))
    /// The running listeners by name, from ``start(certificates:routes:admin:)`` to ``stop(timeout:)``.
    private let running = Mutex<[ListenerName: HTTPListener]>([:])
    /// Sockets bound by ``bind()`` before the start.
    private let bound = Mutex<[ListenerName: ListeningSockets]>([:])

    init(
        configuration: ServerConfiguration, logger: Logger, recorder: TrafficRecorder,
        temporaryCertificates: TemporaryCertificates? = nil
    ) {
        self.configuration = configuration
        self.logger = logger
        self.recorder = recorder
        self.temporaryCertificates = temporaryCertificates
        credentialCache = CredentialCache(capacity: configuration.certificateCache)
        responseCache = ResponseCache(capacity: configuration.responseCache)
    }

    /// The port and address each configured listener listens on.
    private var endpoints: [(ListenerName, port: UInt16, address: String?)] {
        [
            (.https, configuration.httpsPort, configuration.bindAddress),
            (.http, configuration.httpPort, configuration.bindAddress),
            (.admin, configuration.adminPort, configuration.adminAddress),
        ].compactMap { name, port, address in port.map { (name, $0, address) } }
    }

    /// Binds every configured listener's port now, for ``start(certificates:routes:admin:)`` to serve on: a process
    /// started as root binds port 443 here, then drops its privileges before it reads one file.
    func bind() throws(Server.StartupError) {
        var sockets: [ListenerName: ListeningSockets] = [:]
        do {
            for (name, port, address) in endpoints {
                sockets[name] = try ListeningSockets(
                    configuration(port: port, address: address, tls: nil, observed: name.isPublic))
            }
        } catch {
            throw Server.StartupError(
                diagnostics: [Diagnostic(.error, rule: .listener, error.reason)], isConfigurationError: false)
        }
        bound.withLock { $0 = sockets }
    }

    /// Starts every configured listener (on the sockets ``bind()`` bound, if it did): the public ones on `routes`,
    /// HTTPS with the SNI table of `certificates` (with nothing to serve there is no HTTPS listener), the admin one on
    /// `admin`.
    /// A listener that fails stops those already started.
    func start(certificates: CertificateCatalog, routes: RouteSnapshot, admin: AdminRoutes) throws(Server.StartupError)
    {
        let table: CertificateTable?
        do {
            table = try CertificateTable.serving(certificates, temporary: temporaryCertificates, cache: credentialCache)
        } catch {
            throw Server.StartupError(
                diagnostics: [
                    Diagnostic(.error, rule: .certificateInvalid, (error as? HTTPListenerError)?.reason ?? "\(error)")
                ],
                isConfigurationError: true)
        }
        sni.withLock { $0 = (table, false) }
        try start(endpoints.filter { running.withLock { $0 }[$0.0] == nil }, table, routes, admin)
        do {
            try running.withLock { $0 }[.admin]?.replaceRoutes(admin)
        } catch {
            throw Server.StartupError(
                diagnostics: [Diagnostic(.error, rule: .listener, "\(error)")], isConfigurationError: false)
        }
    }

    /// Nothing starts here: the listeners start on the first load's routes (``start(certificates:routes:admin:)``).
    func start() {}

    /// The admin listener alone, on `admin`, ahead of the others, as a service: a replica that waits for its store
    /// answers `/healthz`, and `/readyz` with 503, meanwhile. ``start(certificates:routes:admin:)`` then starts the
    /// others, and the admin listener takes the first load's routes.
    func adminAhead(_ admin: AdminRoutes) -> some Service {
        AdminAhead(listeners: self, admin: admin)
    }

    /// ``adminAhead(_:)``.
    private final class AdminAhead: Service {
        let listeners: Listeners
        let admin: AdminRoutes

        init(listeners: Listeners, admin: AdminRoutes) {
            self.listeners = listeners
            self.admin = admin
        }

        func start() throws(Server.StartupError) {
            try listeners.start(listeners.endpoints.filter { $0.0 == .admin }, nil, nil, admin)
        }

        /// Nothing: the listeners' own place in the order stops the admin listener with the others.
        func stop() {}
    }

    private func start(
        _ endpoints: [(ListenerName, port: UInt16, address: String?)], _ certificates: CertificateTable?,
        _ routes: RouteSnapshot?, _ admin: AdminRoutes
    ) throws(Server.StartupError) {
        let sockets = bound.withLock { bound in
            var taken: [ListenerName: ListeningSockets] = [:]
            for endpoint in endpoints { taken[endpoint.0] = bound.removeValue(forKey: endpoint.0) }
            return taken
        }
        var started: [ListenerName: HTTPListener] = [:]
        do {
            for (name, port, address) in endpoints {
                switch name {
                case .https:
                    guard let certificates, let routes else { continue }
                    var tls = TLSConfiguration(certificates: certificates)
                    tls.sessionTicketLifetime = configuration.sessionTicketLifetime
                    var listener = configuration(port: port, address: address, tls: tls, observed: true)
                    listener.boundSockets = sockets[name]
                    started[name] = try HTTPListener(configuration: listener, snapshot: routes)
                case .http:
                    guard let routes else { continue }
                    var listener = configuration(port: port, address: address, tls: nil, observed: true)
                    listener.boundSockets = sockets[name]
                    // Behind a TLS-terminating proxy: the proxy is one address for all its clients, and names them.
                    listener.perIPConnectionLimit =
                        configuration.httpMaxConnectionsPerIP ?? configuration.maxConnectionsPerIP
                    listener.trustedProxies = configuration.trustedProxies
                    listener.forwardedClientLimit = configuration.maxConnectionsPerIP
                    started[name] = try HTTPListener(configuration: listener, snapshot: routes)
                case .admin:
                    var listener = configuration(port: port, address: address, tls: nil)
                    listener.boundSockets = sockets[name]
                    listener.deferredWorkers = configuration.apiWorkers
                    listener.deferredQueueLimit = configuration.apiQueue
                    listener.bytesInFlight = configuration.apiBytesInFlight
                    started[name] = try HTTPListener(configuration: listener, routes: admin)
                }
            }
        } catch {
            started.values.forEach { $0.stop(timeout: .zero) }
            throw Server.StartupError(
                diagnostics: [Diagnostic(.error, rule: .listener, (error as? HTTPListenerError)?.reason ?? "\(error)")],
                isConfigurationError: false)
        }
        running.withLock { $0.merge(started) { _, new in new } }
        for name in ListenerName.allCases {
            if let port = started[name]?.port {
                logger.info("listening", metadata: ["listener": "\(name.rawValue)", "port": "\(port)"])
            }
        }
    }

    /// Swaps in a reload's routes: the admin ones first, so `/status` and `/match` are never behind what the public
    /// hosts serve.
    func publish(routes: RouteSnapshot, admin: AdminRoutes) throws {
        let listeners = running.withLock { $0 }
        try listeners[.admin]?.replaceRoutes(admin)
        for name in [ListenerName.https, .http] { listeners[name]?.replaceRoutes(routes) }
    }

    /// Swaps in new admin routes (a comparison finished after its reload).
    func publish(admin: AdminRoutes) throws {
        try running.withLock { $0[.admin] }?.replaceRoutes(admin)
    }

    /// Swaps in the SNI table of `certificates`, `change` made to the one served, for new connections; made whole
    /// when the change cannot be made to it. A table that cannot be made leaves the one served, and the next change
    /// is made to none: that table is not the catalog's any more.
    func publish(certificates: CertificateCatalog, change: CertificateChange) throws {
        try sni.withLock { sni in
            let current = sni.behind ? nil : sni.table
            let next: CertificateTable?
            do {
                next = try CertificateTable.serving(
                    certificates, change: change, after: current, temporary: temporaryCertificates,
                    cache: credentialCache)
            } catch {
                do {
                    next = try CertificateTable.serving(
                        certificates, temporary: temporaryCertificates, cache: credentialCache)
                } catch {
                    sni.behind = true
                    throw error
                }
            }
            sni.behind = false
            guard let next, next !== sni.table else { return }
            try running.withLock { $0[.https] }?.replaceCertificates(next)
            sni.table = next
        }
    }

    /// The SNI table the HTTPS listener serves; `nil` without one.
    var certificateTable: CertificateTable? { sni.withLock { $0.table } }

    /// Stops at once (``stop(draining:)`` with no time for requests in flight).
    func stop() {
        stop(draining: .zero)
    }

    /// Stops accepting, lets in-flight requests finish within `timeout`, and releases the ports; returns when
    /// libmicrohttpd's threads have ended.
    func stop(draining timeout: Duration) {
        let stopping = running.withLock { running in
            defer { running = [:] }
            return running
        }
        for name in ListenerName.allCases { stopping[name]?.stop(timeout: timeout) }
    }

    /// The bound port of `name`, if it is on and started.
    func port(_ name: ListenerName) -> UInt16? {
        running.withLock { $0[name]?.port }
    }

    /// Whether a public listener is running.
    var servesPublicly: Bool {
        running.withLock { $0[.https] != nil || $0[.http] != nil }
    }

    /// What the certificate cache of the HTTPS listener did since the start, and holds.
    var certificateCacheFigures: CertificateCacheFigures { CertificateCacheFigures(credentialCache.figures) }

    /// What the public listeners' response cache did since the start, and holds.
    var responseCacheFigures: ResponseCache.Figures { responseCache.figures }

    /// The public listeners' connection figures, for `/metrics` and `/status`.
    var figures: [String: AdminRoutes.ListenerFigures] {
        let listeners = running.withLock { $0 }
        var figures: [String: AdminRoutes.ListenerFigures] = [:]
        for name in ListenerName.allCases where name.isPublic {
            guard let listener = listeners[name] else { continue }
            figures[name.rawValue] = AdminRoutes.ListenerFigures(
                openConnections: listener.openConnections, headerTimeouts: listener.headerTimeouts)
        }
        return figures
    }

    /// A listener's settings; `observed` listeners report every request to ``recorder``.
    private func configuration(port: UInt16, address: String?, tls: TLSConfiguration?, observed: Bool = false)
        -> ListenerConfiguration
    {
        let logger = self.logger
        var listener = ListenerConfiguration(
            port: port, bindAddress: address, tls: tls,
            logHandler: { message in
                // libmicrohttpd's messages may quote what a client sent.
                logger.notice("libmicrohttpd", metadata: ["message": "\(LogEscaping.escape(message))"])
            })
        if let threads = configuration.threadPoolSize { listener.threadPoolSize = threads }
        listener.connectionLimit = configuration.maxConnections
        listener.perIPConnectionLimit = configuration.maxConnectionsPerIP
        listener.connectionTimeoutSeconds = configuration.idleTimeoutSeconds
        listener.headerTimeout = configuration.headerTimeout
        listener.requestHeadLimit = configuration.maxRequestHeadBytes
        if observed { listener.eventLoop = configuration.eventLoop }
        if observed { listener.observer = recorder }
        return listener
    }
}

/// The rules of what `serve` needs to run.
extension Rule {
    /// Reported by ``Listeners`` when a listener cannot bind or start.
    public static let listener = Rule(
        "listener", .error,
        "A listener could not start (the port is in use, an invalid bind address): `serve` exits with status 1.")

    /// The rules of what `serve` and `certs acme` need to run (stapling, certificates, ACME, listeners), in the order
    /// of the docs table: their part of `Rule.all`.
    package static let serveRules: [Rule] = [
        .ocspStaple,
        .noCertificates,
        .acmeSetup,
        .acmeDNSDelegation,
        .acmeOrder,
        .listener,
        .storeUnreachable,
        .storedValue,
    ]
}
