import AASACore

/// The `assetlinks` target: the bytes of someone's `assetlinks.json`, imported as `aasa-server import` does.
///
/// Properties checked beyond "no crash, no hang":
/// - every finding points at a line and column of the file;
/// - the `assetlinks.json` the imported config serves imports back to the same android section.
enum AssetLinksHarness {
    static func run(_ bytes: [UInt8]) throws(InvariantViolation) {
        let source = SourceText(name: "assetlinks.json", bytes: bytes)
        // `import` decides by content which importer runs.
        _ = AssetLinksImporter.looksLikeAssetLinks(source)
        let output = AssetLinksImportPipeline().run(source, domain: SiteConfigHarness.domain, existing: nil)
        try DiagnosticLocations.check(output.diagnostics, in: source, target: .assetLinks)
        guard let config = output.config, let android = config.android else { return }
        let written = JSONWriter(style: .pretty).bytes(config.jsonValue(schema: nil))
        let loaded = SiteConfigLoader().loadDomain(
            domain: SiteConfigHarness.domain, source: SourceText(name: "site.json", bytes: written))
        guard let served = loaded.assetLinks?.bytes else {
            throw InvariantViolation(.assetLinks, "the imported config serves no assetlinks.json")
        }
        let again = AssetLinksImporter().run(
            SourceText(name: "served.json", bytes: served), webCredentials: !config.webCredentials.isEmpty)
        guard again.android == android else {
            throw InvariantViolation(
                .assetLinks,
                "the served assetlinks.json imports as a different android section:\n\(String(decoding: served, as: UTF8.self))\n\(again.diagnostics.map(String.init(describing:)).joined(separator: "\n"))"
            )
        }
    }
}
