/// What a validation rule sees of one domain: its config and where each key is in `site.json`.
public struct SiteContext: Sendable {
    /// The domain (folder name).
    public var domain: String
    /// The decoded config, lent in place: every check reads a few of its parts, and a copy of the whole (about
    /// twenty references to retain and release) for each would cost more than the check.
    public var config: SiteConfig {
        _read { yield configStorage.value }
    }
    /// Where ``config`` is held: the loader keeps this same box as the domain's result.
    let configStorage: OutOfLine<SiteConfig>
    /// The source, when the config came from a file, for line and column.
    public var source: SourceText?
    /// The parsed document, when the config came from a file, to find the key a finding is about.
    public var root: JSONNode?

    /// Creates a context.
    public init(domain: String, config: consuming SiteConfig, source: SourceText? = nil, root: JSONNode? = nil) {
        self.init(domain: domain, configStorage: OutOfLine(config), source: source, root: root)
    }

    /// Creates a context reading the config in `configStorage`.
    init(domain: String, configStorage: OutOfLine<SiteConfig>, source: SourceText?, root: JSONNode?) {
        self.domain = domain
        self.configStorage = configStorage
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
