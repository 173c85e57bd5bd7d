/// One version of a domain, as the semantic diff compares it: the Apple file it serves, its assetlinks.json,
/// where its rules are written, and the serving settings that matter to clients.
public struct DiffSide: Sendable, Equatable {
    /// The association file served (generated from a site.json, or an Apple-format file as read).
    public var file: AssociationFile
    /// For a generated file, the site.json app each details entry comes from (``AssociationGenerator/Output``),
    /// so rules are named in site.json terms.
    public var detailsSource: [Int?]?
    /// The assetlinks.json served, if any.
    public var assetLinks: JSONValue?
    /// The site.json's Android apps, to name dynamic rules in site.json terms.
    public var androidApps: [AndroidApp]
    /// Serving settings that change what clients get: `legacy form`, `signing`, `cacheControl`.
    public var settings: [String: String]
    /// The credential endpoints' URLs by site.json key (``CredentialEndpoints/settings``), each absent where not
    /// served; `nil` for a side that cannot know them (an Apple-format file).
    public var endpoints: [String: String]?

    /// A side from parts.
    public init(
        file: AssociationFile, detailsSource: [Int?]? = nil, assetLinks: JSONValue? = nil,
        androidApps: [AndroidApp] = [], settings: [String: String] = [:]
    ) {
        self.file = file
        self.detailsSource = detailsSource
        self.assetLinks = assetLinks
        self.androidApps = androidApps
        self.settings = settings
    }

    /// An Apple-format file as iOS reads it (spec §9), with the one setting it shows: whether it has entries
    /// for iOS 9-12.
    public init(appleFile file: AssociationFile) {
        self.init(file: file, settings: Self.settings(file))
    }

    /// What a loaded domain generates, or `nil` when it does not (its diagnostics say why). A domain whose only
    /// errors are failing link tests (``Rule/testURL``) is compared: what its rules do is what a reviewer asks.
    public init?(loaded domain: LoadedDomain) {
        guard let generated = domain.generated,
            domain.diagnostics.errors.allSatisfy({ $0.rule == .testURL || $0.rule == .testExpectation })
        else { return nil }
        self.init(
            file: generated.file, detailsSource: generated.detailsSource,
            assetLinks: domain.assetLinks.flatMap { JSONValue.parse($0.bytes) },
            androidApps: domain.config?.android?.apps ?? [],
            settings: Self.settings(
                generated.file, signing: domain.config.map { $0.signing?.enabled == true },
                cacheControl: domain.config?.cacheControl))
        endpoints = domain.config.map { CredentialEndpoints($0)?.settings ?? [:] }
    }

    /// What a published version serves (the server's previous and new versions of a domain). Its Android rules
    /// are named by `dynamic_app_link_components[n]`: a server keeps no android config between loads.
    public init(published domain: PublishedDomain) {
        let file = domain.file
        self.init(
            file: file, detailsSource: domain.detailsSource, assetLinks: domain.assetLinks.flatMap(JSONValue.parse),
            settings: Self.settings(
                file, signing: domain.signedAssociationFile != nil, cacheControl: domain.cacheControl))
        endpoints = domain.credentialEndpoints?.settings ?? [:]
    }

    /// The serving settings a side knows: the legacy form always, signing and `Cache-Control` for a config.
    private static func settings(_ file: AssociationFile, signing: Bool? = nil, cacheControl: String? = nil)
        -> [String: String]
    {
        var settings = ["legacy form": file.hasLegacyEntries ? "on" : "off"]
        if let signing { settings["signing"] = signing ? "on" : "off" }
        if let cacheControl { settings["cacheControl"] = cacheControl }
        return settings
    }

    /// Where `rule` is written, in site.json terms when this side comes from one.
    func reference(_ rule: DecisionRule, package: String?) -> RuleReference {
        if let package {
            if let index = androidApps.firstIndex(where: { $0.package == package }) {
                let app = androidApps[index]
                if app.rules != nil {
                    return RuleReference(
                        location: "android.apps[\(index)].rules[\(rule.ruleIndex)] (\(rule.location))", text: rule.text)
                }
                if let from = app.rulesFrom {
                    return RuleReference(
                        location: "android.apps[\(index)].rulesFrom \(from) (\(rule.location))", text: rule.text)
                }
            }
            return RuleReference(location: rule.location, text: rule.text)
        }
        if let detailsSource, let details = rule.detailsIndex, let kind = rule.kind {
            let path = KeyPath.root.key("applinks").key("details").index(details)
                .key(kind == .path ? "paths" : "components").index(rule.ruleIndex)
            if let site = SiteKeyMapping.sitePath(for: path, detailsSource: detailsSource) {
                let name = kind == .path ? "\(site) (\(rule.location), legacy)" : "\(site) (\(rule.location))"
                return RuleReference(location: name, text: rule.text)
            }
        }
        return RuleReference(location: rule.location, text: rule.text)
    }
}
