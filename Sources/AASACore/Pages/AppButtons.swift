/// The landing page's buttons (`{{appButtons}}`), per visitor: where a phone that did not open the app goes next,
/// from the domain's `fallback`, App Store app, App Clip and Android app.
///
/// - An iPhone: the App Store, the web or the configured page (`fallback.ios`), then the App Clip when there is one.
/// - An Android phone: "Open in the app", an `intent:` link to the app that Chrome opens it with when it is
///   installed and otherwise sends to the fallback (`fallback.android`: Google Play, the web or the page), then the
///   fallback itself.
/// - Anyone else (a desktop, a crawler): the App Store and Google Play.
public struct AppButtons: Sendable, Hashable {
    /// The domain, for the web fallback `https://<domain>/`.
    public var domain: String
    /// The App Store page of the app.
    public var appStoreURL: String
    /// The App Clip's bundle ID, when the domain has an App Clip.
    public var appClipBundleID: String?
    /// The package of the Android app that opens the domain's links, if any.
    public var androidPackage: String?
    /// Where an iPhone's button leads.
    public var ios: AppFallback.Target
    /// Where an Android phone's fallback leads (never ``AppFallback/Target/store`` without ``androidPackage``).
    public var android: AppFallback.Target

    /// The element's `id`.
    public static let elementID = "app-buttons"

    /// The buttons of `config`'s landing page for `domain`, whose banner is `banner`. A fallback URL that is not
    /// served (`fallback-url`) leaves the default in its place; Google Play without an Android app is the web.
    public init(domain: String, config: SiteConfig, banner: BannerConfig) {
        self.domain = domain
        appStoreURL = banner.appStoreURL
        appClipBundleID = banner.appClipBundleID ?? config.appClips.first.flatMap(Self.bundleID)
        androidPackage = Self.androidPackage(config)
        ios = Self.served(config.fallback?.ios) ?? .store
        let android = Self.served(config.fallback?.android) ?? .store
        self.android = android == .store && androidPackage == nil ? .web : android
    }

    /// The package of the first Android app that opens the domain's links (`appLinks`), when it is a package name
    /// (`android-package`), which an intent's syntax can hold as it is.
    public static func androidPackage(_ config: SiteConfig) -> String? {
        config.android?.apps.first { $0.appLinks && AndroidAppRule.packageProblem($0.package) == nil }?.package
    }

    /// The Google Play page of `package`.
    public static func playURL(_ package: String) -> String {
        "https://play.google.com/store/apps/details?id=" + package
    }

    /// Apple's default App Clip link for `bundleID`: it opens the App Clip's card.
    public static func appClipURL(_ bundleID: String) -> String {
        "https://appclip.apple.com/id?p=" + String(decoding: URLText.encodeComponent(bundleID.utf8), as: UTF8.self)
    }

    /// The buttons for `visitor` on the page at `request`'s URL.
    public func block(for visitor: Visitor, request: PageRequest) -> [UInt8] {
        var buttons: [(kind: String, href: [UInt8], label: String)] = []
        var note: String?
        switch visitor.platform {
        case .iOS:
            buttons.append(button(ios, store: ("app-store", appStoreURL, "Get it on the App Store")))
            if let appClipBundleID {
                buttons.append(("app-clip", Array(Self.appClipURL(appClipBundleID).utf8), "Open the App Clip"))
            }
            note =
                visitor.inAppBrowser == nil
                ? "Already have the app? Tap Open in the banner above."
                : "Already have the app? Open this page in Safari, then tap Open in the banner."
        case .android:
            let fallback = button(
                android, store: ("play", androidPackage.map(Self.playURL) ?? "", "Get it on Google Play"))
            if let androidPackage {
                let url = URLText.encode(request.url, encodeCommas: false)
                buttons.append(
                    (
                        "app", IntentURL.make(pageURL: url, package: androidPackage, fallback: fallback.href),
                        "Open in the app"
                    ))
            }
            buttons.append(fallback)
        case .desktop, .other:
            buttons.append(("app-store", Array(appStoreURL.utf8), "Get it on the App Store"))
            if let androidPackage {
                buttons.append(("play", Array(Self.playURL(androidPackage).utf8), "Get it on Google Play"))
            }
        }
        var html =
            "<nav id=\"\(Self.elementID)\" style=\"display:flex;flex-direction:column;align-items:center;gap:.75rem\">"
        for (index, button) in buttons.enumerated() {
            html +=
                "<a data-button=\"" + button.kind + "\" href=\""
                + String(decoding: HTMLEscape.escape(button.href), as: UTF8.self) + "\" style=\""
                + (index == 0 ? Self.primaryStyle : Self.secondaryStyle) + "\">" + HTMLEscape.escape(button.label)
                + "</a>"
        }
        if let note { html += "<small style=\"display:block;color:#6e6e73\">" + HTMLEscape.escape(note) + "</small>" }
        return Array((html + "</nav>").utf8)
    }

    /// The buttons of a visitor that is neither an iPhone nor an Android phone: the same for every URL.
    public var everyone: [UInt8] {
        block(for: .other, request: PageRequest(domain: domain, path: [], query: nil))
    }

    /// The button of `target`, `store` being the store's.
    private func button(_ target: AppFallback.Target, store: (kind: String, url: String, label: String)) -> (
        kind: String, href: [UInt8], label: String
    ) {
        switch target {
        case .store: (store.kind, Array(store.url.utf8), store.label)
        case .web: ("web", Array("https://\(domain)/".utf8), "Continue to \(domain)")
        case .url(let url): ("web", URLText.encode(url.utf8, encodeCommas: false), "Continue on the web")
        }
    }

    private static func served(_ target: AppFallback.Target?) -> AppFallback.Target? {
        if case .url(let url) = target, (try? CredentialURL(url)) == nil { return nil }
        return target
    }

    /// The bundle ID of an `appClips` entry `TEAMID.bundle.id`.
    private static func bundleID(_ appID: String) -> String? {
        guard let dot = appID.firstIndex(of: "."), appID.index(after: dot) < appID.endIndex else { return nil }
        return String(appID[appID.index(after: dot)...])
    }

    private static let primaryStyle =
        "display:inline-block;padding:.8rem 1.6rem;border-radius:980px;background:#0071e3;color:#fff;"
        + "text-decoration:none;font-weight:600"
    private static let secondaryStyle =
        "display:inline-block;padding:.7rem 1.5rem;border-radius:980px;border:1px solid #0071e3;color:#0071e3;"
        + "text-decoration:none;font-weight:600"
}
