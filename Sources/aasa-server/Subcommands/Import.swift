import AASACore
import AASAServer
import ArgumentParser

/// `aasa-server import FILE --domain D`: turns an existing Apple file into a site.json.
struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Import an existing apple-app-site-association file into <config>/<domain>/site.json.",
        discussion: """
            Reads legacy paths (with NOT), the iOS 9 dictionary form, modern components and all four
            services. Nothing is written when the file has errors. Importing into an existing domain
            replaces only its Apple services and keeps every other setting.

            An Android assetlinks.json (a JSON array) is recognised by its content and replaces only the
            domain's android section.

            Examples:
              aasa-server import apple-app-site-association --domain shop.example --sign
              aasa-server import assetlinks.json --domain shop.example
            """)

    @Argument(help: ArgumentHelp("The apple-app-site-association file to import.", valueName: "file"))
    var file: String

    @Option(help: ArgumentHelp("The domain the file is served on, e.g. shop.example.", valueName: "domain"))
    var domain: String

    @Flag(help: "Also turn on CMS signing for the domain (iOS 8; see docs/configuration.md).")
    var sign = false

    @OptionGroup var configOptions: ConfigOptions

    func run() throws {
        do {
            let outcome = try SiteImport(
                file: file, domain: domain.lowercased(), configDirectory: configOptions.config, sign: sign
            ).run()
            DiagnosticPrinter.print(outcome.diagnostics)
            if let android = outcome.config.android, outcome.imported == .assetLinks {
                let fingerprints = android.apps.reduce(0) { $0 + $1.fingerprints.count }
                print(
                    "\(outcome.updatedExisting ? "updated" : "wrote") \(outcome.writtenFile): \(android.apps.count) Android app\(android.apps.count == 1 ? "" : "s"), \(fingerprints) fingerprint\(fingerprints == 1 ? "" : "s")"
                )
                return
            }
            let apps = outcome.config.universalLinks?.apps ?? []
            let rules = apps.reduce(0) { $0 + $1.rules.count }
            print(
                "\(outcome.updatedExisting ? "updated" : "wrote") \(outcome.writtenFile): \(apps.count) app entr\(apps.count == 1 ? "y" : "ies"), \(rules) rule\(rules == 1 ? "" : "s")"
            )
        } catch {
            DiagnosticPrinter.print(error.diagnostics)
            DiagnosticPrinter.printError("import failed: nothing was written")
            throw ExitCode(2)
        }
    }
}
