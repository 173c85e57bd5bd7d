public import AASACore

/// The catalogue: every rule, joined from the lists of the areas that declare them.
///
/// It is assembled here because AASAServer is the module that sees every check: the ones in AASACore and its own
/// (certificates, signing, `import`'s writes, `serve`). The areas follow one another as the rows of the table in
/// docs/configuration.md#errors-and-warnings do.
extension Rule {
    /// Every rule, in the docs table's order.
    public static let all: [Rule] =
        folderRules + startRules + jsonRules + siteKeyRules + siteMeaningRules + generationRules + patternRules
        + linkRules + pageRules + certificateRules + signingRules + androidAppRules + appleFileRules + importRules
        + hstsRules + credentialEndpointRules + fallbackRules + serveRules + assetLinksImportRules
        + endpointsImportRules
        + endpointsFetchRules

    /// The rule with `id`, or `nil` when no rule has it.
    public static func named(_ id: String) -> Rule? { byID[id] }

    private static let byID = Dictionary(uniqueKeysWithValues: all.map { ($0.id, $0) })
}
