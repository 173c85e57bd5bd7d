import AASATestSupport
import Testing

@testable import AASACore

/// Who a visitor is, from real `User-Agent`s (the in-app browsers' copied from the test fixtures of inapp-spy,
/// ua-parser-js and uap-core, docs/configuration.md#in-app-browsers).
@Suite struct VisitorTests {
    /// The in-app browsers' real `User-Agent`s, with their platform.
    static let inAppBrowsers: [(id: String, platform: Visitor.Platform, userAgent: String)] =
        UserAgents.inAppBrowsers.map { ($0.id, $0.platform == "ios" ? .iOS : .android, $0.userAgent) }

    @Test(arguments: inAppBrowsers)
    func eachInAppBrowserIsToldFromItsUserAgent(id: String, platform: Visitor.Platform, userAgent: String) {
        let visitor = Visitor(userAgent: userAgent)
        #expect(visitor.platform == platform, "\(userAgent)")
        #expect(visitor.inAppBrowser?.id == id, "\(userAgent)")
    }

    @Test(arguments: [
        // Desktop browsers.
        (
            "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 "
                + "Safari/605.1.15", Visitor.Platform.desktop
        ),
        (
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 "
                + "Safari/537.36 Edg/131.0.0.0", .desktop
        ),
        ("Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0", .desktop),
        // Phones and tablets, in their own browsers.
        (
            "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
                + "Version/18.0 Mobile/15E148 Safari/604.1", .iOS
        ),
        (
            "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
                + "CriOS/131.0.6778.73 Mobile/15E148 Safari/604.1", .iOS
        ),
        (
            "Mozilla/5.0 (iPad; CPU OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 "
                + "Mobile/15E148 Safari/604.1", .iOS
        ),
        ("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Chrome/131.0 Mobile Safari/537.36", .android),
        ("Mozilla/5.0 (Linux; Android 13; SM-X700) AppleWebKit/537.36 Chrome/131.0 Safari/537.36", .android),
        ("Mozilla/5.0 (Mobile; rv:48.0) Gecko/48.0 Firefox/48.0 KAIOS/2.5", .other),
        // Crawlers and link previews, whatever device they say they are.
        ("Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", .other),
        (
            "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) "
                + "Chrome/131.0 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
            .other
        ),
        ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_11_1) AppleWebKit/601.2.4 facebookexternalhit/1.1", .other),
        ("Mozilla/5.0 (compatible; Yahoo! Slurp; http://help.yahoo.com/help/us/ysearch/slurp)", .other),
        // Not browsers, nothing, or too long to be one.
        ("curl/8.5.0", .other), ("", .other), ("AASA-Bot/1.0.0", .other),
        ("Mozilla/5.0 (Macintosh) " + String(repeating: "x", count: Visitor.maximumUserAgentBytes), .other),
        ("Mozilla/5.0 (iPhone) Instagram " + String(repeating: "x", count: Visitor.maximumUserAgentBytes), .other),
    ])
    func browsersAreToldApartByPlatformFromCrawlersAndOtherClients(userAgent: String, platform: Visitor.Platform) {
        let visitor = Visitor(userAgent: userAgent)
        #expect(visitor.platform == platform)
        #expect(visitor.inAppBrowser == nil, "a browser of its own, not an app's: \(userAgent)")
    }

    @Test func noUserAgentIsAnyoneElse() {
        #expect(Visitor(userAgent: nil as String?) == .other)
    }

    @Test func tokensAreMatchedExactlySoWordsThatHoldThemAreNotApps() {
        // LINE's token is " Line/" with its space: another app's "HotLine/" or "Online/" is not LINE. (WeChat's
        // "MicroMessenger" holding "Messenger" is the WeChat rows of `eachInAppBrowserIsToldFromItsUserAgent`.)
        for word in ["HotLine/2.1", "Online/1.0", "line/1.0"] {
            let agent = Visitor(
                userAgent: "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 Version/18.0 "
                    + "Mobile/15E148 Safari/604.1 " + word)
            #expect(agent == Visitor(platform: .iOS), "\(word)")
        }
    }

    @Test func theTableNamesEachAppOnceWithTokensAndStepsForBothPlatforms() {
        let ids = InAppBrowser.all.map(\.id)
        #expect(Set(ids).count == ids.count)
        for id in ["instagram", "facebook", "messenger", "tiktok", "linkedin", "snapchat", "x", "line", "wechat"] {
            #expect(ids.contains(id), "\(id)")
        }
        for browser in InAppBrowser.all {
            #expect(!browser.tokens.isEmpty && !browser.iOS.steps.isEmpty && !browser.android.steps.isEmpty)
        }
    }
}
