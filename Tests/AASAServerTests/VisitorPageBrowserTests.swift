import AASACore
import AASATestSupport
import Foundation
import Testing

@testable import AASAServer

/// What each visitor sees of the landing page and of a hosted page with the banner, in headless Chromium with that
/// visitor's `User-Agent`, from the real daemon over HTTPS: the `open-in-browser` element at the top of the first
/// screen for an in-app browser's visitor only, with the way out that browser honours; the landing page's buttons
/// for the visitor's platform; a desktop's QR code, read from the screenshot by `zbarimg`. The expected links are
/// written out here, not derived from the code under test. Screenshots go to ``screenshots``.
@Suite(.serialized) struct VisitorPageBrowserTests {
    /// Where the screenshots go: `AASA_SCREENSHOT_DIR/visitors`, or `.build/screenshots/visitors`.
    static let screenshots =
        (ProcessInfo.processInfo.environment["AASA_SCREENSHOT_DIR"] ?? RepositoryPaths.root + "/.build/screenshots")
        + "/visitors"

    /// A page of the sample site, and the literal forms of its URL the ways out use.
    struct Target: Sendable, CustomStringConvertible {
        /// `landing` or `index`, for the screenshots' names.
        var name: String
        var path: String
        /// The page's URL, as the page names it.
        var url: String
        /// `url` percent-encoded as one query component.
        var encoded: String
        /// An Android intent for `url` that names no app.
        var intent: String
        /// The URL the desktop's QR code holds: `url` without its query.
        var qrCode: String
        var description: String { name }
    }

    static let landing = Target(
        name: "landing", path: "/buy/red-shoes?ref=ad", url: "https://shop.example/buy/red-shoes?ref=ad",
        encoded: "https%3A%2F%2Fshop.example%2Fbuy%2Fred-shoes%3Fref%3Dad",
        intent: "intent://shop.example/buy/red-shoes?ref=ad#Intent;scheme=https;end",
        qrCode: "https://shop.example/buy/red-shoes")
    /// The sample's hosted `pages/index.html`, which gets the banner.
    static let index = Target(
        name: "index", path: "/?ref=ad", url: "https://shop.example/?ref=ad",
        encoded: "https%3A%2F%2Fshop.example%2F%3Fref%3Dad",
        intent: "intent://shop.example/?ref=ad#Intent;scheme=https;end",
        qrCode: "https://shop.example/")

    /// How an in-app browser's visitor gets out of it.
    enum WayOut: Sendable {
        case instagram, safari, line, intent
        /// No link: only steps, which contain this text.
        case steps(String)

        /// The link's `href` on `target`, `nil` for steps.
        func href(_ target: Target) -> String? {
            switch self {
            case .instagram: "instagram://extbrowser/?url=" + target.encoded
            case .safari: "x-safari-" + target.url
            case .line: target.url + "&openExternalBrowser=1"
            case .intent: target.intent
            case .steps: nil
            }
        }
    }

    /// The way out of each in-app browser on each platform, by `UserAgents.inAppBrowsers`' id and platform.
    static let wayOut: [String: WayOut] = [
        "instagram-ios": .instagram, "instagram-android": .intent,
        "facebook-ios": .safari, "facebook-android": .intent,
        "messenger-ios": .safari, "messenger-android": .intent,
        "threads-ios": .safari, "threads-android": .intent,
        "tiktok-ios": .safari, "tiktok-android": .intent,
        "linkedin-ios": .safari, "linkedin-android": .intent,
        "snapchat-ios": .steps("choose Open in Safari"), "snapchat-android": .intent,
        "x-ios": .steps("choose Open in Safari"), "x-android": .intent,
        "line-ios": .line, "line-android": .line,
        "wechat-ios": .steps("choose Open in Safari"), "wechat-android": .steps("choose Open in Browser"),
        "ios-web-view-ios": .safari, "android-web-view-android": .intent,
    ]

    /// One visitor: a name for the screenshot, the platform, the `User-Agent`, and the in-app browser's id.
    struct Visitor: Sendable, CustomStringConvertible {
        var name: String
        var platform: String
        var userAgent: String
        var inAppBrowser: String?
        var description: String { name + "-" + platform }
    }

    /// Every in-app browser's `User-Agent` (a second one of the same app and platform numbered `-2`), then Safari on
    /// an iPhone, Chrome on Android and a desktop.
    static let visitors: [Visitor] = {
        var seen: [String: Int] = [:]
        var visitors = UserAgents.inAppBrowsers.map { entry in
            let key = entry.id + "-" + entry.platform
            seen[key, default: 0] += 1
            let name = seen[key] == 1 ? entry.id : entry.id + "-" + String(seen[key]!)
            return Visitor(name: name, platform: entry.platform, userAgent: entry.userAgent, inAppBrowser: entry.id)
        }
        visitors += [
            Visitor(name: "safari", platform: "ios", userAgent: UserAgents.iPhoneSafari),
            Visitor(name: "chrome", platform: "android", userAgent: UserAgents.androidChrome),
            Visitor(name: "chrome", platform: "desktop", userAgent: UserAgents.desktop),
        ]
        return visitors
    }()

    /// The landing page's buttons per platform: their kinds and `href`s, in order.
    static let buttons: [String: [(kind: String, href: String)]] = [
        "ios": [
            ("app-store", "https://apps.apple.com/app/id640199958"),
            ("app-clip", "https://appclip.apple.com/id?p=com.example.shop.Clip"),
        ],
        "android": [
            (
                "app",
                "intent://shop.example/buy/red-shoes?ref=ad#Intent;scheme=https;package=com.example.shop;"
                    + "S.browser_fallback_url=https%3A%2F%2Fplay.google.com%2Fstore%2Fapps%2Fdetails%3Fid%3D"
                    + "com.example.shop;end"
            ),
            ("play", "https://play.google.com/store/apps/details?id=com.example.shop"),
        ],
        "desktop": [
            ("app-store", "https://apps.apple.com/app/id640199958"),
            ("play", "https://play.google.com/store/apps/details?id=com.example.shop"),
        ],
    ]

    /// What the page shows, read from the live DOM after it loaded.
    static let inspect = """
        (() => {
          const box = (e) => { const r = e.getBoundingClientRect(); return {top: r.top, bottom: r.bottom, left: r.left, right: r.right, width: r.width, height: r.height}; };
          const rgb = (c) => c.match(/[0-9.]+/g).slice(0, 3).map(Number);
          const luminance = (c) => { const [r, g, b] = rgb(c).map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; }); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
          const contrast = (a, b) => { const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
          const element = document.getElementById('open-in-browser');
          const style = getComputedStyle(document.body);
          const links = element ? [...element.querySelectorAll('a')] : [];
          return {
            viewport: {width: innerWidth, height: innerHeight},
            pageWidth: document.documentElement.scrollWidth,
            count: document.querySelectorAll('#open-in-browser').length,
            first: element !== null && document.body.firstElementChild === element,
            browser: element && element.getAttribute('data-in-app-browser'),
            box: element && box(element),
            text: element ? element.innerText : '',
            // The body's content box: where the page's first element goes, after the site's own margin.
            content: {top: parseFloat(style.marginTop) + parseFloat(style.paddingTop), width: document.body.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight)},
            // The lowest contrast of the element's text against its background (WCAG 2 ratio).
            contrast: element ? Math.min(...[...element.querySelectorAll('p')].map((p) => contrast(getComputedStyle(p).color, getComputedStyle(element).backgroundColor))) : 0,
            hrefs: links.map((a) => a.getAttribute('href')),
            link: links.length ? box(links[0]) : null,
            buttons: [...document.querySelectorAll('#app-buttons a[data-button]')].map((a) => ({kind: a.dataset.button, href: a.getAttribute('href'), box: box(a)})),
            qrCode: document.getElementById('aasa-qr-code') !== null,
            scripts: document.scripts.length,
          };
        })()
        """

    /// Every visitor on each page at a phone's width (a desktop at 1440 px), and each iOS in-app browser's visitor on
    /// the landing page at 1440 px too.
    static let cases: [(Target, Visitor, Int)] =
        [landing, index].flatMap { target in
            visitors.map { (target, $0, $0.platform == "desktop" ? 1440 : 390) }
        }
        + visitors.filter { $0.platform == "ios" && $0.inAppBrowser != nil }.map { (landing, $0, 1440) }

    @Test(arguments: cases)
    func eachVisitorSeesTheWayOutOfTheirInAppBrowserAtTheTopAndTheirButtons(
        target: Target, visitor: Visitor, width: Int
    ) throws {
        try VisitorBrowserSession.use { session in
            let shown = try session.load(target, as: visitor, width: width)
            let page = try #require(shown.state as? [String: Any])
            let viewport = try #require(page["viewport"] as? [String: Double])
            let pageWidth = try #require(page["pageWidth"] as? Double)
            #expect(viewport["width"] == Double(width) && pageWidth <= Double(width), "\(shown.file)")
            #expect(page["scripts"] as? Int == 0, "the page works without JavaScript: it has none")
            #expect((page["qrCode"] as? Bool) == (visitor.platform == "desktop"), "\(shown.file)")
            // A desktop's QR code is in the first screen, whole, and names the page's URL without its query.
            let decoded = visitor.platform == "desktop" || width == 390 ? try ZBar.decode(shown.file) : []
            #expect(decoded == (visitor.platform == "desktop" ? [target.qrCode] : []), "\(shown.file)")

            if let id = visitor.inAppBrowser {
                let way = try #require(Self.wayOut[id + "-" + visitor.platform], "no expectation for \(visitor)")
                #expect(page["count"] as? Int == 1, "\(shown.file)")
                #expect(page["first"] as? Bool == true, "the first element of <body>: \(shown.file)")
                #expect(page["browser"] as? String == id)
                // At the top of the first screen (on a hosted page, inside the site's own body margin; on the
                // landing page, flush with the viewport), as wide as the body, whole.
                let box = try #require(page["box"] as? [String: Double])
                let content = try #require(page["content"] as? [String: Double])
                #expect(box["top"]! >= 0 && box["top"]! <= content["top"]! + 1, "\(box) \(content) \(shown.file)")
                #expect(box["width"]! >= content["width"]! - 1, "\(box) \(content)")
                if target.name == "landing" {
                    #expect(box["top"]! <= 1 && box["width"]! >= viewport["width"]! - 1, "\(box) \(shown.file)")
                }
                #expect(box["left"]! >= 0 && box["right"]! <= viewport["width"]!, "\(box)")
                #expect(box["bottom"]! <= viewport["height"]!, "\(box)")
                // Readable: every paragraph at least WCAG's 4.5:1 against the box.
                #expect((page["contrast"] as? Double ?? 0) >= 4.5, "contrast \(page["contrast"] ?? "") \(shown.file)")
                let hrefs = page["hrefs"] as? [String]
                if let href = way.href(target) {
                    #expect(hrefs == [href], "\(shown.file)")
                    let link = try #require(page["link"] as? [String: Double])
                    #expect(link["width"]! > 0 && link["height"]! > 0, "\(link)")
                    #expect(link["top"]! >= box["top"]! && link["bottom"]! <= box["bottom"]!, "\(link) in \(box)")
                } else if case .steps(let steps) = way {
                    #expect(hrefs == [], "\(shown.file)")
                    #expect((page["text"] as? String)?.contains(steps) == true, "\(page["text"] ?? "")")
                }
            } else {
                #expect(page["count"] as? Int == 0, "\(shown.file)")
            }

            let buttons = page["buttons"] as? [[String: Any]] ?? []
            let expected = target.name == "landing" ? Self.buttons[visitor.platform]! : []
            #expect(buttons.map { $0["kind"] as? String } == expected.map(\.kind), "\(shown.file)")
            #expect(buttons.map { $0["href"] as? String } == expected.map(\.href), "\(shown.file)")
            for button in buttons {
                let box = try #require(button["box"] as? [String: Double])
                #expect(box["width"]! > 0 && box["height"]! > 0, "\(button)")
                #expect(box["left"]! >= 0 && box["right"]! <= viewport["width"]!, "\(button)")
            }
        }
    }

    /// With scripts off, an Instagram visitor on an iPhone still gets the element and its link (the page has no
    /// script at all: what the server sends is what is shown).
    @Test func theWayOutNeedsNoJavaScript() throws {
        try VisitorBrowserSession.use { session in
            let visitor = try #require(Self.visitors.first { $0.name == "instagram" && $0.platform == "ios" })
            let href = "instagram://extbrowser/?url=https%3A%2F%2Fshop.example%2Fbuy%2Fred-shoes%3Fref%3Dad"
            let raw = try session.live.get(
                "shop.example", Self.landing.path, headers: ["User-Agent: \(visitor.userAgent)"])
            #expect(raw.status == 200)
            #expect(!raw.text.contains("<script"), "\(raw.text)")
            #expect(raw.text.contains("<body><div id=\"open-in-browser\""), "\(raw.text)")
            #expect(raw.text.contains("href=\"\(href)\""), "\(raw.text)")

            let page = session.page
            try page.send("Emulation.setScriptExecutionDisabled", ["value": true])
            defer { _ = try? page.send("Emulation.setScriptExecutionDisabled", ["value": false]) }
            try page.setUserAgent(visitor.userAgent)
            try page.resize(width: 390, height: 844)
            try page.navigate("https://shop.example:\(session.live.https)\(Self.landing.path)")
            let root = try #require((try page.send("DOM.getDocument"))["root"] as? [String: Any])
            let document = try #require(root["nodeId"] as? Int)
            let first = try page.send("DOM.querySelector", ["nodeId": document, "selector": "body > #open-in-browser"])
            #expect((first["nodeId"] as? Int ?? 0) != 0, "the element is a child of <body>")
            let link = try page.send(
                "DOM.querySelector", ["nodeId": document, "selector": "#open-in-browser a[href]"])
            let node = try #require(link["nodeId"] as? Int)
            #expect(node != 0)
            let attributes = try page.send("DOM.getAttributes", ["nodeId": node])["attributes"] as? [String] ?? []
            let pairs = stride(from: 0, to: attributes.count - 1, by: 2).map { (attributes[$0], attributes[$0 + 1]) }
            #expect(pairs.first { $0.0 == "href" }?.1 == href, "\(attributes)")
            try session.screenshot(Self.landing, visitor, width: 390, suffix: "-no-javascript")
        }
    }
}

/// The suite's one daemon and one Chromium tab, started by the first test and closed when the test process exits:
/// each case sets the tab's `User-Agent` and size and loads its page, with the browser's cache off so that every
/// load is the server's answer.
final class VisitorBrowserSession: @unchecked Sendable {
    // Released in this order: the tab and the browser before the profile folder it writes into.
    let page: DevTools.Page
    let browser: DevTools
    let profile = TemporaryDirectory("aasa-devtools")
    let live: LiveServer

    private static let lock = NSLock()
    nonisolated(unsafe) private static var current: VisitorBrowserSession?

    private init() throws {
        live = try PagesLiveTests.server()
        browser = try DevTools(
            profile: profile.path,
            arguments: ["--ignore-certificate-errors", "--host-resolver-rules=MAP shop.example 127.0.0.1"])
        page = try browser.openPage(width: 390, height: 844)
        try page.send("Network.setCacheDisabled", ["cacheDisabled": true])
    }

    /// Runs `body` with the session, starting it the first time.
    static func use<T>(_ body: (VisitorBrowserSession) throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        if current == nil {
            current = try VisitorBrowserSession()
            // Closes the browser and stops the daemon, and removes their folders, when the tests are done.
            atexit {
                VisitorBrowserSession.lock.lock()
                VisitorBrowserSession.current = nil
                VisitorBrowserSession.lock.unlock()
            }
        }
        return try body(current!)
    }

    /// Loads `target` as `visitor` at `width` (× 844, or × 900 at a desktop's width), saves a screenshot, and returns
    /// its file and what ``VisitorPageBrowserTests/inspect`` reads of the page.
    func load(_ target: VisitorPageBrowserTests.Target, as visitor: VisitorPageBrowserTests.Visitor, width: Int)
        throws -> (file: String, state: Any?)
    {
        try page.setUserAgent(visitor.userAgent)
        try page.resize(width: width, height: width < 600 ? 844 : 900)
        try page.navigate("https://shop.example:\(live.https)\(target.path)")
        let state = try page.evaluate(VisitorPageBrowserTests.inspect)
        return (try screenshot(target, visitor, width: width), state)
    }

    /// Saves the viewport as `<screenshots>/<page>-<visitor>-<platform>-<width><suffix>.png` and returns the path.
    @discardableResult
    func screenshot(
        _ target: VisitorPageBrowserTests.Target, _ visitor: VisitorPageBrowserTests.Visitor, width: Int,
        suffix: String = ""
    ) throws -> String {
        let folder = VisitorPageBrowserTests.screenshots
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let file = folder + "/\(target.name)-\(visitor.name)-\(visitor.platform)-\(width)\(suffix).png"
        try page.screenshot().write(to: URL(fileURLWithPath: file))
        return file
    }
}
