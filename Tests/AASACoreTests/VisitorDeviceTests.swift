import Testing

@testable import AASACore

/// Which visitors get the QR code: desktop browsers only.
@Suite struct VisitorDeviceTests {
    @Test(arguments: [
        // Desktop browsers.
        (
            "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 "
                + "Safari/605.1.15", VisitorDevice.desktop
        ),
        (
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 "
                + "Safari/537.36 Edg/131.0.0.0", .desktop
        ),
        ("Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0", .desktop),
        // Phones and tablets.
        (
            "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
                + "Version/18.0 Mobile/15E148 Safari/604.1", .other
        ),
        ("Mozilla/5.0 (iPad; CPU OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko)", .other),
        ("Mozilla/5.0 (iPod touch; CPU iPhone OS 15_0 like Mac OS X)", .other),
        ("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Chrome/131.0 Mobile Safari/537.36", .other),
        ("Mozilla/5.0 (Linux; Android 13; SM-X700) AppleWebKit/537.36 Chrome/131.0 Safari/537.36", .other),
        ("Mozilla/5.0 (Mobile; rv:48.0) Gecko/48.0 Firefox/48.0 KAIOS/2.5", .other),
        // Crawlers and link previews.
        ("Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", .other),
        ("Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", .other),
        ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_11_1) AppleWebKit/601.2.4 facebookexternalhit/1.1", .other),
        ("Mozilla/5.0 (compatible; Yahoo! Slurp; http://help.yahoo.com/help/us/ysearch/slurp)", .other),
        // Not browsers, nothing, or too long to be one.
        ("curl/8.5.0", .other), ("", .other), ("AASA-Bot/1.0.0", .other),
        ("Mozilla/5.0 (Macintosh) " + String(repeating: "x", count: VisitorDevice.maximumUserAgentBytes), .other),
    ])
    func desktopBrowsersAreToldApartFromPhonesCrawlersAndOtherClients(userAgent: String, device: VisitorDevice) {
        #expect(VisitorDevice(userAgent: userAgent) == device)
    }

    @Test func noUserAgentIsNotADesktop() {
        #expect(VisitorDevice(userAgent: nil as String?) == .other)
    }
}
