import FoundationEssentials
import Testing

@testable import AASACore

/// Injection of the Smart App Banner and touch-icon links into HTML pages (spec §5, §6).
@Suite struct PageInjectionTests {
    static let banner = BannerConfig(appStoreID: "640199958")
    static let markup = HeadMarkup(banner: banner, icons: [TouchIcon(path: "/apple-touch-icon.png", size: 180)])
    static let request = PageRequest(domain: "shop.example", path: Array("/a".utf8), query: "x=1")

    static func render(_ html: String, markup: HeadMarkup = markup, request: PageRequest = request) -> String {
        let page = markup.inject(into: Array(html.utf8), withBanner: true)
        let argument = markup.banner.flatMap { HeadMarkup.appArgument($0.appArgument, for: request) } ?? []
        return String(decoding: page.render(appArgument: argument, pageURL: []), as: UTF8.self)
    }

    static func count(_ needle: String, in text: String) -> Int {
        text.components(separatedBy: needle).count - 1
    }

    @Test func theBannerGoesRightAfterTheHeadTag() {
        let html = Self.render("<!DOCTYPE html><html><head><title>x</title></head><body>hi</body></html>")
        #expect(
            html.hasPrefix(
                "<!DOCTYPE html><html><head>\n<meta name=\"apple-itunes-app\" content=\"app-id=640199958, app-argument=https://shop.example/a?x=1\">"
            ), "\(html)")
        #expect(html.contains("<link rel=\"apple-touch-icon\" sizes=\"180x180\" href=\"/apple-touch-icon.png\">"))
    }

    @Test func anExistingBannerIsLeftUnchangedAndNeverDoubled() {
        let own = "<meta name=\"apple-itunes-app\" content=\"app-id=1\">"
        for html in [
            "<html><head>\(own)</head></html>", "<HTML><HEAD><META NAME='Apple-iTunes-App' CONTENT='app-id=1'></HEAD>",
            "<html><head><meta content=\"app-id=1\" name=apple-itunes-app></head>",
        ] {
            let out = Self.render(html)
            #expect(Self.count("apple-itunes-app", in: out.lowercased()) == 1, "\(out)")
            #expect(!out.contains("640199958"))
            // Icons still go in.
            #expect(out.contains("apple-touch-icon"))
        }
    }

    @Test func aPageWithItsOwnIconsGetsNoIconLinks() {
        let out = Self.render("<head><link rel=\"Apple-Touch-Icon-Precomposed\" href=\"/i.png\"></head>")
        #expect(Self.count("apple-touch-icon", in: out.lowercased()) == 1, "\(out)")
        #expect(out.contains("app-id=640199958"))
    }

    @Test func upperCaseTagsAndAttributesAreFound() {
        let out = Self.render("<!doctype html>\n<HTML LANG=en>\n<HEAD data-x=\"<head>\">\n<TITLE>t</TITLE></HEAD>")
        #expect(
            out.hasPrefix("<!doctype html>\n<HTML LANG=en>\n<HEAD data-x=\"<head>\">\n<meta name=\"apple-itunes-app\""),
            "\(out)")
    }

    @Test func headerIsNotHead() {
        let out = Self.render("<!DOCTYPE html><html><body><header>x</header></body></html>")
        #expect(out.hasPrefix("<!DOCTYPE html><html>\n<meta name=\"apple-itunes-app\""), "\(out)")
    }

    @Test func withoutHeadOrHtmlTheTagsGoAfterTheDoctypeOrFirst() {
        #expect(Self.render("<!DOCTYPE html><p>x</p>").hasPrefix("<!DOCTYPE html>\n<meta name=\"apple-itunes-app\""))
        #expect(Self.render("<p>x</p>").hasPrefix("\n<meta name=\"apple-itunes-app\""))
        #expect(Self.render("").hasPrefix("\n<meta name=\"apple-itunes-app\""))
    }

    @Test func aByteOrderMarkStaysFirst() {
        let out = Array(Self.render("\u{FEFF}<p>x</p>").utf8)
        #expect(Array(out.prefix(3)) == [0xEF, 0xBB, 0xBF])
        #expect(String(decoding: out.dropFirst(3), as: UTF8.self).hasPrefix("\n<meta name=\"apple-itunes-app\""))
    }

    @Test func markupInCommentsAndScriptsIsNotAnExistingBanner() {
        let html = """
            <html><head><!-- <meta name="apple-itunes-app" content="app-id=1"> -->
            <script>var s = '<meta name="apple-itunes-app" content="x">'; var h = "<head>";</script></head></html>
            """
        let out = Self.render(html)
        #expect(out.contains("app-id=640199958"), "\(out)")
        #expect(out.hasPrefix("<html><head>\n<meta"))
    }

    @Test func thePageCanOptOutWithAComment() {
        let out = Self.render("<html><head><!-- aasa-server: no-banner --></head></html>")
        #expect(!out.contains("apple-itunes-app"))
        #expect(out.contains("apple-touch-icon"))
    }

    @Test func excludedPagesGetIconsOnly() {
        let page = Self.markup.inject(into: Array("<head></head>".utf8), withBanner: false)
        #expect(page.isStatic)
        #expect(!String(decoding: page.fixedBytes, as: UTF8.self).contains("apple-itunes-app"))
    }

    @Test func aHugePageIsScannedOnceAndSplicedAroundTheArgument() {
        let body = String(repeating: "<p class=\"x\">lorem ipsum <b>dolor</b> sit amet</p>\n", count: 200_000)
        let html = "<!DOCTYPE html><html><head><title>big</title></head><body>" + body + "</body></html>"
        let page = Self.markup.inject(into: Array(html.utf8), withBanner: true)
        #expect(page.slots == [.appArgument])
        #expect(page.chunks.count == 2)
        let out = page.render(appArgument: Array("A".utf8), pageURL: [])
        #expect(out.count == page.chunks[0].count + page.chunks[1].count + 1)
        #expect(page.chunks[1].count > html.utf8.count - 100)
    }

    @Test(arguments: [
        "\"><script>alert(1)</script>", "'><svg onload=alert(1)>", "a=1,app-id=666", "x=%0A%0D\u{7}", "<!--",
        "q=\"&lt;", "x=%zz%", "u=\u{1}\u{0}",
    ])
    func aHostileQueryStringNeverProducesMarkup(query: String) {
        let request = PageRequest(domain: "shop.example", path: Array("/a".utf8), query: query)
        let out = Self.render("<html><head></head><body></body></html>", request: request)
        let start = out.firstRange(of: "content=\"")!.upperBound
        let content = out[start...].prefix { $0 != "\"" }
        let argument = content.dropFirst("app-id=640199958, app-argument=".count)
        // Nothing in the value can end the attribute, open a tag, or start another banner parameter.
        #expect(!content.contains("<") && !content.contains(">") && !content.contains("'"))
        #expect(!argument.contains(","), "\(content)")
        #expect(!content.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F })
        // The meta and two icon links are the only new tags.
        #expect(Self.count("<", in: out) == Self.count("<", in: "<html><head></head><body></body></html>") + 3)
        #expect(content.hasPrefix("app-id=640199958, app-argument=https://shop.example/a?"))
    }

    @Test func aStaticTemplateIsRenderedAtLoadAndOffLeavesItOut() {
        var banner = Self.banner
        banner.appArgument = .template("shopapp://home, now")
        let fixed = HeadMarkup(banner: banner, icons: []).inject(into: Array("<head>".utf8), withBanner: true)
        #expect(fixed.isStatic)
        #expect(
            String(decoding: fixed.fixedBytes, as: UTF8.self)
                == "<head>\n<meta name=\"apple-itunes-app\" content=\"app-id=640199958, app-argument=shopapp://home%2C%20now\">"
        )
        banner.appArgument = .off
        let off = HeadMarkup(banner: banner, icons: []).inject(into: Array("<head>".utf8), withBanner: true)
        #expect(
            String(decoding: off.fixedBytes, as: UTF8.self)
                == "<head>\n<meta name=\"apple-itunes-app\" content=\"app-id=640199958\">")
    }

    @Test func aTemplateWithPlaceholdersUsesTheRequest() {
        var banner = Self.banner
        banner.appArgument = .template("shopapp://open{path}?{query}")
        let request = PageRequest(domain: "shop.example", path: Array("/buy/x".utf8), query: "a=1&b=2")
        #expect(
            HeadMarkup.appArgument(banner.appArgument, for: request).map { String(decoding: $0, as: UTF8.self) }
                == "shopapp://open/buy/x?a=1&amp;b=2")
    }

    /// A page over one TLS record is sent from its own chunks, never copied per URL: its own bytes are the URL's.
    @Test(arguments: [100, SplicedPage.joinedUpTo, SplicedPage.joinedUpTo + 1, 16 << 20])
    func aLargePageIsSentFromTheChunksItSharesWithEveryURL(size: Int) {
        let argument = Array("https://shop.example/a?b=1".utf8)
        let fixed = size - argument.count
        let page = SplicedPage(
            chunks: [[UInt8](repeating: 0x61, count: fixed / 2), [UInt8](repeating: 0x62, count: fixed - fixed / 2)],
            slots: [.appArgument])
        let (parts, ownBytes) = page.parts(appArgument: argument, pageURL: [])
        #expect(Array(parts.joined()) == page.render(appArgument: argument, pageURL: []))
        #expect(parts.reduce(0) { $0 + $1.count } == size)
        if size <= SplicedPage.joinedUpTo {
            #expect(parts.count == 1 && ownBytes == size)
        } else {
            #expect(parts.count == 3 && ownBytes == argument.count)
            for (part, chunk) in [(parts[0], page.chunks[0]), (parts[2], page.chunks[1])] {
                let shared = part.withUnsafeBytes { part in chunk.withUnsafeBytes { $0.baseAddress == part.baseAddress }
                }
                #expect(shared, "the part is the page's chunk itself, not a copy")
            }
        }
    }

    @Test(arguments: [
        ("/", nil, "https://shop.example/"), ("/", "", "https://shop.example/?"),
        ("/buy/x", "a=1", "https://shop.example/buy/x?a=1"),
    ])
    func theRequestURLIsTheDomainsCanonicalOrigin(path: String, query: String?, expected: String) {
        let request = PageRequest(domain: "shop.example", path: Array(path.utf8), query: query)
        #expect(String(decoding: request.url, as: UTF8.self) == expected)
    }
}

/// Spec §10.7 vectors 105–110: the banner's markup.
@Suite struct BannerRenderingTests {
    static func tag(_ banner: BannerConfig, argument: String? = nil) -> String {
        var content = HeadMarkup.bannerContent(banner)
        if let argument {
            let request = PageRequest(domain: "e.com", path: [], query: nil)
            var withArgument = banner
            withArgument.appArgument = .template(argument)
            content +=
                ", app-argument="
                + String(decoding: HeadMarkup.appArgument(withArgument.appArgument, for: request)!, as: UTF8.self)
        }
        return "<meta name=\"apple-itunes-app\" content=\"\(content)\">"
    }

    @Test func vector105AppIDOnly() {
        #expect(
            Self.tag(BannerConfig(appStoreID: "640199958"))
                == "<meta name=\"apple-itunes-app\" content=\"app-id=640199958\">")
    }

    @Test func vector106ArgumentIsHTMLEscaped() {
        #expect(
            Self.tag(BannerConfig(appStoreID: "640199958"), argument: "https://e.com/a?b=1&c=2")
                == "<meta name=\"apple-itunes-app\" content=\"app-id=640199958, app-argument=https://e.com/a?b=1&amp;c=2\">"
        )
    }

    @Test func vector107CommasArePercentEncoded() {
        #expect(
            Self.tag(BannerConfig(appStoreID: "1"), argument: "https://e.com/a,b?c=1,2").hasSuffix(
                "app-argument=https://e.com/a%2Cb?c=1%2C2\">"))
    }

    @Test func vector108AppClip() {
        let banner = BannerConfig(
            appStoreID: "640199958", appClipBundleID: "com.example.MyApp.Clip", appClipDisplay: "card")
        #expect(
            Self.tag(banner)
                == "<meta name=\"apple-itunes-app\" content=\"app-id=640199958, app-clip-bundle-id=com.example.MyApp.Clip, app-clip-display=card\">"
        )
    }

    @Test func affiliateDataIsPassedThroughEncoded() {
        let banner = BannerConfig(appStoreID: "1", affiliateData: "at=10l3Vy&ct=a,b")
        #expect(
            Self.tag(banner)
                == "<meta name=\"apple-itunes-app\" content=\"app-id=1, affiliate-data=at=10l3Vy&amp;ct=a%2Cb\">")
    }

    static let clipApp = #""appClips": ["ABCDE12345.com.example.MyApp.Clip"]"#

    @Test(arguments: [
        (#""smartAppBanner": {"appStoreID": "id640199958"}"#, Rule.bannerAppStoreID),
        (#""smartAppBanner": {"appStoreID": ""}"#, .bannerAppStoreID),
        (#""smartAppBanner": {"appStoreID": 640199958}"#, .wrongType),
        (#""smartAppBanner": {}"#, .missingKey),
        (
            clipApp
                + #", "smartAppBanner": {"appStoreID": "1", "appClipBundleID": "com.example.MyApp.Clip", "appClipDisplay": "banner"}"#,
            .bannerAppClip
        ),
        (
            clipApp
                + #", "smartAppBanner": {"appStoreID": "1", "appClipBundleID": "ABCDE12345.com.example.MyApp.Clip"}"#,
            .bannerAppClip
        ),
        (#""smartAppBanner": {"appStoreID": "1", "appClipBundleID": "com.example.Other.Clip"}"#, .bannerAppClip),
        (#""smartAppBanner": {"appStoreID": "1", "affiliateData": "a\nb"}"#, .bannerControlCharacter),
        (#""smartAppBanner": {"appStoreID": "1", "appArgument": "x://\u0007"}"#, .bannerControlCharacter),
        (#""smartAppBanner": {"appStoreID": "1", "appArgument": "x://{host}"}"#, .bannerAppArgument),
        (#""smartAppBanner": {"appStoreID": "1", "exclude": ["checkout"]}"#, .bannerExclude),
        (#""pages": {"landingPage": {"title": "x"}}"#, .landingPage),
        (#""pages": {"cacheControl": ""}"#, .cacheControl),
    ])
    func vector109BadSettingsAreRejected(json: String, rule: Rule) {
        let loaded = loadSite("{\(json)}")
        #expect(loaded.diagnostics.errors.map(\.rule).contains(rule), "\(loaded.diagnostics)")
        #expect(!loaded.isPublishable)
    }

    @Test func vector109AValidAppClipBannerLoads() {
        let loaded = loadSite(
            "{\(Self.clipApp), \"smartAppBanner\": {\"appStoreID\": \"640199958\", \"appClipBundleID\": \"com.example.MyApp.Clip\", \"appClipDisplay\": \"card\"}}"
        )
        #expect(loaded.diagnostics.errors.isEmpty, "\(loaded.diagnostics)")
    }

    @Test func vector110TheTagIsEmittedInsideHead() {
        let markup = HeadMarkup(banner: BannerConfig(appStoreID: "640199958", appArgument: .off), icons: [])
        let page = markup.inject(
            into: Array("<html><head><title>t</title></head><body></body></html>".utf8), withBanner: true)
        let html = String(decoding: page.fixedBytes, as: UTF8.self)
        let head = html[html.firstRange(of: "<head>")!.upperBound..<html.firstRange(of: "</head>")!.lowerBound]
        #expect(head.contains("<meta name=\"apple-itunes-app\" content=\"app-id=640199958\">"))
    }
}
