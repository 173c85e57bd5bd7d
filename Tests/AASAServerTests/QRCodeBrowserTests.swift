import AASACore
import AASATestSupport
import Foundation
import Testing

@testable import AASAServer

/// The landing page in headless Chromium, as a desktop visitor and as an iPhone sees it: the screenshot itself is
/// read with `zbarimg`. Screenshots go to ``screenshots``.
@Suite(.serialized) struct QRCodeBrowserTests {
    /// Where the screenshots go: `AASA_SCREENSHOT_DIR`, or `.build/screenshots/qr-code`.
    static let screenshots =
        ProcessInfo.processInfo.environment["AASA_SCREENSHOT_DIR"] ?? RepositoryPaths.root
        + "/.build/screenshots/qr-code"

    static let desktop =
        "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 "
        + "Safari/537.36"
    static let iPhone =
        "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
        + "Version/18.0 Mobile/15E148 Safari/604.1"

    @Test(arguments: [
        (1440, 900, desktop, true), (390, 844, iPhone, false),
    ])
    func theLandingPageShowsADesktopVisitorAQRCodeOfItsURL(width: Int, height: Int, userAgent: String, shown: Bool)
        throws
    {
        let live = try PagesLiveTests.server()
        let profile = TemporaryDirectory("aasa-devtools")
        let browser = try DevTools(
            profile: profile.path,
            arguments: ["--ignore-certificate-errors", "--host-resolver-rules=MAP shop.example 127.0.0.1"])
        let page = try browser.openPage(width: width, height: height)
        try page.setUserAgent(userAgent)
        try page.navigate("https://shop.example:\(live.https)/buy/red-shoes?ref=ad")
        let found = try page.evaluate("document.getElementById('\(PageQRCode.elementID)') !== null") as? Bool
        #expect(found == shown)
        let png = try page.screenshot()
        try FileManager.default.createDirectory(atPath: Self.screenshots, withIntermediateDirectories: true)
        let file = Self.screenshots + "/landing-\(width).png"
        try png.write(to: URL(fileURLWithPath: file))
        // The code is in the first screen, whole, and names the page's canonical URL without its query.
        #expect(try ZBar.decode(file) == (shown ? ["https://shop.example/buy/red-shoes"] : []), "\(file)")
    }
}
