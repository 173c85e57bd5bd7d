import AASACore
import AASAServer
import ArgumentParser
import Foundation
import Logging

/// `aasa-server certs`: certificate tools.
struct Certs: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Certificate tools.",
        subcommands: [Dev.self, Acme.self])

    /// `aasa-server certs dev`: a local CA and certificates for testing on a device.
    struct Dev: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a local development CA and ECDSA P-256 certificates for each domain and localhost.",
            discussion: """
                The CA goes to <certs>/dev-ca/ (ca.pem, and ca-key.pem with mode 0600); each domain gets \
                <certs>/<domain>/fullchain.pem and privkey.pem. Domains that already have a valid certificate \
                keep it unless --replace is given. Prints how to trust the CA on an iPhone and the \
                entitlement lines to paste.

                Examples:
                  aasa-server certs dev                       # every domain in site-config/
                  aasa-server certs dev --domain shop.example --domain links.example
                """)

        @Option(
            name: .customLong("domain"),
            help: ArgumentHelp(
                "A domain to issue for (repeatable; default: every configured domain).", valueName: "domain"))
        var domains: [String] = []

        @Flag(help: "Issue new certificates even for domains that already have one.")
        var replace = false

        @Option(help: ArgumentHelp("The HTTPS port the entitlement lines should name.", valueName: "port"))
        var httpsPort: UInt16 = 8443

        @OptionGroup var configOptions: ConfigOptions
        @OptionGroup var certsOptions: CertsOptions

        func validate() throws {
            for domain in domains where SiteConfigLoader.domainNameProblem(domain.lowercased()) != nil {
                throw ValidationError("'\(domain)' is not a host name")
            }
        }

        func run() throws {
            // Each domain's services, for the entitlement lines: read on every processor, and nothing else of the
            // domain kept (a million domains' configs would not fit in memory).
            let loader = SiteConfigLoader()
            let sites = ((try? DomainFolder.list(configOptions.config)) ?? []).concurrentMap { folder in
                let loaded = loader.loadDomain(folder)
                return (domain: loaded.domain, services: loaded.generated?.file.services ?? [])
            }
            let services = Dictionary(sites.map { ($0.domain, $0.services) }, uniquingKeysWith: { first, _ in first })
            let names = domains.isEmpty ? sites.map(\.domain) : domains.map { $0.lowercased() }
            do {
                let report = try DevCertificates(certificateDirectory: certsOptions.certs).ensure(
                    names: names, replace: replace)
                let listed = names.map { name in (name, services[name] ?? []) }
                print(
                    DevCertificates.instructions(report: report, domains: listed, httpsPort: httpsPort), terminator: "")
            } catch {
                DiagnosticPrinter.printError("error: \(error)")
                throw ExitCode(1)
            }
        }
    }

    /// `aasa-server certs acme`: obtain or renew certificates by ACME once, then exit.
    struct Acme: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Obtain or renew certificates by ACME once, as `serve --acme` would, then exit.",
            discussion: """
                Every configured domain (or each --domain) without a usable certificate, and every certificate the \
                server obtained that is due for renewal, is ordered; the operator's own certificates are never \
                touched. Issued files go to <certs>/<domain>/ (fullchain.pem, privkey.pem, acme.json); a running \
                server picks them up by itself. The CA validates each domain at \
                http://<domain>/.well-known/acme-challenge/<token>: answer with --standalone (a listener of this \
                command's own on --http-port, default 80) or through a running `serve --acme-webroot DIR` by \
                passing the same --acme-webroot here; names answered with dns-01 (--acme-dns-names, --acme-wildcard) \
                need neither. Exits 1 when any domain got no certificate.

                Examples:
                  aasa-server certs acme --standalone --acme-email ops@example.com --acme-agree-tos
                  aasa-server certs acme --acme-webroot /srv/acme --domain shop.example --acme-agree-tos
                  aasa-server certs acme --acme-dns-names '*' --acme-dns-server ns1.provider.example:53 \
                    --acme-dns-tsig-key-file /etc/aasa/acme.key --acme-dns-zone acme.provider.example --acme-agree-tos
                """)

        @Option(
            name: .customLong("domain"),
            help: ArgumentHelp(
                "A domain to order for (repeatable; default: every configured domain).", valueName: "domain"))
        var domains: [String] = []

        @Flag(help: "Answer the CA's challenges with a listener of this command's own on --http-port.")
        var standalone = false

        @Option(help: ArgumentHelp("The port of --standalone's listener.", valueName: "port"))
        var httpPort: UInt16 = 80

        @Option(help: ArgumentHelp("The address --standalone's listener binds to; default all.", valueName: "address"))
        var bind: String?

        @Option(
            help: ArgumentHelp(
                "Write the challenge answers to <dir>/.well-known/acme-challenge/, for a running "
                    + "`serve --acme-webroot <dir>` to answer (env: \(EnvironmentVariable.acmeWebroot)).",
                valueName: "dir"))
        var acmeWebroot: String?

        @OptionGroup var configOptions: ConfigOptions
        @OptionGroup var certsOptions: CertsOptions
        @OptionGroup(title: "ACME") var acmeOptions: ACMEOptions

        mutating func validate() throws {
            if acmeWebroot == nil { acmeWebroot = Environment.optional(.acmeWebroot) }
            for domain in domains where SiteConfigLoader.domainNameProblem(domain.lowercased()) != nil {
                throw ValidationError("'\(domain)' is not a host name")
            }
            let ways =
                "--standalone (a listener of this command's own on --http-port) or --acme-webroot DIR (a running "
                + "`serve --acme-webroot DIR` answers)"
            if standalone && acmeWebroot != nil {
                throw ValidationError("answer the CA's challenges one way, not both: \(ways)")
            }
            let dns = (try? acmeOptions.dns.settings()) ?? nil
            if !standalone && acmeWebroot == nil && dns == nil {
                throw ValidationError(
                    "say how the CA's challenges are answered: \(ways), or dns-01 (--acme-dns-names, --acme-wildcard)")
            }
        }

        func run() throws {
            // Each domain's outcome is printed below; the server's log lines would repeat it.
            LoggingSystem.bootstrap { label in
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = .critical
                return handler
            }
            let names =
                domains.isEmpty
                ? ((try? DomainFolder.list(configOptions.config).map(\.domain)) ?? []) : domains.map { $0.lowercased() }
            guard !names.isEmpty else {
                DiagnosticPrinter.printError("error: no domain folders in '\(configOptions.config)' and no --domain")
                throw ExitCode(2)
            }
            if !standalone && acmeWebroot == nil, let dns = acmeOptions.settings.dns {
                let http = names.filter { !dns.answers($0) }
                guard http.isEmpty else {
                    DiagnosticPrinter.printError(
                        "error: \(http.joined(separator: ", ")) would be validated with http-01, which nothing answers: "
                            + "add them to --acme-dns-names, or answer http-01 with --standalone or --acme-webroot DIR")
                    throw ExitCode(2)
                }
            }
            let ordering = CertificateOrdering(
                settings: acmeOptions.settings, certificateDirectory: certsOptions.certs,
                answering: acmeWebroot.map { .webroot($0) }
                    ?? (standalone ? .standalone(port: httpPort, address: bind) : .dnsOnly))
            let lines: [CertificateOrdering.Line]
            do {
                lines = try ordering.run(domains: names, logger: Logger(label: "aasa-server"))
            } catch {
                DiagnosticPrinter.print([error])
                throw ExitCode(1)
            }
            let formatter = ISO8601DateFormatter()
            var failed = false
            for line in lines {
                if let failure = line.failure {
                    DiagnosticPrinter.print([failure])
                    failed = true
                    continue
                }
                guard let status = line.status else { continue }
                let expiry = status.expiry.map { formatter.string(from: $0) } ?? "?"
                switch (status.source, status.state) {
                case (.files, .failed):
                    DiagnosticPrinter.printError(
                        "error: \(status.lastError ?? "\(line.domain): no usable certificate")")
                    failed = true
                case (.files, _):
                    print("\(line.domain): the operator's certificate (expires \(expiry)); not managed by ACME")
                case (.acme, .valid):
                    let renewal = status.nextRenewal.map { formatter.string(from: $0) } ?? "?"
                    print("\(line.domain): certificate valid until \(expiry), renewal from \(renewal)")
                default:
                    print("\(line.domain): \(status.state.rawValue)")
                }
            }
            if failed { throw ExitCode(1) }
        }
    }
}
