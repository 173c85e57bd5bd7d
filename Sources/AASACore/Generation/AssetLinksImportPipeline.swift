/// Imports an `assetlinks.json` into a domain: only its android section changes; every other setting of
/// an existing config is kept (as importing an Apple file keeps the android section).
public struct AssetLinksImportPipeline: Sendable {
    /// Creates a pipeline.
    public init() {}

    /// Imports `source` for `domain`, validating the resulting config as the server would load it.
    public func run(_ source: SourceText, domain: String, existing: SiteConfig?) -> ImportPipeline.Output {
        var config = existing ?? SiteConfig()
        let imported = AssetLinksImporter().run(source, webCredentials: !config.webCredentials.isEmpty)
        var output = ImportPipeline.Output(diagnostics: imported.diagnostics)
        guard let android = imported.android else { return output }
        config.android = android
        let rendered = JSONWriter(style: .pretty).bytes(config.jsonValue(schema: nil))
        let loaded = SiteConfigLoader().loadDomain(
            domain: domain,
            source: SourceText(
                name: "\(domain)/\(SiteConfigLoader.fileName) (imported from \(source.name))", bytes: rendered))
        output.diagnostics += loaded.diagnostics
        guard !output.diagnostics.hasErrors else { return output }
        output.config = config
        output.generated = loaded.generated
        return output
    }
}
