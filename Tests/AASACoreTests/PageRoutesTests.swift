import Foundation
import Testing

@testable import AASACore

/// A request as a transport would hand it over, for routing without sockets.
struct FakeRequest: HTTPRequest {
    var method: RequestMethod = .get
    var path: String
    var headers: [String: String] = [:]
    var rawQuery: String?
    var tlsServerName: String? = nil
    var remoteAddress: String = ""

    func withPath<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        var bytes = Array(path.utf8)
        return bytes.withUnsafeMutableBytes { body(UnsafeRawBufferPointer($0)) }
    }

    func withHeader<R>(_ name: StaticString, _ body: (UnsafeRawBufferPointer?) -> R) -> R {
        let wanted = name.description.lowercased()
        guard let value = headers.first(where: { $0.key.lowercased() == wanted })?.value else { return body(nil) }
        var bytes = Array(value.utf8)
        return bytes.withUnsafeMutableBytes { body(UnsafeRawBufferPointer($0)) }
    }
}

/// A domain folder on disk with `pages/`, loaded the way the server loads it.
final class PagesFixture {
    let root = NSTemporaryDirectory() + "aasa-pages-\(UUID().uuidString)"
    var folder: String { root + "/shop.example" }

    init(siteJSON: String, files: [String: [UInt8]]) throws {
        try write("site.json", Array(siteJSON.utf8))
        for (path, bytes) in files { try write("pages/" + path, bytes) }
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    func write(_ relative: String, _ bytes: [UInt8]) throws {
        let path = folder + "/" + relative
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    func load() -> LoadedDomain {
        SiteConfigLoader().loadDomain(domain: "shop.example", file: folder + "/site.json")
    }

    func routes(rendered: RenderedPages = RenderedPages()) throws -> SiteRoutes {
        let loaded = load()
        let published = try #require(loaded.published, "\(loaded.diagnostics)")
        return SiteRoutes([published], rendered: rendered)
    }

    static func png(_ width: Int, _ height: Int) -> [UInt8] {
        var bytes = PNGInfo.signature + [0, 0, 0, 13] + Array("IHDR".utf8)
        for value in [width, height] {
            bytes += [
                UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF),
            ]
        }
        return bytes + [8, 6, 0, 0, 0, 0, 0, 0, 0]
    }
}

extension SiteRoutes {
    func answer(_ request: FakeRequest) -> Response {
        var request = request
        request.headers["Host"] = request.headers["Host"] ?? "shop.example"
        return route(request).response
    }

    func get(_ path: String, query: String? = nil, headers: [String: String] = [:]) -> Response {
        answer(FakeRequest(path: path, headers: headers, rawQuery: query))
    }
}

extension Response {
    var text: String { String(decoding: body, as: UTF8.self) }
}

@Suite struct PageRoutesTests {
    static let site = """
        {
          "universalLinks": {"apps": [{"appIDs": ["ABCDE12345.com.example.shop"], "rules": [{"path": "/account/*", "exclude": true}, {"path": "/buy/*"}, {"path": "/checkout/*"}]}]},
          "smartAppBanner": {"appStoreID": "640199958", "exclude": ["/checkout/*", "/legal.html"]},
          "pages": {"cacheControl": "public, max-age=60", "landingPage": {"title": "Shop & Co", "description": "<Best> shoes"}}
        }
        """

    static func fixture(_ site: String = site, extra: [String: [UInt8]] = [:]) throws -> PagesFixture {
        var files: [String: [UInt8]] = [
            "index.html": Array("<!DOCTYPE html><html><head><title>Home</title></head><body></body></html>".utf8),
            "about/index.html": Array("<html><head></head><body>about</body></html>".utf8),
            "legal.html": Array("<html><head></head></html>".utf8),
            "style.css": Array("body{}".utf8),
            "apple-touch-icon.png": PagesFixture.png(180, 180),
            "apple-touch-icon-120x120.png": PagesFixture.png(120, 120),
            ".secret": Array("no".utf8),
            "_landing.unused": Array("x".utf8),
        ]
        files.merge(extra) { $1 }
        return try PagesFixture(siteJSON: site, files: files)
    }

    @Test func pagesAreServedWithTypesTagsAndTheirOwnCacheControl() throws {
        let routes = try Self.fixture().routes()
        let css = routes.get("/style.css")
        #expect(css.status == 200)
        #expect(css.header("Content-Type") == "text/css; charset=utf-8")
        #expect(css.header("Cache-Control") == "public, max-age=60")
        #expect(css.header("ETag")?.hasPrefix("\"") == true)
        #expect(css.header("Last-Modified").flatMap(HTTPDate.parse) != nil)
        #expect(css.text == "body{}")
        // The association file keeps its own header.
        #expect(routes.get("/.well-known/apple-app-site-association").header("Cache-Control") == "max-age=3600")
    }

    @Test func everyHTMLPageCarriesTheBannerForItsOwnURL() throws {
        let routes = try Self.fixture().routes()
        for (path, query) in [("/", "a=1,2"), ("/about/", nil), ("/about", nil), ("/index.html", "x")] {
            let page = routes.get(path, query: query, headers: ["Host": "Shop.Example:8443"])
            #expect(page.status == 200)
            var url = "https://shop.example" + path
            if let query { url += "?" + query.replacingOccurrences(of: ",", with: "%2C") }
            #expect(
                page.text.contains(
                    "<meta name=\"apple-itunes-app\" content=\"app-id=640199958, app-argument=\(url)\">"),
                "\(page.text)")
            #expect(
                page.text.contains(
                    "<link rel=\"apple-touch-icon\" sizes=\"120x120\" href=\"/apple-touch-icon-120x120.png\">"))
            #expect(page.text.contains("<link rel=\"apple-touch-icon\" href=\"/apple-touch-icon.png\">"))
        }
    }

    @Test func aPageRenderedForAURLIsKeptForThatURLOnly() throws {
        let rendered = RenderedPages()
        let routes = try Self.fixture().routes(rendered: rendered)
        let first = routes.get("/about/", query: "a=1")
        #expect(rendered.count == 1)
        let again = routes.get("/about/", query: "a=1")
        #expect(again.body == first.body && again.header("ETag") == first.header("ETag"))
        #expect(rendered.count == 1)
        // Each part of the URL the page depends on is a different rendering, with its own bytes and tag.
        for query in ["a=2", nil] {
            let other = routes.get("/about/", query: query)
            #expect(other.body != first.body && other.header("ETag") != first.header("ETag"))
        }
        #expect(rendered.count == 3)
        // The Host header is not one of them: the page names the domain's canonical origin whatever it says.
        for host in ["shop.example:8443", "SHOP.EXAMPLE:1", "shop.example:443"] {
            let same = routes.get("/about/", query: "a=1", headers: ["Host": host])
            #expect(same.body == first.body && same.header("ETag") == first.header("ETag"), "\(host)")
        }
        #expect(rendered.count == 3)
        #expect(routes.get("/", query: "a=1").text.contains("app-argument=https://shop.example/?a=1\""))
        // A conditional request for a kept rendering still gets its 304.
        let tag = try #require(first.header("ETag"))
        #expect(routes.get("/about/", query: "a=1", headers: ["If-None-Match": tag]).status == 304)
        let since = try #require(first.header("Last-Modified"))
        #expect(routes.get("/about/", query: "a=1", headers: ["If-Modified-Since": since]).status == 304)
        // ...and a method other than GET and HEAD still gets 405, kept or not.
        #expect(routes.answer(FakeRequest(method: .other, path: "/about/", rawQuery: "a=1")).status == 405)
        // Two URLs of the same file are two renderings, each naming its own URL.
        #expect(
            routes.get("/about/index.html", query: "a=1").text.contains(
                "app-argument=https://shop.example/about/index.html?a=1\""))
    }

    @Test func keptRenderingsStayWithinTheirBudget() throws {
        let page = try Self.fixture().routes().get("/about/", query: "n=0")
        let rendered = RenderedPages(budget: 4 * (page.body.count + 80))
        let routes = try Self.fixture().routes(rendered: rendered)
        for n in 0..<50 {
            let answer = routes.get("/about/", query: "n=\(n)")
            #expect(answer.text.contains("app-argument=https://shop.example/about/?n=\(n)\""))
            #expect(rendered.count <= 4)
        }
    }

    @Test func excludedPagesHaveNoBanner() throws {
        let routes = try Self.fixture().routes()
        let legal = routes.get("/legal.html")
        #expect(legal.status == 200)
        #expect(!legal.text.contains("apple-itunes-app"))
        #expect(legal.text.contains("apple-touch-icon"))
    }

    @Test func conditionalRequestsGet304() throws {
        let routes = try Self.fixture().routes()
        for path in ["/style.css", "/", "/buy/shoes"] {
            let first = routes.get(path, query: "q=1")
            let etag = try #require(first.header("ETag"))
            let modified = try #require(first.header("Last-Modified"))
            #expect(routes.get(path, query: "q=1", headers: ["If-None-Match": etag]).status == 304, "\(path)")
            #expect(routes.get(path, query: "q=1", headers: ["If-Modified-Since": modified]).status == 304, "\(path)")
            #expect(
                routes.get(path, query: "q=1", headers: ["If-Modified-Since": "Thu, 01 Jan 1970 00:00:00 GMT"]).status
                    == 200)
            // If-None-Match wins over If-Modified-Since (RFC 9110 §13.2.2).
            #expect(
                routes.get(path, query: "q=1", headers: ["If-None-Match": "\"other\"", "If-Modified-Since": modified])
                    .status == 200)
            let notModified = routes.get(path, query: "q=1", headers: ["If-None-Match": etag])
            #expect(notModified.body.isEmpty && notModified.header("ETag") == etag)
        }
        // A different URL of the same page is a different representation: its tag differs.
        #expect(routes.get("/", query: "q=1").header("ETag") != routes.get("/", query: "q=2").header("ETag"))
    }

    @Test func theLandingPageAnswersClaimedURLsOnly() throws {
        let routes = try Self.fixture().routes()
        let claimed = routes.get("/buy/red-shoes", query: "utm=\"><script>")
        #expect(claimed.status == 200)
        #expect(claimed.header("Content-Type") == "text/html; charset=utf-8")
        #expect(claimed.text.contains("<title>Shop &amp; Co</title>"))
        #expect(claimed.text.contains("<meta property=\"og:description\" content=\"&lt;Best&gt; shoes\">"))
        #expect(claimed.text.contains("href=\"https://apps.apple.com/app/id640199958\""))
        #expect(
            claimed.text.contains(
                "content=\"app-id=640199958, app-argument=https://shop.example/buy/red-shoes?utm=%22%3E%3Cscript%3E\">")
        )
        #expect(
            claimed.text.contains(
                "<meta property=\"og:url\" content=\"https://shop.example/buy/red-shoes?utm=%22%3E%3Cscript%3E\">"))
        #expect(!claimed.text.contains("<script>"))
        // Excluded from the banner: still the landing page, without it.
        let checkout = routes.get("/checkout/pay")
        #expect(checkout.status == 200 && !checkout.text.contains("apple-itunes-app"))
        for path in ["/account/x", "/other", "/buy/../x", "/apple-touch-icon-57x57.png.html"] {
            let response = routes.get(path)
            #expect(response.status == 404, "\(path)")
            #expect(response.header("Content-Type") == "text/plain; charset=utf-8")
        }
    }

    @Test func theLandingPageCanBeSwitchedOffOrTemplated() throws {
        let off = try Self.fixture(
            Self.site.replacingOccurrences(of: #""landingPage": {"#, with: #""landingPage": {"enabled": false, "#)
        ).routes()
        #expect(off.get("/buy/x").status == 404)
        let template =
            "<html><head><title>{{title}}</title></head><body><a href=\"{{appStoreURL}}\">{{ description }}</a> {{url}} {{domain}}</body></html>"
        let custom = try Self.fixture(extra: ["_landing.html": Array(template.utf8)]).routes()
        let page = custom.get("/buy/x", query: "a=<b>")
        #expect(page.status == 200)
        #expect(
            page.text.hasSuffix(
                "<a href=\"https://apps.apple.com/app/id640199958\">&lt;Best&gt; shoes</a> https://shop.example/buy/x?a=%3Cb%3E shop.example</body></html>"
            ),
            "\(page.text)")
        #expect(page.text.contains("app-argument=https://shop.example/buy/x?a=%3Cb%3E"))
        // The template itself is never served.
        #expect(custom.get("/_landing.html").status == 404)
    }

    /// Hosts naming the domain with ports a client may send: none of it reaches the page (a cache that ignores
    /// the port would otherwise hand one client's variant to everyone).
    @Test(arguments: ["shop.example:8443", "shop.example:80", "SHOP.example:1", "shop.example:65535", "shop.example"])
    func theLandingPageNamesTheDomainsCanonicalOriginWhateverTheHostSays(host: String) throws {
        let template = "<html><head>{{url}}</head><body><a href=\"{{url}}\">{{domain}}</a></body></html>"
        for routes in [
            try Self.fixture().routes(), try Self.fixture(extra: ["_landing.html": Array(template.utf8)]).routes(),
        ] {
            let page = routes.get("/buy/red-shoes", query: "a=\"><b>&c=1", headers: ["Host": host])
            #expect(page.status == 200, "\(host)")
            let url = "https://shop.example/buy/red-shoes?a=%22%3E%3Cb%3E&amp;c=1"
            #expect(page.text.contains("content=\"app-id=640199958, app-argument=\(url)\">"), "\(page.text)")
            #expect(page.text.components(separatedBy: url).count == 4, "\(page.text)")
            #expect(!page.text.contains("shop.example:") && !page.text.contains("<b>"), "\(page.text)")
        }
        let builtIn = try Self.fixture().routes().get("/buy/x", headers: ["Host": host]).text
        #expect(builtIn.contains("<meta property=\"og:url\" content=\"https://shop.example/buy/x\">"))
        #expect(builtIn.contains("<link rel=\"canonical\" href=\"https://shop.example/buy/x\">"))
    }

    @Test(arguments: [(LandingTemplate.maximumURLUses, true), (LandingTemplate.maximumURLUses + 1, false)])
    func aTemplateUsesTheURLAtMostSixteenTimes(uses: Int, accepted: Bool) throws {
        let template = "<p>" + String(repeating: "{{ url }} ", count: uses) + "</p>"
        let fixture = try Self.fixture(extra: ["_landing.html": Array(template.utf8)])
        let errors = fixture.load().diagnostics.errors.filter { $0.rule == .landingTemplate }
        #expect(errors.isEmpty == accepted, "\(errors)")
        if !accepted {
            #expect(errors.first?.message.contains("{{url}} is used \(uses) times") == true, "\(errors)")
            #expect(errors.first?.message.contains("at most \(LandingTemplate.maximumURLUses)") == true)
        } else {
            let page = try fixture.routes().get("/buy/x")
            // Each use, and the banner's app-argument.
            #expect(page.text.components(separatedBy: "https://shop.example/buy/x").count == uses + 2)
        }
    }

    @Test func aTemplateWithAnUnknownPlaceholderIsAnError() throws {
        let fixture = try Self.fixture(extra: ["_landing.html": Array("<p>{{titel}}</p>".utf8)])
        let loaded = fixture.load()
        #expect(loaded.diagnostics.errors.contains { $0.rule == .landingTemplate && $0.message.contains("titel") })
    }

    @Test func probesGetTheBestIconOrAQuick404() throws {
        let routes = try Self.fixture().routes()
        let expectations = [
            ("/apple-touch-icon-precomposed.png", 180), ("/apple-touch-icon-152x152.png", 180),
            ("/apple-touch-icon-76x76-precomposed.png", 120), ("/apple-touch-icon-200x200.png", 180),
            ("/apple-touch-icon-120x120.png", 120),
        ]
        for (path, size) in expectations {
            let response = routes.get(path)
            #expect(response.status == 200, "\(path)")
            #expect(response.header("Content-Type") == "image/png")
            #expect(PNGInfo(response.body)?.width == size, "\(path)")
        }
        let bare = try PagesFixture(siteJSON: "{}", files: ["index.html": Array("<p>".utf8)]).routes()
        let missing = bare.get("/apple-touch-icon.png")
        #expect(missing.status == 404 && missing.header("Content-Type") == "text/plain; charset=utf-8")
    }

    @Test func dotfilesTemplatesAndUnknownMethodsAreNotServed() throws {
        let routes = try Self.fixture().routes()
        #expect(routes.get("/.secret").status == 404)
        #expect(routes.get("/%2esecret").status == 404)
        #expect(routes.answer(FakeRequest(method: .other, path: "/style.css")).status == 405)
        #expect(routes.answer(FakeRequest(method: .head, path: "/style.css")).status == 200)
    }

    @Test func iconsAreCheckedAndA180IsRecommended() throws {
        let fixture = try PagesFixture(
            siteJSON:
                #"{"pages": {"touchIcons": ["/icons/a.png", "/icons/wide.png", "/icons/fake.png", "/icons/none.png", "icons/a.png"]}}"#,
            files: [
                "icons/a.png": PagesFixture.png(152, 152), "icons/wide.png": PagesFixture.png(200, 100),
                "icons/fake.png": Array("GIF89a...................".utf8),
            ])
        let rules = fixture.load().diagnostics.map(\.rule)
        for rule: Rule in [.touchIconSquare, .touchIconFormat, .touchIconMissing, .touchIcon180] {
            #expect(rules.contains(rule), "\(rule) in \(rules)")
        }
        let good = try PagesFixture(siteJSON: "{}", files: ["apple-touch-icon.png": PagesFixture.png(180, 180)])
        #expect(good.load().diagnostics.isEmpty, "\(good.load().diagnostics)")
    }

    @Test func sizeCapsAreClearErrors() throws {
        let fixture = try Self.fixture(extra: ["big.bin": [UInt8](repeating: 0, count: 2048)])
        var loader = PageLoader()
        loader.maximumFileBytes = 1024
        let context = SiteContext(domain: "shop.example", config: SiteConfig())
        let output = loader.load(context, folder: fixture.folder)
        #expect(output.diagnostics.contains { $0.rule == .pageTooLarge && $0.message.contains("/big.bin") })
        loader.maximumFileBytes = 1 << 20
        loader.maximumTotalBytes = 1000
        #expect(loader.load(context, folder: fixture.folder).diagnostics.contains { $0.rule == .pagesTooLarge })
    }

    @Test func theWalkLooksAtABoundedNumberOfEntries() throws {
        var extra: [String: [UInt8]] = [:]
        for index in 0..<40 { extra["bad%\(index)x"] = [] }
        let fixture = try Self.fixture(extra: extra)
        var loader = PageLoader()
        loader.maximumEntries = 25
        let context = SiteContext(domain: "shop.example", config: SiteConfig())
        let diagnostics = loader.load(context, folder: fixture.folder).diagnostics
        #expect(diagnostics.filter { $0.rule == .pageName }.count < 25, "\(diagnostics.count) findings")
        #expect(diagnostics.contains { $0.rule == .pagesTooLarge && $0.message.contains("more than 25 entries") })
        loader.maximumEntries = 1000
        #expect(!loader.load(context, folder: fixture.folder).diagnostics.contains { $0.rule == .pagesTooLarge })
    }

    @Test func symlinksOutOfPagesAreNotLoaded() throws {
        let fixture = try Self.fixture()
        try FileManager.default.createSymbolicLink(
            atPath: fixture.folder + "/pages/config.json", withDestinationPath: "../site.json")
        try FileManager.default.createSymbolicLink(atPath: fixture.folder + "/pages/etc", withDestinationPath: "/etc")
        try FileManager.default.createSymbolicLink(
            atPath: fixture.folder + "/pages/home.html", withDestinationPath: "index.html")
        let loaded = fixture.load()
        #expect(loaded.diagnostics.filter { $0.rule == .pageSymlink }.count == 2, "\(loaded.diagnostics)")
        let routes = SiteRoutes([try #require(loaded.published)])
        #expect(routes.get("/config.json").status == 404)
        #expect(routes.get("/etc/passwd").status == 404)
        #expect(routes.get("/home.html").status == 200)
    }

    @Test func aDomainWithoutPagesOrBannerServesAsBefore() throws {
        let fixture = try PagesFixture(siteJSON: "{}", files: [:])
        #expect(fixture.load().pages == nil)
    }
}
