import AASACore
import AASAServer
import ArgumentParser
import Foundation
import Logging

/// `aasa-server serve`: serves every configured domain until SIGTERM or SIGINT.
struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the association file of every domain in the config folder over HTTPS.",
        discussion: """
            Each domain gets its own certificate by SNI from <certs>/<domain>/fullchain.pem and privkey.pem
            (certbot's layout; wildcard certificates and any certificate whose SAN covers the name work too).
            A config error stops the start with exit status 2. Changes to the config and certificate folders
            are picked up on their own (inotify; Kubernetes ConfigMap/Secret updates and certbot renewals
            included) and SIGHUP reloads too: a domain or certificate that fails to load keeps its last good
            version, and the admin listener's /status says why. SIGTERM and SIGINT stop gracefully.

            Examples:
              aasa-server serve --config site-config --certs certs
              aasa-server serve --dev            # local CA and certificates for device testing
              aasa-server serve --https-port 443 --http-port 8080 --admin-port 9090
            """)

    @OptionGroup var configOptions: ConfigOptions
    @OptionGroup var certsOptions: CertsOptions

    @Option(help: ArgumentHelp("HTTPS port (0 disables HTTPS).", valueName: "port"))
    var httpsPort: UInt16 = 8443

    @Option(
        help: ArgumentHelp("Also serve plain HTTP on this port (behind a TLS-terminating proxy).", valueName: "port"))
    var httpPort: UInt16?

    @Option(help: ArgumentHelp("Address the public listeners bind to (default: all interfaces).", valueName: "address"))
    var bind: String?

    @Option(
        help: ArgumentHelp("Admin listener port for /healthz, /status and /match (0 disables it).", valueName: "port"))
    var adminPort: UInt16 = 9090

    @Option(help: ArgumentHelp("Address the admin listener binds to.", valueName: "address"))
    var adminAddress = "127.0.0.1"

    @Option(help: ArgumentHelp("Worker threads per listener (default: one per processor).", valueName: "n"))
    var threads: Int?

    @Flag(
        help: "Create a local development CA and certificates for domains that have none, and print how to trust them.")
    var dev = false

    @Flag(help: "Do not watch the config and certificate folders for changes; reload only on SIGHUP.")
    var noWatch = false

    @Option(help: ArgumentHelp("Log level: trace, debug, info, notice, warning, error, critical.", valueName: "level"))
    var logLevel: Logger.Level = .info

    func validate() throws {
        if let threads, threads < 1 { throw ValidationError("--threads must be at least 1") }
        if httpsPort == 0 && httpPort == nil {
            throw ValidationError("nothing to serve: HTTPS is off (--https-port 0) and no --http-port")
        }
    }

    func run() throws {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = logLevel
            return handler
        }
        let logger = Logger(label: "aasa-server")
        var configuration = ServerConfiguration()
        configuration.configDirectory = configOptions.config
        configuration.certificateDirectory = certsOptions.certs
        configuration.httpsPort = httpsPort == 0 ? nil : httpsPort
        configuration.httpPort = httpPort
        configuration.bindAddress = bind
        configuration.adminPort = adminPort == 0 ? nil : adminPort
        configuration.adminAddress = adminAddress
        configuration.threadPoolSize = threads
        configuration.watchForChanges = !noWatch

        if dev, httpsPort != 0 {
            let sites = (try? SiteConfigLoader().loadAll(directory: configOptions.config)) ?? []
            do {
                let report = try DevCertificates(certificateDirectory: certsOptions.certs).ensure(
                    names: sites.map(\.domain))
                print(
                    DevCertificates.instructions(
                        report: report, sites: sites.map { ($0.domain, $0.config) }, httpsPort: httpsPort))
                fflush(nil)  // the server runs until a signal; without this, piped output would never appear
            } catch {
                DiagnosticPrinter.printError("error: could not create development certificates: \(error)")
                throw ExitCode(1)
            }
        }

        Signals.block()
        let server = Server(configuration: configuration, logger: logger)
        do {
            try server.start()
        } catch {
            DiagnosticPrinter.print(error.diagnostics)
            DiagnosticPrinter.printError("aasa-server did not start")
            throw ExitCode(error.isConfigurationError ? 2 : 1)
        }
        while true {
            switch Signals.wait() {
            case .reload:
                logger.info("SIGHUP: reloading")
                server.reload(trigger: .signal)
            case .stop:
                logger.info("stopping")
                server.stop(timeout: .seconds(4))
                logger.info("stopped")
                return
            }
        }
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
