/// The landing page's fallbacks (`fallback`) lead somewhere: an `https` URL that is served, Google Play only for a
/// domain with an Android app, and a landing page to show them on.
public struct FallbackRule: SiteRule {
    /// Creates the rule.
    public init() {}

    /// Reports each fallback URL that is not served, `"play"` without an Android app that opens the domain's links,
    /// and `fallback` on a domain without a landing page.
    public func check(_ site: SiteContext) -> [Diagnostic] {
        guard let fallback = site.config.fallback else { return [] }
        let path = KeyPath.root.key("fallback")
        var found: [Diagnostic] = []
        for (key, target) in [("ios", fallback.ios), ("android", fallback.android)] {
            guard case .url(let text) = target else { continue }
            do {
                _ = try CredentialURL(text)
            } catch {
                found.append(
                    CredentialEndpointRule.diagnostic(
                        error, text: text, path: path.key(key), site: site, rule: .fallbackURL,
                        lengthRule: .fallbackURL))
            }
        }
        if fallback.android == .store && AppButtons.androidPackage(site.config) == nil {
            found.append(
                site.diagnostic(
                    .warning, rule: .fallbackNoAndroidApp,
                    "the Android fallback is \"play\" but no Android app opens \(site.domain)'s links: Android visitors are sent to the web instead",
                    at: path.key("android"),
                    hint:
                        "add the app to \"android\": {\"apps\": [{\"package\": \"com.example.app\", …}]}, or use \"web\""
                ))
        }
        if site.config.smartAppBanner == nil || !site.config.pages.landingPage.enabled {
            found.append(
                site.diagnostic(
                    .warning, rule: .fallbackUnused,
                    "\"fallback\" is set but \(site.domain) has no landing page to show its buttons on", at: path,
                    hint: "the landing page needs \"smartAppBanner\" and \"pages.landingPage.enabled\" not false"))
        }
        return found
    }
}

extension Rule {
    /// Reported by `FallbackRule`.
    public static let fallbackURL = Rule(
        "fallback-url", .error,
        "A `fallback` URL that is not an absolute `https` URL with a host, has a space, line break, backslash or non-ASCII character, or is over 2,048 bytes."
    )

    /// Reported by `FallbackRule`.
    public static let fallbackNoAndroidApp = Rule(
        "fallback-no-android-app", .warning,
        "`fallback.android` is `\"play\"` but no Android app of `android.apps` opens the domain's links.")

    /// Reported by `FallbackRule`.
    public static let fallbackUnused = Rule(
        "fallback-unused", .warning, "`fallback` is set on a domain without a landing page.")

    /// The rules of the landing page's fallbacks, in the order of the docs table: their part of `Rule.all`.
    package static let fallbackRules: [Rule] = [.fallbackTarget, .fallbackURL, .fallbackNoAndroidApp, .fallbackUnused]
}
