/// The Smart App Banner of a domain's pages (spec §5): `"smartAppBanner"` in `site.json`.
///
/// Every HTML page served from `pages/` (and the fallback landing page) gets
/// `<meta name="apple-itunes-app" content="app-id=…, app-argument=…">` in its `<head>`.
public struct BannerConfig: Sendable, Hashable {
    /// What the banner passes to the app as `app-argument`.
    public enum AppArgument: Sendable, Hashable {
        /// The full URL of the page as requested, query included (the default).
        case requestURL
        /// A template with `{url}`, `{path}` and `{query}` placeholders, e.g. `shopapp://open{path}`.
        case template(String)
        /// No `app-argument`.
        case off
    }

    /// The numeric App Store ID (the digits after `id` in `https://apps.apple.com/app/id…`).
    public var appStoreID: String
    /// What `app-argument` says.
    public var appArgument: AppArgument = .requestURL
    /// Optional iTunes affiliate string (`affiliate-data`, spec §5: legacy, passed through).
    public var affiliateData: String?
    /// Bundle ID of an App Clip (no team prefix) that the banner can launch (`app-clip-bundle-id`).
    public var appClipBundleID: String?
    /// `"card"` shows the App Clip card (`app-clip-display`, iOS 15+).
    public var appClipDisplay: String?
    /// Page paths (`*` and `?` wildcards) that get no banner.
    public var exclude: [String] = []

    /// The placeholders an `appArgument` template may use.
    public static let placeholders = ["{url}", "{path}", "{query}"]

    /// Creates a banner config.
    public init(
        appStoreID: String, appArgument: AppArgument = .requestURL, affiliateData: String? = nil,
        appClipBundleID: String? = nil, appClipDisplay: String? = nil, exclude: [String] = []
    ) {
        self.appStoreID = appStoreID
        self.appArgument = appArgument
        self.affiliateData = affiliateData
        self.appClipBundleID = appClipBundleID
        self.appClipDisplay = appClipDisplay
        self.exclude = exclude
    }

    /// The App Store page of the app.
    public var appStoreURL: String { "https://apps.apple.com/app/id" + appStoreID }
}

extension BannerConfig {
    static let keys = [
        "appStoreID", "appArgument", "affiliateData", "appClipBundleID", "appClipDisplay", "exclude", "comment",
    ]

    /// Decodes `"smartAppBanner"`; problems are reported to `reader`.
    static func read(_ node: JSONNode, path: @autoclosure () -> KeyPath, reader: JSONReader) -> BannerConfig? {
        guard let object = reader.object(node, path: path(), known: keys) else { return nil }
        guard let idMember = object["appStoreID"] else {
            reader.report(
                .error, rule: .missingKey, "the banner has no \"appStoreID\"", at: node.offset, path: path(),
                hint: "add \"appStoreID\": \"123456789\" (the digits after id in the app's App Store link)")
            return nil
        }
        guard let appStoreID = reader.string(idMember.value, path: path().key("appStoreID")) else { return nil }
        var banner = BannerConfig(appStoreID: appStoreID)
        if let member = object["appArgument"] {
            switch member.value.value {
            case .string(let template): banner.appArgument = .template(template)
            case .bool(let on): banner.appArgument = on ? .requestURL : .off
            default:
                reader.report(
                    .error, rule: .wrongType, "expected a string or a boolean, found \(member.value.value.typeName)",
                    at: member.value.offset, path: path().key("appArgument"),
                    hint:
                        "leave it out for the page's URL, write a template such as \"shopapp://open{path}\", or false"
                )
            }
        }
        for (key, keyPath) in [
            ("affiliateData", \BannerConfig.affiliateData), ("appClipBundleID", \.appClipBundleID),
            ("appClipDisplay", \.appClipDisplay),
        ] {
            if let member = object[key], let value = reader.string(member.value, path: path().key(key)) {
                banner[keyPath: keyPath] = value
            }
        }
        if let member = object["exclude"], let list = reader.strings(member.value, path: path().key("exclude")) {
            banner.exclude = list
        }
        return banner
    }

    /// The banner as `site.json` content, omitting defaults.
    var jsonValue: JSONValue {
        var pairs: [(String, JSONValue)] = [("appStoreID", .string(appStoreID))]
        switch appArgument {
        case .requestURL: break
        case .template(let template): pairs.append(("appArgument", .string(template)))
        case .off: pairs.append(("appArgument", .bool(false)))
        }
        if let affiliateData { pairs.append(("affiliateData", .string(affiliateData))) }
        if let appClipBundleID { pairs.append(("appClipBundleID", .string(appClipBundleID))) }
        if let appClipDisplay { pairs.append(("appClipDisplay", .string(appClipDisplay))) }
        if !exclude.isEmpty { pairs.append(("exclude", .strings(exclude))) }
        return .members(pairs)
    }
}
