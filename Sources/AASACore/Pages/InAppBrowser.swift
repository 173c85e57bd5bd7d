/// An app's in-app browser: universal links and App Links do not open from it, and the Smart App Banner is not shown
/// in it, so a page offers its visitors a way out to the system browser (``OpenInBrowser``).
///
/// ``all`` is the one table of the browsers recognised, how each is told from its `User-Agent`, and what each
/// honours on iOS and on Android; docs/configuration.md ("In-app browsers") gives the source of each entry.
public struct InAppBrowser: Sendable, Hashable {
    /// How a page gets a visitor out of an in-app browser into the system browser.
    public enum Escape: Sendable, Hashable {
        /// A link to `x-safari-https://host/path`: Safari's own scheme (iOS 17 and later), opened by the system
        /// when the in-app browser hands unknown schemes to it.
        case safariScheme
        /// A link to `instagram://extbrowser/?url=…` (the page's URL, percent-encoded): Instagram opens it in the
        /// system browser.
        case instagramExternalBrowser
        /// A link to the page's URL with `openExternalBrowser=1` added to its query: LINE opens such a URL in the
        /// system browser.
        case lineExternalBrowser
        /// A link to `intent://host/path#Intent;scheme=https;end`: an Android intent for the page with no app named,
        /// which the system gives the app that opens the domain's links when it is installed, else the default
        /// browser, where the in-app browser hands `intent:` URLs to the system.
        case browserIntent
        /// Nothing the page can link to works: only the steps.
        case steps
    }

    /// How the in-app browser behaves on one platform.
    public struct Behaviour: Sendable, Hashable {
        /// The link offered, or ``Escape/steps``.
        public var escape: Escape
        /// What the visitor does by hand, shown with the link (for when it does nothing) or alone.
        public var steps: String
    }

    /// A short, stable name: `instagram`, `facebook`, …
    public let id: String
    /// The app's name as its users know it.
    public let name: String
    /// `User-Agent` tokens (case-sensitive, anywhere in it), any one of which identifies the app.
    public let tokens: [String]
    /// On iOS.
    public let iOS: Behaviour
    /// On Android.
    public let android: Behaviour

    /// The behaviour on `platform` (``Visitor/Platform/iOS`` or ``Visitor/Platform/android``).
    public func behaviour(on platform: Visitor.Platform) -> Behaviour {
        platform == .android ? android : iOS
    }

    public static func == (lhs: InAppBrowser, rhs: InAppBrowser) -> Bool { lhs.id == rhs.id }
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }

    /// The in-app browsers recognised, in the order they are tried: an app whose `User-Agent` also carries another's
    /// tokens comes first (Messenger's, Instagram's and Threads' may carry Facebook's). Tokens are matched
    /// case-sensitively: LINE's ` Line/` does not match `Online/`, and WeChat's `MicroMessenger` is none of
    /// Messenger's tokens.
    public static let all: [InAppBrowser] = [
        InAppBrowser(
            id: "messenger", name: "Messenger",
            tokens: ["FBAN/Messenger", "FB_IAB/MESSENGER", "MessengerForiOS", "MessengerLiteForiOS", "Orca-Android"],
            iOS: Behaviour(escape: .safariScheme, steps: "Tap ⋯ and choose Open in Safari."),
            android: Behaviour(escape: .browserIntent, steps: "Tap ⋮ and choose Open in Chrome.")),
        InAppBrowser(
            id: "instagram", name: "Instagram", tokens: ["Instagram"],
            iOS: Behaviour(
                escape: .instagramExternalBrowser, steps: "Tap ⋯ at the top right and choose Open in external browser."),
            android: Behaviour(escape: .browserIntent, steps: "Tap ⋮ at the top right and choose Open in Chrome.")),
        InAppBrowser(
            id: "threads", name: "Threads", tokens: ["Barcelona"],
            iOS: Behaviour(escape: .safariScheme, steps: "Tap ⋯ and choose Open in Safari."),
            android: Behaviour(escape: .browserIntent, steps: "Tap ⋮ and choose Open in Chrome.")),
        InAppBrowser(
            id: "facebook", name: "Facebook", tokens: ["FBAN/", "FBAV/", "FB_IAB/", "MetaIAB"],
            iOS: Behaviour(escape: .safariScheme, steps: "Tap ⋯ and choose Open in external browser."),
            android: Behaviour(escape: .browserIntent, steps: "Tap ⋮ at the top right and choose Open in Chrome.")),
        InAppBrowser(
            id: "tiktok", name: "TikTok", tokens: ["musical_ly", "trill_", "BytedanceWebview", "TikTok"],
            iOS: Behaviour(escape: .safariScheme, steps: "Tap ⋯ at the top right and choose Open in browser."),
            android: Behaviour(escape: .browserIntent, steps: "Tap ⋯ at the top right and choose Open in browser.")),
        InAppBrowser(
            id: "linkedin", name: "LinkedIn", tokens: ["LinkedInApp"],
            iOS: Behaviour(escape: .safariScheme, steps: "Tap ⋯ and choose Open in Safari."),
            android: Behaviour(escape: .browserIntent, steps: "Tap ⋮ and choose Open in browser.")),
        InAppBrowser(
            id: "snapchat", name: "Snapchat", tokens: ["Snapchat"],
            iOS: Behaviour(escape: .steps, steps: "Tap ⋯ (or the share button) and choose Open in Safari."),
            android: Behaviour(escape: .browserIntent, steps: "Tap ⋮ and choose Open in browser.")),
        InAppBrowser(
            id: "x", name: "X", tokens: ["Twitter for iPhone", "Twitter for iPad", "TwitterAndroid"],
            iOS: Behaviour(escape: .steps, steps: "Tap the share button and choose Open in Safari."),
            android: Behaviour(escape: .browserIntent, steps: "Tap ⋮ and choose Open in browser.")),
        InAppBrowser(
            id: "line", name: "LINE", tokens: [" Line/"],
            iOS: Behaviour(escape: .lineExternalBrowser, steps: "Tap ⋯ and choose Open in default browser."),
            android: Behaviour(escape: .lineExternalBrowser, steps: "Tap ⋮ and choose Open in default browser.")),
        InAppBrowser(
            id: "wechat", name: "WeChat", tokens: ["MicroMessenger"],
            iOS: Behaviour(escape: .steps, steps: "Tap ⋯ at the top right and choose Open in Safari."),
            android: Behaviour(escape: .steps, steps: "Tap ⋯ at the top right and choose Open in Browser.")),
    ]

    /// An iOS app's own web view (`WKWebView`) that names no app: its `User-Agent` has no `Safari/` token, which
    /// Safari and every iOS browser send.
    public static let iOSWebView = InAppBrowser(
        id: "ios-web-view", name: "this app", tokens: [],
        iOS: Behaviour(escape: .safariScheme, steps: "Open this page in Safari: copy its address and paste it there."),
        android: Behaviour(escape: .steps, steps: ""))
    /// An Android app's own `WebView` that names no app: its `User-Agent` has the `; wv)` token.
    public static let androidWebView = InAppBrowser(
        id: "android-web-view", name: "this app", tokens: ["; wv)"],
        iOS: Behaviour(escape: .steps, steps: ""),
        android: Behaviour(
            escape: .browserIntent, steps: "Open this page in your browser: copy its address and paste it there."))
}
