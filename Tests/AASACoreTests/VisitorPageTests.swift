import AASATestSupport
import Foundation
import Testing

@testable import AASACore

/// What each visitor gets of a domain's pages, routed without sockets: the `open-in-browser` element for an in-app
/// browser, the landing page's buttons for the visitor's platform, and the variants' headers.
@Suite struct VisitorPageTests {
    static let iPhoneSafari = UserAgents.iPhoneSafari
    static let androidChrome = UserAgents.androidChrome
    static let desktop = UserAgents.desktop
    static let googlebot = UserAgents.googlebot
    static func userAgent(_ id: String, _ platform: Visitor.Platform) -> String {
        UserAgents.inApp(id, platform == .iOS ? "ios" : "android")
    }

    static func site(fallback: String = "") -> String {
        """
        {
          "universalLinks": {"apps": [{"appIDs": ["ABCDE12345.com.example.shop"], "rules": [{"path": "/buy/*"}]}]},
          "appClips": ["ABCDE12345.com.example.shop.Clip"],
          "android": {"apps": [{"package": "com.example.shop", "fingerprints": ["\(String(repeating: "AB:", count: 31))AB"]}]},
          "smartAppBanner": {"appStoreID": "640199958", "exclude": ["/legal.html"]}\(fallback)
        }
        """
    }

    static func routes(_ site: String = site()) throws -> SiteRoutes {
        try PagesFixture(
            siteJSON: site,
            files: [
                "about.html": Array(
                    "<!DOCTYPE html><html><head><title>About</title></head><body class=\"x\"><p>about</p></body></html>"
                        .utf8),
                "legal.html": Array("<html><head></head><body>legal</body></html>".utf8),
            ]
        ).routes()
    }

    /// The `href` of each `data-button` in the page, in order.
    static func buttons(_ html: String) -> [(kind: String, href: String)] {
        html.components(separatedBy: "<a data-button=\"").dropFirst().map { part in
            let kind = String(part.prefix { $0 != "\"" })
            let href = part.components(separatedBy: "href=\"")[1].prefix { $0 != "\"" }
            return (kind, String(href))
        }
    }

    /// The `href` of the `open-in-browser` element's link, `""` for an element without one, `nil` without the element.
    static func escapeLink(_ html: String) -> String? {
        guard let start = html.range(of: "<div id=\"open-in-browser\"") else { return nil }
        let element = html[start.lowerBound...]
        let block = element[..<element.range(of: "</div>")!.upperBound]
        guard let href = block.range(of: "href=\"") else { return "" }
        return String(block[href.upperBound...].prefix { $0 != "\"" })
    }

    static let page = "https://shop.example/buy/red-shoes?ref=ad"
    static let playFallback = "https%3A%2F%2Fplay.google.com%2Fstore%2Fapps%2Fdetails%3Fid%3Dcom.example.shop"
    static let appIntent =
        "intent://shop.example/buy/red-shoes?ref=ad#Intent;scheme=https;package=com.example.shop;"
        + "S.browser_fallback_url=\(playFallback);end"

    @Test(arguments: [
        // iPhone: the App Store, then the App Clip; Safari shows the banner, so nothing to leave.
        (
            iPhoneSafari, nil as String?,
            [
                ("app-store", "https://apps.apple.com/app/id640199958"),
                ("app-clip", "https://appclip.apple.com/id?p=com.example.shop.Clip"),
            ]
        ),
        (
            userAgent("instagram", .iOS),
            "instagram://extbrowser/?url=https%3A%2F%2Fshop.example%2Fbuy%2Fred-shoes%3Fref%3Dad",
            [
                ("app-store", "https://apps.apple.com/app/id640199958"),
                ("app-clip", "https://appclip.apple.com/id?p=com.example.shop.Clip"),
            ]
        ),
        (
            userAgent("facebook", .iOS), "x-safari-https://shop.example/buy/red-shoes?ref=ad",
            [
                ("app-store", "https://apps.apple.com/app/id640199958"),
                ("app-clip", "https://appclip.apple.com/id?p=com.example.shop.Clip"),
            ]
        ),
        (
            userAgent("line", .iOS), "https://shop.example/buy/red-shoes?ref=ad&amp;openExternalBrowser=1",
            [
                ("app-store", "https://apps.apple.com/app/id640199958"),
                ("app-clip", "https://appclip.apple.com/id?p=com.example.shop.Clip"),
            ]
        ),
        (
            userAgent("wechat", .iOS), "",
            [
                ("app-store", "https://apps.apple.com/app/id640199958"),
                ("app-clip", "https://appclip.apple.com/id?p=com.example.shop.Clip"),
            ]
        ),
        // Android: the app by an intent that falls back to Google Play, then Google Play.
        (
            androidChrome, nil,
            [("app", appIntent), ("play", "https://play.google.com/store/apps/details?id=com.example.shop")]
        ),
        (
            userAgent("tiktok", .android), "intent://shop.example/buy/red-shoes?ref=ad#Intent;scheme=https;end",
            [("app", appIntent), ("play", "https://play.google.com/store/apps/details?id=com.example.shop")]
        ),
        (
            userAgent("wechat", .android), "",
            [("app", appIntent), ("play", "https://play.google.com/store/apps/details?id=com.example.shop")]
        ),
        // Anyone else: both stores.
        (
            desktop, nil,
            [
                ("app-store", "https://apps.apple.com/app/id640199958"),
                ("play", "https://play.google.com/store/apps/details?id=com.example.shop"),
            ]
        ),
        (
            googlebot, nil,
            [
                ("app-store", "https://apps.apple.com/app/id640199958"),
                ("play", "https://play.google.com/store/apps/details?id=com.example.shop"),
            ]
        ),
    ])
    func theLandingPageGivesEachVisitorTheirWayIntoTheApp(
        userAgent: String, escape: String?, buttons: [(String, String)]
    ) throws {
        let routes = try Self.routes()
        let page = routes.get("/buy/red-shoes", query: "ref=ad", headers: ["User-Agent": userAgent])
        #expect(page.status == 200)
        #expect(page.header("Vary") == "User-Agent")
        #expect(Self.escapeLink(page.text) == escape, "\(page.text)")
        #expect(Self.buttons(page.text).map(\.kind) == buttons.map(\.0))
        #expect(Self.buttons(page.text).map(\.href) == buttons.map(\.1))
        if escape != nil {
            // At the top: the first thing in the body.
            #expect(page.text.contains("<body>\(OpenInBrowserMarkup.start)"), "\(page.text)")
        }
    }

    @Test(arguments: [
        (
            #", "fallback": {"ios": "web", "android": "web"}"#, "https://shop.example/", "https://shop.example/",
            "https%3A%2F%2Fshop.example%2F"
        ),
        (
            #", "fallback": {"ios": "https://shop.example/get-the-app", "android": "https://get.example/app?x=1&y=2"}"#,
            "https://shop.example/get-the-app", "https://get.example/app?x=1&amp;y=2",
            "https%3A%2F%2Fget.example%2Fapp%3Fx%3D1%26y%3D2"
        ),
    ])
    func theFallbackDecidesWhereAPhoneThatDoesNotOpenTheAppGoes(
        fallback: String, ios: String, android: String, intentFallback: String
    ) throws {
        let routes = try Self.routes(Self.site(fallback: fallback))
        let iPhone = Self.buttons(routes.get("/buy/red-shoes", headers: ["User-Agent": Self.iPhoneSafari]).text)
        #expect(iPhone.first?.kind == "web" && iPhone.first?.href == ios)
        let phone = Self.buttons(routes.get("/buy/red-shoes", headers: ["User-Agent": Self.androidChrome]).text)
        #expect(phone.map(\.kind) == ["app", "web"])
        #expect(phone.last?.href == android)
        // The app's intent falls back to the same page, as one encoded component.
        #expect(
            phone.first?.href
                == "intent://shop.example/buy/red-shoes#Intent;scheme=https;package=com.example.shop;"
                + "S.browser_fallback_url=\(intentFallback);end", "\(phone)")
    }

    @Test func aHostedPageWithTheBannerShowsAnInAppBrowsersVisitorTheWayOutAtTheTopOfItsBody() throws {
        let routes = try Self.routes()
        let instagram = routes.get("/about.html", headers: ["User-Agent": Self.userAgent("instagram", .iOS)])
        #expect(instagram.text.contains("<body class=\"x\"><div id=\"open-in-browser\""), "\(instagram.text)")
        #expect(instagram.header("Vary") == "User-Agent")
        #expect(instagram.header("ETag")?.contains("-ios-instagram-") == true)
        // Safari's and Chrome's visitors, and crawlers, get the page as it is, under one tag.
        let safari = routes.get("/about.html", headers: ["User-Agent": Self.iPhoneSafari])
        #expect(Self.escapeLink(safari.text) == nil)
        #expect(safari.header("Vary") == "User-Agent")
        for agent in [Self.androidChrome, Self.googlebot] {
            let other = routes.get("/about.html", headers: ["User-Agent": agent])
            #expect(other.body == safari.body && other.header("ETag") == safari.header("ETag"))
        }
        // Each variant's tag is its own: a client with one gets the other whole.
        let tag = try #require(instagram.header("ETag"))
        #expect(
            routes.get("/about.html", headers: ["User-Agent": Self.iPhoneSafari, "If-None-Match": tag]).status == 200)
        #expect(
            routes.get("/about.html", headers: ["User-Agent": Self.userAgent("instagram", .iOS), "If-None-Match": tag])
                .status == 304)
        // A page the banner is excluded from is the same for everyone and says nothing of the User-Agent.
        let legal = routes.get("/legal.html", headers: ["User-Agent": Self.userAgent("instagram", .iOS)])
        #expect(Self.escapeLink(legal.text) == nil && legal.header("Vary") == nil)
    }

    @Test func everythingOfTheRequestInTheWayOutIsEncodedAndEscaped() throws {
        let routes = try Self.routes()
        let hostile = routes.get(
            "/buy/\"><script>alert(1)</script>", query: "a='&b=<i>",
            headers: ["User-Agent": Self.userAgent("facebook", .android)])
        #expect(hostile.status == 200)
        #expect(!hostile.text.contains("<script>") && !hostile.text.contains("<i>"))
        let link = try #require(Self.escapeLink(hostile.text))
        #expect(
            link
                == "intent://shop.example/buy/%22%3E%3Cscript%3Ealert(1)%3C/script%3E?a=%27&amp;b=%3Ci%3E#Intent;scheme=https;end"
        )
    }

    @Test func theButtonsEveryoneGetsAreInTheLandingPagesTag() throws {
        // Only the Android app differs: the page's bytes do not hold it, its buttons do.
        let before = try Self.routes().get("/buy/x", headers: ["User-Agent": Self.googlebot])
        let after = try Self.routes(
            Self.site().replacingOccurrences(
                of: "\"package\": \"com.example.shop\"", with: "\"package\": \"com.example.shop2\"")
        )
        .get("/buy/x", headers: ["User-Agent": Self.googlebot])
        #expect(after.text.contains("details?id=com.example.shop2\""))
        #expect(before.header("ETag") != after.header("ETag"))
    }

    @Test func aTemplateThatDoesNotPlaceTheWayOutGetsItAtTheTopOfItsBody() throws {
        let fixture = try PagesFixture(
            siteJSON: Self.site(),
            files: [
                "_landing.html": Array(
                    "<html><head><title>{{title}}</title></head><body id=\"b\">{{appButtons}}</body></html>".utf8)
            ])
        let routes = try fixture.routes()
        let page = routes.get("/buy/x", headers: ["User-Agent": Self.userAgent("linkedin", .iOS)])
        #expect(page.text.contains("<body id=\"b\"><div id=\"open-in-browser\""), "\(page.text)")
        #expect(Self.escapeLink(page.text) == "x-safari-https://shop.example/buy/x")
        #expect(Self.buttons(page.text).first?.kind == "app-store")
    }
}

/// How the `open-in-browser` element starts.
enum OpenInBrowserMarkup {
    static let start = "<div id=\"open-in-browser\""
}
