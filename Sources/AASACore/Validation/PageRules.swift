/// The Smart App Banner settings can be written into `content` safely (spec §5, §10.7 vector 109).
public struct BannerRule: SiteRule {
    /// Creates the rule.
    public init() {}

    /// Reports a non-numeric App Store ID, an unknown `app-clip-display`, an App Clip that the domain does
    /// not list, control characters, and unknown `appArgument` placeholders.
    public func check(_ site: SiteContext) -> [Diagnostic] {
        guard let banner = site.config.smartAppBanner else { return [] }
        let path = KeyPath.root.key("smartAppBanner")
        var found: [Diagnostic] = []
        func report(_ rule: Rule, _ message: String, _ key: String, _ hint: String) {
            found.append(site.diagnostic(.error, rule: rule, message, at: path.key(key), hint: hint))
        }
        let id = banner.appStoreID
        if id.isEmpty || id.utf8.count > 12 || !id.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            report(
                .bannerAppStoreID, "appStoreID '\(id)' is not an App Store ID (digits only)", "appStoreID",
                "use the digits after \"id\" in the app's App Store link, e.g. \"640199958\"")
        }
        if let display = banner.appClipDisplay, display != "card" {
            report(
                .bannerAppClip, "appClipDisplay '\(display)' is not supported; the only value is \"card\"",
                "appClipDisplay", "write \"card\" or leave it out")
        }
        if banner.appClipDisplay != nil && banner.appClipBundleID == nil {
            report(
                .bannerAppClip, "appClipDisplay needs appClipBundleID", "appClipDisplay",
                "add \"appClipBundleID\": \"com.example.app.Clip\"")
        }
        if let clip = banner.appClipBundleID {
            let listed = site.config.appClips.compactMap { id -> String? in
                guard let dot = id.firstIndex(of: ".") else { return nil }
                return String(id[id.index(after: dot)...])
            }
            if let dot = clip.firstIndex(of: "."), listed.contains(String(clip[clip.index(after: dot)...])),
                !listed.contains(clip)
            {
                report(
                    .bannerAppClip,
                    "appClipBundleID '\(clip)' has a team prefix; the banner takes the bundle ID only",
                    "appClipBundleID", "write \"\(clip[clip.index(after: dot)...])\"")
            } else if !listed.contains(clip) {
                let known =
                    listed.isEmpty ? "the domain lists no App Clips" : "listed: " + listed.joined(separator: ", ")
                report(
                    .bannerAppClip,
                    "appClipBundleID '\(clip)' is not the bundle ID of an App Clip in \"appClips\" (\(known))",
                    "appClipBundleID",
                    "add \"TEAMID.\(clip)\" to \"appClips\" (iOS shows the clip only for associated domains)")
            }
        }
        let texts: [(String, String?)] = [
            ("appClipBundleID", banner.appClipBundleID), ("affiliateData", banner.affiliateData),
            ("appArgument", { if case .template(let text) = banner.appArgument { text } else { nil } }()),
        ]
        for (key, text) in texts {
            guard let text else { continue }
            if text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
                report(
                    .bannerControlCharacter, "\(key) contains a control character or line break", key,
                    "remove it; the banner's content is one line")
            } else if text.isEmpty {
                report(.bannerEmpty, "\(key) is empty", key, "remove the key or give a value")
            }
        }
        if let clip = banner.appClipBundleID, !clip.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" })
        {
            report(
                .bannerAppClip, "appClipBundleID '\(clip)' is not a bundle ID (letters, digits, '.', '-')",
                "appClipBundleID", "e.g. \"com.example.shop.Clip\"")
        }
        if case .template(let template) = banner.appArgument {
            var rest = Substring(template)
            while let open = rest.firstIndex(of: "{") {
                guard let close = rest[open...].firstIndex(of: "}") else { break }
                let name = String(rest[open...close])
                if !BannerConfig.placeholders.contains(name) {
                    report(
                        .bannerAppArgument, "unknown placeholder \(name) in appArgument", "appArgument",
                        "use \(BannerConfig.placeholders.joined(separator: ", "))")
                }
                rest = rest[rest.index(after: close)...]
            }
        }
        for (index, pattern) in banner.exclude.enumerated() where !pattern.hasPrefix("/") && !pattern.hasPrefix("*") {
            found.append(
                site.diagnostic(
                    .error, rule: .bannerExclude, "exclusion '\(pattern)' is not a path",
                    at: path.key("exclude").index(index), hint: "write a path pattern such as \"/checkout/*\""))
        }
        return found
    }
}

/// The `pages` settings are usable: a one-line `cacheControl`, icon paths that are URL paths, a landing page
/// only with an App Store ID to link to.
public struct PagesRule: SiteRule {
    /// Creates the rule.
    public init() {}

    /// Reports bad values under `pages`.
    public func check(_ site: SiteContext) -> [Diagnostic] {
        let pages = site.config.pages
        let path = KeyPath.root.key("pages")
        var found: [Diagnostic] = []
        if let problem = CacheControlRule.problem(pages.cacheControl, key: "pages.cacheControl") {
            found.append(
                site.diagnostic(
                    .error, rule: .cacheControl, problem, at: path.key("cacheControl"), hint: "e.g. \"max-age=300\""))
        }
        for (index, icon) in (pages.touchIcons ?? []).enumerated() where !icon.hasPrefix("/") {
            found.append(
                site.diagnostic(
                    .error, rule: .touchIconMissing, "touch icon '\(icon)' is not a URL path",
                    at: path.key("touchIcons").index(index), hint: "write \"/\(icon)\""))
        }
        let landing = pages.landingPage
        let configured = landing != PagesConfig.LandingPage()
        if site.config.smartAppBanner == nil && configured && landing.enabled {
            found.append(
                site.diagnostic(
                    .error, rule: .landingPage, "the landing page needs smartAppBanner.appStoreID to link to",
                    at: path.key("landingPage"), hint: "add \"smartAppBanner\": {\"appStoreID\": \"…\"}"))
        }
        if let template = landing.template,
            template.isEmpty || template.hasPrefix("/")
                || template.split(separator: "/").contains(where: { $0 == ".." || $0 == "." })
        {
            found.append(
                site.diagnostic(
                    .error, rule: .landingTemplate, "the template path '\(template)' leaves the domain folder",
                    at: path.key("landingPage").key("template"),
                    hint: "give a path relative to the domain folder, e.g. \"pages/_landing.html\""))
        }
        for (key, text) in [("title", landing.title), ("image", landing.image)] {
            if let text, text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
                found.append(
                    site.diagnostic(
                        .error, rule: .landingPage, "landingPage.\(key) contains a control character or line break",
                        at: path.key("landingPage").key(key), hint: "keep it on one line"))
            }
        }
        return found
    }
}

extension Rule {
    /// Reported by `BannerRule`.
    public static let bannerAppStoreID = Rule(
        "banner-app-store-id", .error, "`smartAppBanner.appStoreID` is not digits.")

    /// Reported by `BannerRule`.
    public static let bannerAppClip = Rule(
        "banner-app-clip", .error,
        "`appClipBundleID` is not the bundle part of an App Clip in `appClips` (or has a team prefix), or `appClipDisplay` is not `\"card\"` or lacks `appClipBundleID`."
    )

    /// Reported by `BannerRule`.
    public static let bannerControlCharacter = Rule(
        "banner-control-character", .error, "A banner value with a control character or line break, or empty.")

    /// Reported by `BannerRule`.
    public static let bannerEmpty = Rule(
        "banner-empty", .error, "A banner value with a control character or line break, or empty.")

    /// Reported by `BannerRule`.
    public static let bannerAppArgument = Rule(
        "banner-app-argument", .error, "An `appArgument` placeholder other than `{url}`, `{path}`, `{query}`.")

    /// Reported by `BannerRule`.
    public static let bannerExclude = Rule("banner-exclude", .error, "An `exclude` entry that is not a path pattern.")

    /// Reported by `PagesRule`.
    public static let landingPage = Rule(
        "landing-page", .error,
        "A landing page without `smartAppBanner`, a control character in its title, a template path outside the domain folder, an unreadable template, or an unknown `{{placeholder}}`."
    )

    /// The rules of the smart app banner, the landing page, `pages/` and touch icons, in the order of the docs table:
    /// their part of `Rule.all`.
    package static let pageRules: [Rule] = [
        .bannerAppStoreID,
        .bannerAppClip,
        .bannerControlCharacter,
        .bannerEmpty,
        .bannerAppArgument,
        .bannerExclude,
        .landingPage,
        .landingTemplate,
        .pageTooLarge,
        .pagesTooLarge,
        .pageSymlink,
        .pageName,
        .touchIconMissing,
        .touchIconFormat,
        .touchIconSquare,
        .touchIconSize,
        .touchIcon180,
    ]
}
