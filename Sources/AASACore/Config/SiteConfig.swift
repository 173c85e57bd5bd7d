/// One domain's declarative configuration: `site-config/<domain>/site.json`.
///
/// It says which apps take which URLs in Apple's components model with web-developer names
/// (`path`, `query`, `fragment` instead of `/`, `?`, `#`); the generator turns it into Apple's file.
/// Every key is documented in `docs/configuration.md` and `docs/site.schema.json`.
public struct SiteConfig: Sendable, Hashable {
    /// Also emit the iOS 9–12 form (`apps: []`, `appID` + `paths`) in the same file. Default `true`.
    public var legacyFormat: Bool = true
    /// `Cache-Control` sent with the association file. Default `max-age=3600`.
    public var cacheControl: String = SiteConfig.defaultCacheControl
    /// Universal links (`applinks`); `nil` when the domain only uses other services.
    public var universalLinks: UniversalLinks?
    /// Apps allowed to use this domain's saved passwords and passkeys (`webcredentials`).
    public var webCredentials: [String] = []
    /// App Clips associated with this domain (`appclips`).
    public var appClips: [String] = []
    /// Apps that continue browsing activities from Safari (Handoff, `activitycontinuation`).
    public var handoff: [String] = []
    /// URLs whose outcome is asserted whenever the domain loads.
    public var tests: [LinkTest] = []
    /// CMS-signed file for iOS 8 (spec §4); `nil` or disabled: unsigned only.
    public var signing: SigningConfig?
    /// Android apps, served as `/.well-known/assetlinks.json` (spec §7); `nil`: no such file.
    public var android: AndroidConfig?
    /// The Smart App Banner injected into the domain's HTML pages; `nil`: no banner (see `BannerConfig`).
    public var smartAppBanner: BannerConfig?
    /// How `pages/` is served: cache header, touch icons, landing page (see `PagesConfig`).
    public var pages = PagesConfig()
    /// `Strict-Transport-Security` on the domain's HTTPS responses; `nil` or disabled: none (see `HSTSConfig`).
    public var hsts: HSTSConfig?

    /// The default `Cache-Control` value.
    public static let defaultCacheControl = "max-age=3600"

    /// Creates a config.
    public init(
        legacyFormat: Bool = true, cacheControl: String = SiteConfig.defaultCacheControl,
        universalLinks: UniversalLinks? = nil, webCredentials: [String] = [], appClips: [String] = [],
        handoff: [String] = [], tests: [LinkTest] = []
    ) {
        self.legacyFormat = legacyFormat
        self.cacheControl = cacheControl
        self.universalLinks = universalLinks
        self.webCredentials = webCredentials
        self.appClips = appClips
        self.handoff = handoff
        self.tests = tests
    }
}

/// The universal-links section of a site config.
public struct UniversalLinks: Sendable, Hashable {
    /// Matching defaults for every rule of the domain (Apple: `applinks.defaults`).
    public var defaults: MatchingDefaults?
    /// Named string lists usable as `$(name)` in patterns (Apple: `substitutionVariables`).
    public var variables: [SubstitutionVariable] = []
    /// Groups of apps with their rules, searched in order (Apple: `details`).
    public var apps: [AppRules] = []

    /// Creates the section.
    public init(defaults: MatchingDefaults? = nil, variables: [SubstitutionVariable] = [], apps: [AppRules] = []) {
        self.defaults = defaults
        self.variables = variables
        self.apps = apps
    }
}

/// Matching options that apply to every rule below the level where they are set.
public struct MatchingDefaults: Sendable, Hashable {
    /// Compare letters case-sensitively. Apple's default: `true`.
    public var caseSensitive: Bool?
    /// Patterns are written percent-encoded (ASCII). Apple's default: `true`.
    public var percentEncoded: Bool?

    /// Creates defaults.
    public init(caseSensitive: Bool? = nil, percentEncoded: Bool? = nil) {
        self.caseSensitive = caseSensitive
        self.percentEncoded = percentEncoded
    }

    /// As Apple's `defaults` dictionary.
    public var component: ComponentPattern {
        ComponentPattern(caseSensitive: caseSensitive, percentEncoded: percentEncoded)
    }
}

/// One or more apps (same team's `TEAMID.bundle.id`) and the rules deciding which URLs they open.
public struct AppRules: Sendable, Hashable {
    /// `TEAMID.bundle.id` of each app sharing these rules.
    public var appIDs: [String]
    /// Matching defaults for these rules (Apple: `details[].defaults`).
    public var defaults: MatchingDefaults?
    /// Rules tried top to bottom; the first that matches decides (Apple: `components`).
    public var rules: [ComponentPattern]
    /// Exact legacy `paths` to emit instead of deriving them from `rules` (used by `import` to keep
    /// a hand-written legacy list).
    public var legacyPaths: [String]?

    /// Creates a group.
    public init(
        appIDs: [String], defaults: MatchingDefaults? = nil, rules: [ComponentPattern], legacyPaths: [String]? = nil
    ) {
        self.appIDs = appIDs
        self.defaults = defaults
        self.rules = rules
        self.legacyPaths = legacyPaths
    }
}

/// A URL whose outcome must hold every time the domain loads.
public struct LinkTest: Sendable, Hashable {
    /// What the URL must do.
    public enum Expectation: Sendable, Hashable {
        /// The URL must open this app.
        case opensApp(String)
        /// The URL must not open any app.
        case staysOnWeb
    }

    /// The full URL, e.g. `https://shop.example/buy/1`.
    public var url: String
    /// The expected outcome.
    public var expectation: Expectation
    /// Byte offset of the test in site.json, for diagnostics.
    public var offset: Int = 0

    /// Creates a test.
    public init(url: String, expectation: Expectation, offset: Int = 0) {
        self.url = url
        self.expectation = expectation
        self.offset = offset
    }
}
