import AASACore
import AASAMicroHTTPD
import AASAServer
public import ArgumentParser
import Foundation
public import Logging

/// `aasa-server serve`: serves every configured domain until SIGTERM or SIGINT.
struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the association file of every domain in the config folder over HTTPS.",
        discussion: """
            Each domain gets its own certificate by SNI from <certs>/<domain>/fullchain.pem and privkey.pem (certbot's layout; wildcard certificates and any certificate whose SAN covers the name work too). \
            Every domain and certificate that loads is served; one that fails is logged and named on the admin listener's /status (and on /readyz when no admin token is set), and the start fails (exit status 2) only when no domain can be served, or with --strict on any error. \
            Changes to the config and certificate folders are picked up on their own (inotify; Kubernetes ConfigMap/Secret updates and certbot renewals included) and SIGHUP reloads too: a domain or certificate that fails to load keeps its last good version, and the admin listener's /status says why. A domain whose folder disappears keeps being served for --removal-grace seconds. SIGTERM and SIGINT stop gracefully.

            Examples:
              aasa-server serve --config site-config --certs certs
              aasa-server serve --dev            # local CA and certificates for device testing
              aasa-server serve --acme --acme-email ops@example.com --acme-agree-tos --https-port 443 --http-port 80
              aasa-server serve --https-port 443 --http-port 8080 --admin-port 9090
            """)

    @OptionGroup var options: ServerOptions

    @Flag(
        help: """
            Create a local development CA and certificates for domains that have none, print how to trust them, \
            and print every association-file fetch as it happens (env: \(EnvironmentVariable.dev)=1).
            """)
    var dev = false

    @Option(
        help: ArgumentHelp(
            "Access log on standard output: off, json or common (env: \(EnvironmentVariable.accessLog)).",
            valueName: "format"))
    var accessLog: AccessLogChoice = Environment.value(.accessLog, AccessLogChoice.off)

    @Flag(help: "Include query strings in the access log (env: \(EnvironmentVariable.accessLogQueries)=1).")
    var accessLogQueries = false

    @Option(
        help: ArgumentHelp(
            "After binding the ports and before reading any file, switch to this user, its group and its supplementary "
                + "groups (e.g. ssl-cert), e.g. when started as root to bind 443 (env: \(EnvironmentVariable.user)).",
            valueName: "name"))
    var user: String?

    @Option(
        help: ArgumentHelp(
            "Log level: trace, debug, info, notice, warning, error, critical (env: \(EnvironmentVariable.logLevel)).",
            valueName: "level"))
    var logLevel: Logger.Level = Environment.value(.logLevel, Logger.Level.info)

    /// Takes `--user` from its variable when not given, and refuses `--dev` with `--acme` or `--store`.
    mutating func validate() throws {
        // Options without a flag fall back to their AASA_SERVER_* variable.
        if user == nil { user = Environment.optional(.user) }
        if let invalid = Environment.invalidValues.first { throw ValidationError(invalid) }
        if (dev || Environment.flag(.dev)) && options.acme {
            throw ValidationError(
                "--dev and --acme exclude each other: --dev writes development certificates, which --acme never replaces"
            )
        }
        if (dev || Environment.flag(.dev)) && (options.store ?? Environment.optional(.store)) != nil {
            throw ValidationError(
                "--dev and --store exclude each other: --dev serves the config folder with development certificates; "
                    + "push those with `store push --certs` to serve them from the store")
        }
    }

    func run() throws {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = logLevel
            return handler
        }
        let logger = Logger(label: "aasa-server")
        let devMode = dev || Environment.flag(.dev)
        var options = options
        // Apple's CDN is asked every six hours unless told otherwise; development domains are not on it.
        if options.cdnCheckInterval == nil { options.cdnCheckInterval = devMode ? "0" : "6h" }
        let configuration = try options.configuration()
        let resources = ProcessResources.raiseOpenFileLimit()
        logger.info("open file limit", metadata: ["soft": "\(resources.soft)", "hard": "\(resources.hard)"])
        if let arenas = ProcessResources.limitMallocArenas(to: ProcessInfo.processInfo.activeProcessorCount) {
            logger.debug("malloc arenas limited", metadata: ["arenas": "\(arenas)"])
        }

        let includeQueries = accessLogQueries || Environment.flag(.accessLogQueries)
        var log: AccessLog?
        if let format = accessLog.format { log = AccessLog(format: format, includeQueries: includeQueries) }
        // In --dev every association fetch is printed, so a developer sees whether the phone fetched.
        var printFetch: (@Sendable (TrafficRecorder.Fetch) -> Void)?
        if devMode { printFetch = { fetch in DiagnosticPrinter.printOutput(fetch.line) } }
        let recorder = TrafficRecorder(accessLog: log, onFetch: printFetch)
        let server = Server(configuration: configuration, logger: logger, recorder: recorder)
        // With --user: bind the ports as the starting user (root, for 443), then drop to the user before anything is
        // read (development certificates, configs), so no file is read and no request answered as root.
        if let user {
            do {
                try server.bindPorts()
                try ProcessResources.switchUser(to: user)
            } catch let error as Server.StartupError {
                DiagnosticPrinter.print(error.diagnostics)
                DiagnosticPrinter.printError("aasa-server did not start")
                throw ExitCode(1)
            } catch {
                DiagnosticPrinter.printError("error: \(error)")
                throw ExitCode(1)
            }
            logger.info("switched user", metadata: ["user": "\(user)"])
        }
        // --dev: certificates for every domain folder, named by the listing (each site.json is read once, by the
        // server); the entitlement lines follow the start, from the files the server publishes.
        var developmentCertificates: DevCertificates.Report?
        var listed: [String] = []
        if devMode, options.httpsPort != 0 {
            // Listed only here: at 100,000 domains a listing of the config folder is a tenth of a second.
            listed = (try? DomainFolder.list(options.configOptions.config).map(\.domain)) ?? []
            do {
                developmentCertificates = try DevCertificates(certificateDirectory: options.certsOptions.certs).ensure(
                    names: listed)
            } catch {
                DiagnosticPrinter.printError("error: could not create development certificates: \(error)")
                throw ExitCode(1)
            }
        }

        Signals.block()
        do {
            try server.start()
        } catch {
            DiagnosticPrinter.print(error.diagnostics)
            DiagnosticPrinter.printError("aasa-server did not start")
            throw ExitCode(error.isConfigurationError ? 2 : 1)
        }
        if let developmentCertificates {
            let services = server.publishedServices
            print(
                DevCertificates.instructions(
                    report: developmentCertificates, domains: listed.map { ($0, services[$0] ?? []) },
                    httpsPort: options.httpsPort))
            fflush(nil)  // the server runs until a signal; without this, piped output would never appear
        }
        server.runUntilStopped()
    }
}

/// The variables of `serve`'s own options, in the order of the options.
extension EnvironmentVariable {
    static let dev: Self = "AASA_SERVER_DEV"
    static let accessLog: Self = "AASA_SERVER_ACCESS_LOG"
    static let accessLogQueries: Self = "AASA_SERVER_ACCESS_LOG_QUERIES"
    static let user: Self = "AASA_SERVER_USER"
    static let logLevel: Self = "AASA_SERVER_LOG_LEVEL"
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

/// `--event-loop`: auto, or one of the event loops.
enum EventLoopChoice: String, ExpressibleByArgument, LosslessStringConvertible, CaseIterable {
    case auto, epoll, poll

    init?(_ description: String) { self.init(rawValue: description) }
    var description: String { rawValue }
    var eventLoop: ListenerEventLoop? { self == .auto ? nil : ListenerEventLoop(rawValue: rawValue) }
}

/// `--access-log`: off, or one of the access log formats.
enum AccessLogChoice: String, ExpressibleByArgument, LosslessStringConvertible, CaseIterable {
    case off, json, common

    init?(_ description: String) { self.init(rawValue: description) }
    var description: String { rawValue }
    var format: AccessLog.Format? { self == .off ? nil : AccessLog.Format(rawValue: rawValue) }
}
