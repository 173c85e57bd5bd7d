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
        let spliced = Self.markup.inject(into: Array(page.utf8), withBanner: true, visitorSlots: true)
        #expect(spliced.slots == [.appArgument, .openInBrowser, .floatingQRCode])
        let rendered = String(
            decoding: spliced.render(
                SplicedPage.Values(appArgument: [], pageURL: [], floatingQRCode: Array("[QR]".utf8))), as: UTF8.self)
        #expect(rendered.hasSuffix(before + "[QR]" + after), "\(rendered)")
        // Without the code, the page is as the banner alone makes it.
        let plain = Self.markup.inject(into: Array(page.utf8), withBanner: true)
        #expect(spliced.render(appArgument: [], pageURL: []) == plain.render(appArgument: [], pageURL: []))
    }

    @Test(arguments: [
        ("<html><head></head><body class=\"a>b\" data-x='>'><p>x</p></body></html>", "data-x='>'>", "<p>x</p>"),
        ("<HTML><HEAD></HEAD><BODY>\n<p>x</p></BODY></HTML>", "<BODY>", "\n<p>x</p>"),
        // `<bodyguard>` is not the body; without a body tag, right after `</head>`.
        ("<html><head><bodyguard></bodyguard></head ><p>x</p></html>", "</head >", "<p>x</p>"),
        // Neither: right after what the head gets.
        ("<p>no structure</p>", "/apple-touch-icon.png\">", "<p>no structure</p>"),
    ])
    func anInAppBrowsersWayOutGoesFirstInTheBody(page: String, before: String, after: String) {
        let markup = HeadMarkup(
            banner: BannerConfig(appStoreID: "640199958"),
            icons: [TouchIcon(path: "/apple-touch-icon.png", size: 180)])
        let spliced = markup.inject(into: Array(page.utf8), withBanner: true, visitorSlots: true)
        var values = SplicedPage.Values(appArgument: [], pageURL: [])
        values.openInBrowser = Array("[OPEN]".utf8)
        let rendered = String(decoding: spliced.render(values), as: UTF8.self)
        #expect(rendered.contains(before + "[OPEN]" + after), "\(rendered)")
    }

    @Test func aPageWithoutTheBannerGetsNoCode() {
        let page = Array("<html><head></head><body>x</body></html>".utf8)
        #expect(!Self.markup.inject(into: page, withBanner: false, visitorSlots: true).slots.contains(.floatingQRCode))
        let ownBanner = Array("<head><meta name=\"apple-itunes-app\" content=\"app-id=1\"></head><body></body>".utf8)
        #expect(
            !Self.markup.inject(into: ownBanner, withBanner: true, visitorSlots: true).slots.contains(.floatingQRCode))
        #expect(
            !HeadMarkup(banner: nil, icons: []).inject(into: page, withBanner: true, visitorSlots: true).slots.contains(
                .floatingQRCode))
    }

    @Test(arguments: [
        ("<p>{{qrCode}}</p>", [String]()), ("<p>{{ qrCode }}</p>", []),
        ("{{qrCode}}{{qrCode}}", ["{{qrCode}} used 2 times (at most once: one per page)"]),
        ("{{appButtons}}{{openInBrowser}}{{appButtons}}", ["{{appButtons}} used 2 times (at most once: one per page)"]),
        ("<p>\u{1}aasa-url\u{1}</p>", ["a U+0001 control character"]),
        (
            "{{qrcode}}",
            ["unknown placeholder {{qrcode}} (known: " + LandingTemplate.placeholders.joined(separator: ", ") + ")"]
        ),
    ])
    func theLandingTemplateKnowsQRCodeOnce(text: String, problems: [String]) {
        #expect(LandingTemplate(text: text).problems == problems)
    }

    @Test func theBuiltInLandingPageHasTheWayOutAtTheTopAndTheButtonsAndCodeInItsMain() {
        let template = LandingTemplate.builtIn(hasImage: false)
        #expect(template.problems.isEmpty)
        let values = LandingTemplate.Values(
            title: "T", description: "D", appStoreURL: "https://apps.apple.com/app/id1", appStoreID: "1", image: "",
            domain: "shop.example")
        let page = LandingTemplate.splitMarkers(SplicedPage(chunks: [template.fill(values)], slots: []))
        #expect(page.slots == [.pageURL, .pageURL, .openInBrowser, .appButtons, .qrCode])
        var values2 = SplicedPage.Values(appArgument: [], pageURL: [], qrCode: Array("[QR]".utf8))
        values2.openInBrowser = Array("[OPEN]".utf8)
        values2.appButtons = Array("[BUTTONS]".utf8)
        let text = String(decoding: page.render(values2), as: UTF8.self)
        #expect(text.contains("<body>[OPEN]\n<main>"))
        #expect(text.contains("[BUTTONS][QR]\n</main>"))
    }
}
