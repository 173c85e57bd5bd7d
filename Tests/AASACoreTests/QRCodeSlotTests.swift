import Testing

@testable import AASACore

/// Where a page's QR code goes: a slot filled per request, empty for anyone but a desktop visitor.
@Suite struct QRCodeSlotTests {
    static let markup = HeadMarkup(banner: BannerConfig(appStoreID: "640199958"), icons: [])

    @Test(arguments: [
        ("<html><head><title>a</title></head><body><p>a</p></body></html>", "<p>a</p>", "</body></html>"),
        ("<html><head></head><BODY>x</Body >\n</html>", "x", "</Body >\n</html>"),
        // Only the last `</body>`: one in a script or a comment comes before it.
        ("<head></head><body><!-- </body> --></body>", "<!-- </body> -->", "</body>"),
        // No `</body>`: at the end.
        ("<p>no structure", "<p>no structure", ""),
    ])
    func aHostedPageWithTheBannerGetsTheCodeBeforeItsLastBodyEnd(page: String, before: String, after: String) {
        let spliced = Self.markup.inject(into: Array(page.utf8), withBanner: true, floatingQRCode: true)
        #expect(spliced.slots == [.appArgument, .floatingQRCode])
        #expect(spliced.hasQRCode)
        let rendered = String(
            decoding: spliced.render(
                SplicedPage.Values(appArgument: [], pageURL: [], floatingQRCode: Array("[QR]".utf8))), as: UTF8.self)
        #expect(rendered.hasSuffix(before + "[QR]" + after), "\(rendered)")
        // Without the code, the page is as the banner alone makes it.
        let plain = Self.markup.inject(into: Array(page.utf8), withBanner: true)
        #expect(spliced.render(appArgument: [], pageURL: []) == plain.render(appArgument: [], pageURL: []))
    }

    @Test func aPageWithoutTheBannerGetsNoCode() {
        let page = Array("<html><head></head><body>x</body></html>".utf8)
        #expect(!Self.markup.inject(into: page, withBanner: false, floatingQRCode: true).hasQRCode)
        let ownBanner = Array("<head><meta name=\"apple-itunes-app\" content=\"app-id=1\"></head><body></body>".utf8)
        #expect(!Self.markup.inject(into: ownBanner, withBanner: true, floatingQRCode: true).hasQRCode)
        #expect(
            !HeadMarkup(banner: nil, icons: []).inject(into: page, withBanner: true, floatingQRCode: true).hasQRCode)
    }

    @Test(arguments: [
        ("<p>{{qrCode}}</p>", [String]()), ("<p>{{ qrCode }}</p>", []),
        ("{{qrCode}}{{qrCode}}", ["{{qrCode}} used 2 times (at most 1: one QR code per page)"]),
        (
            "{{qrcode}}",
            ["unknown placeholder {{qrcode}} (known: " + LandingTemplate.placeholders.joined(separator: ", ") + ")"]
        ),
    ])
    func theLandingTemplateKnowsQRCodeOnce(text: String, problems: [String]) {
        #expect(LandingTemplate(text: text).problems == problems)
    }

    @Test func theBuiltInLandingPageHasOneQRCodeSlotInItsMain() {
        let template = LandingTemplate.builtIn(hasImage: false)
        #expect(template.problems.isEmpty)
        let values = LandingTemplate.Values(
            title: "T", description: "D", appStoreURL: "https://apps.apple.com/app/id1", appStoreID: "1", image: "",
            domain: "shop.example")
        let page = SplicedPage(chunks: [template.fill(values)], slots: []).splitting(
            LandingTemplate.qrCodeMarker, into: .qrCode)
        #expect(page.slots == [.qrCode])
        let text = String(
            decoding: page.render(SplicedPage.Values(appArgument: [], pageURL: [], qrCode: Array("[QR]".utf8))),
            as: UTF8.self)
        #expect(text.contains("</small>[QR]\n</main>"))
    }
}
