/// What a validation rule sees of one domain: its config and where each key is in `site.json`.
public struct SiteContext: Sendable {
    /// The domain (folder name).
    public var domain: String
    /// The decoded config.
    public var config: SiteConfig
    /// The source, when the config came from a file, for line and column.
    public var source: SourceText?
    /// The parsed document, when the config came from a file, to find the key a finding is about.
    public var root: JSONNode?

    /// Creates a context.
    public init(domain: String, config: SiteConfig, source: SourceText? = nil, root: JSONNode? = nil) {
        self.domain = domain
        self.config = config
        self.source = source
        self.root = root
    }

    /// A diagnostic located at the value of `path` in the source (or unlocated without one).
    public func diagnostic(
        _ severity: Diagnostic.Severity, rule: Rule, _ message: String, at path: KeyPath, hint: String? = nil
    ) -> Diagnostic {
        KeyPathLocator(source: source, root: root).diagnostic(severity, rule: rule, message, at: path, hint: hint)
    }
}

/// One semantic check of a site config. Adding a check is adding one type.
public protocol SiteRule: Sendable {
    /// Checks `site` and returns every finding.
    func check(_ site: SiteContext) -> [Diagnostic]
}

/// Runs a list of ``SiteRule``s.
public struct SiteConfigValidator: Sendable {
    /// The rules run, in order.
    public var rules: [any SiteRule]

    /// The rules every load runs.
    public static let standard = SiteConfigValidator(rules: [
        TestAppIDRule(), AppEntryRule(), VariableRule(), CacheControlRule(), HSTSRule(), SigningIdentityRule(),
        AndroidAppRule(), AndroidPatternLimitRule(),
        BannerRule(), BannerExcludeLimitRule(), PagesRule(), CredentialEndpointRule(), FallbackRule(),
    ])

    /// Creates a validator from rules.
    public init(rules: [any SiteRule]) {
        self.rules = rules
    }

    /// Every finding of every rule.
    public func validate(_ site: SiteContext) -> [Diagnostic] {
        rules.flatMap { $0.check(site) }
    }
}
