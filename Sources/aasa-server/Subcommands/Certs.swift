import AASACore
import AASAServer
import ArgumentParser

/// `aasa-server certs`: certificate tools.
struct Certs: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Certificate tools.",
        subcommands: [Dev.self])

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
            let sites = (try? SiteConfigLoader().loadAll(directory: configOptions.config)) ?? []
            let names = domains.isEmpty ? sites.map(\.domain) : domains.map { $0.lowercased() }
            do {
                let report = try DevCertificates(certificateDirectory: certsOptions.certs).ensure(
                    names: names, replace: replace)
                let listed = names.map { name in
                    (name, sites.first { $0.domain == name }?.generated?.file.services ?? [])
                }
                print(
                    DevCertificates.instructions(report: report, domains: listed, httpsPort: httpsPort), terminator: "")
            } catch {
                DiagnosticPrinter.printError("error: \(error)")
                throw ExitCode(1)
            }
        }
    }
}
