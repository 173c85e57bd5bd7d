public import AASACore
import Foundation

/// `aasa-server import`: reads an existing Apple file and writes `<config>/<domain>/site.json`.
///
/// Nothing is written unless the whole import succeeds; an existing site.json keeps every setting
/// that is not an Apple service.
public struct SiteImport: Sendable {
    /// What an import did.
    public struct Outcome: Sendable {
        /// The site.json written.
        public var writtenFile: String
        /// Warnings found on the way.
        public var diagnostics: [Diagnostic]
        /// The imported config.
        public var config: SiteConfig
        /// Whether an existing site.json was updated rather than created.
        public var updatedExisting: Bool
        /// What kind of file was imported.
        public var imported: Kind = .association
    }

    /// The kinds of file `import` reads, told apart by content.
    public enum Kind: Sendable {
        /// Apple's apple-app-site-association.
        case association
        /// Android's assetlinks.json.
        case assetLinks
        /// A passkey endpoints document (what `/.well-known/passkey-endpoints` serves).
        case passkeyEndpoints
    }

    /// The file to import.
    public var file: String
    /// The domain it is for.
    public var domain: String
    /// The config folder holding `<domain>/site.json`.
    public var configDirectory: String
    /// Also turn signing on for the domain (`import --sign`).
    public var sign: Bool
    /// When set, the domain's pages get a Smart App Banner for this App Store ID.
    public var appStoreID: String?
    /// When set (`import --site`), the origin whose `/.well-known/passkey-endpoints` and
    /// `/.well-known/change-password` are read into `passkeys` and `changePassword` (``EndpointsFetch``).
    public var site: String?
    /// With ``site``, a PEM file of the only certificates to trust (`--cacert`).
    public var trustAnchors: String?

    /// Creates an import.
    public init(file: String, domain: String, configDirectory: String, sign: Bool = false, appStoreID: String? = nil) {
        self.file = file
        self.domain = domain
        self.configDirectory = configDirectory
        self.sign = sign
        self.appStoreID = appStoreID
    }

    /// Runs the import, or throws every reason it cannot be done.
    public func run() throws(DiagnosticsError) -> Outcome {
        if let problem = SiteConfigLoader.domainNameProblem(domain) {
            throw DiagnosticsError([Diagnostic(.error, rule: .domainName, problem.message, hint: problem.hint)])
        }
        guard let data = FileManager.default.contents(atPath: file) else {
            throw DiagnosticsError([
                Diagnostic(
                    .error, rule: .missingFile, "cannot read '\(file)'", file: file,
                    hint: "check the path and permissions")
            ])
        }
        let folder = (configDirectory as NSString).appendingPathComponent(domain)
        let target = (folder as NSString).appendingPathComponent(SiteConfigLoader.fileName)
        var existing: SiteConfig?
        if FileManager.default.fileExists(atPath: target) {
            let loaded = SiteConfigLoader().loadDomain(domain: domain, file: target)
            guard let config = loaded.config, !loaded.diagnostics.hasErrors else {
                throw DiagnosticsError(
                    loaded.diagnostics.errors + [
                        Diagnostic(
                            .error, rule: .existingConfig,
                            "the existing \(target) has errors; fix them before importing into it",
                            file: target)
                    ])
            }
            existing = config
        }
        let source = SourceText(name: file, bytes: Array(data))
        // The kind is decided by content: a JSON array is Android's statement list (spec §7); an object of the
        // passkey draft's members and no Apple service is a passkey endpoints document.
        let kind: Kind =
            AssetLinksImporter.looksLikeAssetLinks(source)
            ? .assetLinks : EndpointsImporter.looksLikePasskeyEndpoints(source) ? .passkeyEndpoints : .association
        var output: ImportPipeline.Output
        switch kind {
        case .assetLinks: output = AssetLinksImportPipeline().run(source, domain: domain, existing: existing)
        case .association:
            output = ImportPipeline().run(source, domain: domain, existing: existing, appStoreID: appStoreID)
        case .passkeyEndpoints:
            let read = EndpointsImporter().passkeys(source)
            output = ImportPipeline.Output(diagnostics: read.diagnostics)
            if let passkeys = read.passkeys, !read.diagnostics.hasErrors {
                var config = existing ?? SiteConfig()
                config.passkeys = passkeys
                output.config = config
            }
        }
        guard var config = output.config else { throw DiagnosticsError(output.diagnostics) }
        if sign {
            var signing = config.signing ?? SigningConfig()
            signing.enabled = true
            config.signing = signing
        }
        if let site {
            let fetched = EndpointsFetch(site: site, domain: domain, trustAnchors: trustAnchors).run()
            output.diagnostics += fetched.diagnostics
            guard !fetched.diagnostics.hasErrors else { throw DiagnosticsError(output.diagnostics) }
            if let passkeys = fetched.passkeys { config.passkeys = passkeys }
            if let changePassword = fetched.changePassword { config.changePassword = changePassword }
        }
        if kind == .passkeyEndpoints || site != nil {
            // The endpoints' own checks on what is written (`passkeys` without `webCredentials`, a host elsewhere),
            // as the server will run them on the first load; a finding the import's own load already reported (on
            // what the domain had) is said once.
            let found = CredentialEndpointRule().check(SiteContext(domain: domain, config: config)).filter { finding in
                !output.diagnostics.contains { $0.rule == finding.rule && $0.message == finding.message }
            }
            output.diagnostics += found.map { finding in
                var finding = finding
                finding.file = target
                return finding
            }
            guard !found.hasErrors else { throw DiagnosticsError(output.diagnostics) }
        }

        // $schema is relative to the domain folder, so it only works when the docs are where we expect.
        let schemaCandidate = "../../docs/site.schema.json"
        let schemaPath = (folder as NSString).appendingPathComponent(schemaCandidate)
        let schema = FileManager.default.fileExists(atPath: schemaPath) ? schemaCandidate : nil
        let bytes = JSONWriter(style: .pretty).bytes(config.jsonValue(schema: schema))
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            // Whole or not at all, so a watcher never reads half a file.
            try AtomicFile.write(bytes, to: target)
        } catch let error as AtomicFile.Failure {
            throw DiagnosticsError([
                Diagnostic(.error, rule: .writeFailed, "cannot write \(target): \(error)", file: target)
            ])
        } catch {
            throw DiagnosticsError([
                Diagnostic(
                    .error, rule: .writeFailed, "cannot write \(target): \(error.localizedDescription)", file: target)
            ])
        }
        return Outcome(
            writtenFile: target, diagnostics: output.diagnostics, config: config, updatedExisting: existing != nil,
            imported: kind)
    }
}

extension Rule {
    /// Reported by `SiteImport`.
    public static let existingConfig = Rule(
        "existing-config", .error, "`import` into a domain whose existing `site.json` has errors; fix them first.")

    /// Reported by `SiteImport`; also by `FileSigning`.
    public static let writeFailed = Rule(
        "write-failed", .error, "A tool could not write its output file (`import`, `sign --out`); nothing was replaced."
    )

    /// The rules of writing what `import` and `sign --out` made, in the order of the docs table: their part of
    /// `Rule.all`.
    package static let importRules: [Rule] = [
        .existingConfig,
        .writeFailed,
    ]
}
