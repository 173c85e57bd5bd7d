import AASACore
import AASAServer
import ArgumentParser

/// `aasa-server import FILE --domain D`: turns an existing Apple file into a site.json.
struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Import an existing apple-app-site-association file into <config>/<domain>/site.json.",
        discussion: """
            Reads legacy paths (with NOT), the iOS 9 dictionary form, modern components and all four \
            services. Nothing is written when the file has errors. Importing into an existing domain \
            replaces only its Apple services and keeps every other setting.

            An Android assetlinks.json (a JSON array) is recognised by its content and replaces only the \
            domain's android section; so is a passkey endpoints document (a JSON object with enroll, manage or \
            prfUsageDetails), which replaces only its passkeys section. With --site, the live site's \
            /.well-known/passkey-endpoints and /.well-known/change-password are read too (HTTPS, certificates \
            verified, no redirect followed) and kept as passkeys and changePassword; what cannot be represented \
            is named (endpoints-import), and an answer that cannot be read writes nothing (endpoints-fetch). With --app-store-id, every HTML page of the domain \
            (site-config/<domain>/pages/) and the landing page for URLs the app claims get a Smart App Banner.

            Examples:
              aasa-server import apple-app-site-association --domain shop.example --sign
              aasa-server import apple-app-site-association --domain shop.example --app-store-id 640199958
              aasa-server import assetlinks.json --domain shop.example
              aasa-server import apple-app-site-association --domain shop.example --site https://shop.example
            """)

    @Argument(help: ArgumentHelp("The apple-app-site-association file to import.", valueName: "file"))
    var file: String

    @Option(help: ArgumentHelp("The domain the file is served on, e.g. shop.example.", valueName: "domain"))
    var domain: String

    @Flag(help: "Also turn on CMS signing for the domain (iOS 8; see docs/configuration.md).")
    var sign = false

    @Option(
        name: .customLong("app-store-id"),
        help: ArgumentHelp("Set up the Smart App Banner for this App Store ID (digits).", valueName: "id"))
    var appStoreID: String?

    @Option(
        help: ArgumentHelp(
            "Also read the site's /.well-known/passkey-endpoints and /.well-known/change-password from this origin.",
            valueName: "url"))
    var site: String?

    @Option(help: ArgumentHelp("With --site, trust only the certificates in this PEM file.", valueName: "file"))
    var cacert: String?

    @OptionGroup var configOptions: ConfigOptions

    func validate() throws {
        // An origin: the well-known paths are appended to it, so a path, query or fragment would change what is read.
        if let site,
            (try? CredentialURL(site)).map({ $0.path == "/" && !site.contains("?") && !site.contains("#") }) != true
        {
            throw ValidationError("--site '\(site)' is not an https origin: write e.g. https://shop.example")
        }
        if cacert != nil && site == nil { throw ValidationError("--cacert is only used with --site") }
        if let appStoreID, appStoreID.isEmpty || !appStoreID.allSatisfy({ $0.isASCII && $0.isNumber }) {
            throw ValidationError(
                "--app-store-id '\(appStoreID)' is not an App Store ID: use the digits after 'id' in the app's App Store link"
            )
        }
    }

    func run() throws {
        do {
            var siteImport = SiteImport(
                file: file, domain: domain.lowercased(), configDirectory: configOptions.config, sign: sign,
                appStoreID: appStoreID)
            siteImport.site = site
            siteImport.trustAnchors = cacert
            let outcome = try siteImport.run()
            DiagnosticPrinter.print(outcome.diagnostics)
            if let appStoreID {
                print(
                    "smart app banner: app-id=\(appStoreID) on every HTML page of \(configOptions.config)/\(domain.lowercased())/pages/ and on the landing page"
                )
            }
            if let android = outcome.config.android, outcome.imported == .assetLinks {
                let fingerprints = android.apps.reduce(0) { $0 + $1.fingerprints.count }
                print(
                    "\(outcome.updatedExisting ? "updated" : "wrote") \(outcome.writtenFile): \(android.apps.count) Android app\(android.apps.count == 1 ? "" : "s"), \(fingerprints) fingerprint\(fingerprints == 1 ? "" : "s")"
                )
                return
            }
            if let endpoints = CredentialEndpoints(outcome.config), site != nil || outcome.imported == .passkeyEndpoints
            {
                let settings = endpoints.settings.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
                print("credential endpoints: " + settings.joined(separator: ", "))
            }
            if outcome.imported == .passkeyEndpoints {
                print("\(outcome.updatedExisting ? "updated" : "wrote") \(outcome.writtenFile): passkeys")
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
