import AASACore

/// Files and helpers shared by the matcher tests (spec §10: app `ABCDE12345.com.example.app`, host
/// `example.com`, scheme `https`).
enum MatcherFixtures {
    static let app = "ABCDE12345.com.example.app"
    static let otherApp = "ABCDE12345.com.example.other"

    /// A file with one details entry for ``app``.
    static func file(
        _ components: [ComponentPattern]? = nil, paths: [String]? = nil, appDefaults: ComponentPattern? = nil,
        domainDefaults: ComponentPattern? = nil, variables: [SubstitutionVariable] = []
    ) -> AssociationFile {
        AssociationFile(
            applinks: AppLinks(
                details: [
                    AppLinkDetails(appIDs: [app], components: components, paths: paths, defaults: appDefaults)
                ],
                defaults: domainDefaults, substitutionVariables: variables))
    }

    /// `https://example.com` + `suffix`.
    static func url(_ suffix: String) -> String {
        "https://example.com" + suffix
    }

    /// Matches `suffix` against a single-path-component file.
    static func verdict(pattern: String, path: String, caseSensitive: Bool? = nil, percentEncoded: Bool? = nil)
        -> MatchResult.Verdict
    {
        let matcher = URLMatcher(
            file: file([ComponentPattern(path: pattern, caseSensitive: caseSensitive, percentEncoded: percentEncoded)]))
        return matcher.match(url(path)).verdict
    }
}
