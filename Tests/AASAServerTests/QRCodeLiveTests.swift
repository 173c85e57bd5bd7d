import AASACore
import AASATestSupport
import Foundation
import Testing

@testable import AASAServer

/// The QR code desktop visitors get, from the real daemon over real HTTPS (curl), read back with `zbarimg`.
@Suite(.serialized) struct QRCodeLiveTests {
    static let desktop =
        "User-Agent: Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) "
        + "Version/18.0 Safari/605.1.15"
    static let iPhone =
        "User-Agent: Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
        + "Version/18.0 Mobile/15E148 Safari/604.1"

    /// The `<svg>…</svg>` of the page's QR code block, if it has one.
    static func qrSVG(_ page: String) -> String? {
        guard let block = page.firstRange(of: "<figure id=\"\(PageQRCode.elementID)\""),
            let start = page[block.upperBound...].firstRange(of: "<svg"),
            let end = page[start.lowerBound...].firstRange(of: "</svg>")
        else { return nil }
        return String(page[start.lowerBound..<end.upperBound])
    }

    /// The landing page (a URL the app claims) and the hosted index page (with the banner), with a query that the
    /// code leaves out.
    @Test(arguments: [
        ("/bags/tote?ref=mail&x=<y>", "https://shop.example/bags/tote", false),
        ("/?utm_source=a", "https://shop.example/", true),
    ])
    func desktopVisitorsGetAQRCodeOfThePageAndPhonesDoNot(path: String, url: String, floating: Bool) throws {
        let live = try PagesLiveTests.server()
        let request = path.replacingOccurrences(of: "<", with: "%3C").replacingOccurrences(of: ">", with: "%3E")
        let desktop = try live.get("shop.example", request, headers: [Self.desktop])
        #expect(desktop.status == 200)
        #expect(desktop.headers["vary"] == "User-Agent")
        let svg = try #require(Self.qrSVG(desktop.text), "\(desktop.text)")
        #expect(try ZBar.decode(svg: svg) == [url])
        #expect(desktop.text.contains(PageQRCode.caption))
        #expect(desktop.text.contains("position:fixed") == floating)
        #expect(!desktop.text.contains("<y>"))

        for phone in [
            Self.iPhone, "User-Agent: curl/8.0",
            "User-Agent: Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
        ] {
            let page = try live.get("shop.example", request, headers: [phone])
            #expect(page.status == 200)
            #expect(page.headers["vary"] == "User-Agent", "\(phone)")
            #expect(!page.text.contains(PageQRCode.elementID) && !page.text.contains("<svg"), "\(phone)")
            // The variants never share a tag: a cache or a 304 cannot give one for the other.
            let tag = try #require(page.headers["etag"])
            #expect(tag != desktop.headers["etag"])
            #expect(try live.get("shop.example", request, headers: [phone, "If-None-Match: \(tag)"]).status == 304)
            let crossed = try live.get("shop.example", request, headers: [Self.desktop, "If-None-Match: \(tag)"])
            #expect(crossed.status == 200 && crossed.text.contains(PageQRCode.elementID))
        }
        let etag = try #require(desktop.headers["etag"])
        let notModified = try live.get("shop.example", request, headers: [Self.desktop, "If-None-Match: \(etag)"])
        #expect(notModified.status == 304)
        #expect(notModified.headers["vary"] == "User-Agent")
    }

    @Test func answersThatDoNotDependOnTheVisitorSayNoVary() throws {
        let live = try PagesLiveTests.server()
        for path in [
            "/.well-known/apple-app-site-association", "/apple-app-site-association", "/.well-known/assetlinks.json",
            "/apple-touch-icon.png", "/apple-touch-icon-precomposed.png", "/not-claimed", "/bags/tote/../../x",
        ] {
            for agent in [Self.desktop, Self.iPhone] {
                let answer = try live.get("shop.example", path, headers: [agent])
                #expect(answer.headers["vary"] == nil, "\(path) \(agent): \(answer.status)")
                #expect(!answer.text.contains(PageQRCode.elementID), "\(path)")
            }
        }
    }

    /// A hosted page whose banner has no per-URL `app-argument` is the same for every visitor not on a desktop: the
    /// one answer prepared at load (its tag the page's own, the same for every URL and query), `Vary: User-Agent`
    /// included; only a desktop visitor's answer is rendered per URL, with the code.
    @Test func aPageWhoseOnlyPerURLPartIsTheCodeIsPreparedOnceForPhones() throws {
        let live = try LiveServer(prepare: { config in
            let file = config + "/shop.example/site.json"
            let text = try String(contentsOfFile: file, encoding: .utf8).replacingOccurrences(
                of: #"{ "appStoreID": "640199958" }"#, with: #"{ "appStoreID": "640199958", "appArgument": false }"#)
            try text.write(toFile: file, atomically: true, encoding: .utf8)
        })
        var tags: Set<String> = []
        for path in ["/", "/?utm_source=a", "/index.html?b=2"] {
            let page = try live.get("shop.example", path, headers: [Self.iPhone])
            #expect(page.status == 200)
            #expect(page.headers["vary"] == "User-Agent")
            #expect(page.text.contains("app-id=640199958") && !page.text.contains("<svg"), "\(page.text)")
            tags.insert(try #require(page.headers["etag"]))
        }
        // One prepared answer: its tag is the page's content tag alone, never a per-URL variant's.
        #expect(tags.count == 1, "\(tags)")
        let tag = try #require(tags.first)
        #expect(tag.wholeMatch(of: /"[0-9a-f]+"/) != nil, "\(tag)")
        #expect(try live.get("shop.example", "/?c=3", headers: [Self.iPhone, "If-None-Match: \(tag)"]).status == 304)

        let desktop = try live.get("shop.example", "/?utm_source=a", headers: [Self.desktop])
        #expect(desktop.headers["vary"] == "User-Agent")
        #expect(desktop.headers["etag"]?.contains("-desktop-") == true, "\(desktop.headers)")
        #expect(try ZBar.decode(svg: try #require(Self.qrSVG(desktop.text))) == ["https://shop.example/"])
    }
}
