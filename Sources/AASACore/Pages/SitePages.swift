/// One file of `pages/`, ready to serve: its bytes (as chunks around the banner's `app-argument` for HTML),
/// its type and when it last changed.
public struct PageFile: Sendable, Hashable {
    /// The URL path, decoded (`/about/index.html`).
    public var path: String
    /// `Content-Type`.
    public var contentType: String
    /// The content; static unless it is HTML with a per-request banner.
    public var page: SplicedPage
    /// Seconds since 1970 of the last change that affects the bytes (file, and for HTML site.json and icons).
    public var lastModified: Int
    /// A hash of the fixed content, the base of the `ETag`.
    public var contentTag: String
}

/// The fallback landing page for URLs an app claims that have no page, in both variants.
public struct LandingPage: Sendable, Hashable {
    /// With the Smart App Banner (and icons).
    public var withBanner: SplicedPage
    /// For paths excluded from the banner.
    public var withoutBanner: SplicedPage
    /// The buttons `{{appButtons}}` shows each visitor.
    public var buttons: AppButtons
    /// Seconds since 1970 of the newest of site.json, the template and the icons.
    public var lastModified: Int
}

/// What a domain serves besides its association file: the pages, the touch icons, the landing page.
/// Built once per load (``PageLoader``) and turned into routes by ``PageRoutes``.
public struct SitePages: Sendable, Hashable {
    /// Every servable file by decoded URL path.
    public var files: [String: PageFile]
    /// Touch icons, for the probe paths.
    public var icons: [TouchIcon]
    /// The banner, when the domain has one.
    public var banner: BannerConfig?
    /// The landing page, when enabled.
    public var landing: LandingPage?
    /// `Cache-Control` for everything here.
    public var cacheControl: String

    /// Creates the set.
    public init(
        files: [String: PageFile] = [:], icons: [TouchIcon] = [], banner: BannerConfig? = nil,
        landing: LandingPage? = nil, cacheControl: String = PagesConfig.defaultCacheControl
    ) {
        self.files = files
        self.icons = icons
        self.banner = banner
        self.landing = landing
        self.cacheControl = cacheControl
    }

    /// Whether the banner is left out of the page at `path` (decoded), by `smartAppBanner.exclude`.
    public func bannerExcluded(_ path: String) -> Bool {
        guard let banner else { return true }
        return banner.exclude.contains { Glob.matches($0, path) }
    }
}

/// `*` (any run of characters, `/` included) and `?` (one character) patterns for banner exclusions.
enum Glob {
    static func matches(_ pattern: String, _ text: String) -> Bool {
        let p = Array(pattern.unicodeScalars)
        let t = Array(text.unicodeScalars)
        var (pi, ti) = (0, 0)
        var star: (p: Int, t: Int)?
        while ti < t.count {
            if pi < p.count && (p[pi] == "?" || (p[pi] != "*" && p[pi] == t[ti])) {
                pi += 1
                ti += 1
            } else if pi < p.count && p[pi] == "*" {
                star = (pi, ti)
                pi += 1
            } else if let last = star {
                pi = last.p + 1
                ti = last.t + 1
                star = (last.p, last.t + 1)
            } else {
                return false
            }
        }
        while pi < p.count && p[pi] == "*" { pi += 1 }
        return pi == p.count
    }
}
