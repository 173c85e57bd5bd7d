/// Who is asking for a page, as far as the page differs for them, from the `User-Agent`: a desktop browser (gets
/// the QR code), an iPhone or an Android phone (the landing page's buttons for that platform), maybe inside an app's
/// in-app browser (the `open-in-browser` action), or anything else (a crawler, a non-browser client, no
/// `User-Agent`), which gets the page as it is.
public struct Visitor: Sendable, Hashable {
    /// The visitor's platform.
    public enum Platform: Sendable, Hashable {
        /// A desktop browser: gets the QR code.
        case desktop
        /// An iPhone, iPad (when it asks for mobile pages) or iPod touch.
        case iOS
        /// An Android phone or tablet.
        case android
        /// A crawler, a link-preview fetcher, a non-browser client, another phone platform, or no `User-Agent`.
        case other
    }

    /// The platform.
    public var platform: Platform
    /// The in-app browser the page is opened in, on ``Platform/iOS`` and ``Platform/android`` only.
    public var inAppBrowser: InAppBrowser?

    /// Creates a visitor.
    public init(platform: Platform, inAppBrowser: InAppBrowser? = nil) {
        self.platform = platform
        self.inAppBrowser = inAppBrowser
    }

    /// A visitor that gets every page as it is.
    public static let other = Visitor(platform: .other)

    /// A short name of the visitor for a variant's `ETag`: `desktop`, `ios`, `android` or `other`, then the in-app
    /// browser's ``InAppBrowser/id`` (`ios-instagram`).
    public var tag: String {
        let name =
            switch platform {
            case .desktop: "desktop"
            case .iOS: "ios"
            case .android: "android"
            case .other: "other"
            }
        return inAppBrowser.map { name + "-" + $0.id } ?? name
    }

    /// Tokens of a `User-Agent` (matched ASCII case-insensitively anywhere in it) that make a visitor ``other``
    /// whatever else it says: crawlers and link-preview fetchers, which have no phone to scan a code with and no app
    /// to open (`facebookexternalhit` is Facebook's preview fetcher, not its in-app browser).
    public static let crawlerTokens = [
        "bot", "crawl", "spider", "slurp", "facebookexternalhit", "embedly", "preview",
    ]

    /// Tokens (case-sensitive) of an iPhone, iPad or iPod touch. iPadOS's Safari asks for desktop pages and sends a
    /// Mac `User-Agent`, so it is seen as a desktop.
    public static let iOSTokens = ["iPhone", "iPad", "iPod"]
    /// The token (case-sensitive) of an Android device, phone or tablet.
    public static let androidToken = "Android"
    /// A token (ASCII case-insensitive) of a phone that is neither: not a desktop either.
    public static let mobileToken = "mobile"

    /// The longest `User-Agent` read. In-app browsers send the longest real ones (Facebook's, with its bracketed
    /// fields, about 350 bytes); a longer header is no browser's, and the scan stays bounded whatever a client sends.
    public static let maximumUserAgentBytes = 1024

    /// Classifies `userAgent`: a `User-Agent` starting `Mozilla/` (every browser engine sends it) without a
    /// ``crawlerTokens`` token is an iOS or Android device when it names one (and then maybe an in-app browser, by
    /// ``InAppBrowser/all``), another phone when it says `Mobile`, else a desktop. Everything else, a missing or
    /// over-long header included, is ``other``.
    public init(userAgent: UnsafeRawBufferPointer?) {
        self = .other
        guard let userAgent, userAgent.count <= Self.maximumUserAgentBytes, userAgent.starts(with: Self.mozilla)
        else { return }
        let found = Self.scanner.scan(userAgent)
        func has(_ group: Group) -> Bool { found & (1 << group.rawValue) != 0 }
        guard !has(.crawler) else { return }
        if has(.iOS) {
            self = Visitor(platform: .iOS, inAppBrowser: Self.inAppBrowser(found) ?? (has(.safari) ? nil : .iOSWebView))
        } else if has(.android) {
            self = Visitor(
                platform: .android, inAppBrowser: Self.inAppBrowser(found) ?? (has(.webView) ? .androidWebView : nil))
        } else if !has(.mobile) {
            self = Visitor(platform: .desktop)
        }
    }

    /// Reads `userAgent` as UTF-8 bytes.
    public init(userAgent: String?) {
        guard let userAgent else {
            self = .other
            return
        }
        var bytes = Array(userAgent.utf8)
        self = bytes.withUnsafeMutableBytes { Visitor(userAgent: UnsafeRawBufferPointer($0)) }
    }

    private static let mozilla = Array("Mozilla/".utf8)

    /// The groups of tokens a `User-Agent` is scanned for, in one pass, by their place in ``scanner``; each of
    /// ``InAppBrowser/all`` is a group of its own after these.
    private enum Group: Int, CaseIterable {
        case crawler, iOS, android, mobile
        /// Safari's `Safari/`, which every iOS browser sends and an app's own web view does not.
        case safari
        /// An Android `WebView`'s `; wv)`.
        case webView
    }

    private static let scanner = TokenScanner(
        groups: [
            crawlerTokens.map { TokenScanner.Token($0, ignoringCase: true) }, iOSTokens.map { TokenScanner.Token($0) },
            [TokenScanner.Token(androidToken)], [TokenScanner.Token(mobileToken, ignoringCase: true)],
            [TokenScanner.Token("Safari/")], InAppBrowser.androidWebView.tokens.map { TokenScanner.Token($0) },
        ] + InAppBrowser.all.map { $0.tokens.map { TokenScanner.Token($0) } })

    /// The first of ``InAppBrowser/all`` that `found` has a token of.
    private static func inAppBrowser(_ found: TokenScanner.Found) -> InAppBrowser? {
        let browsers = found >> Group.allCases.count
        return browsers == 0 ? nil : InAppBrowser.all[browsers.trailingZeroBitCount]
    }
}
