/// Which visitors a page, or any of a domain's pages, differs for: decided once per page at load, so a request asks
/// a few flags, and what of a visitor is worth telling apart when renderings are kept (visitors that get the same
/// page share one rendering per URL).
struct VisitorKinds: Sendable {
    /// A page shows desktop visitors a QR code.
    private(set) var desktop = false
    /// A page has the `open-in-browser` element.
    private(set) var inAppBrowsers = false
    /// A page has the landing page's buttons, which differ for iPhones and Android phones.
    private(set) var phones = false

    /// No page differs for anyone.
    init() {}

    /// The kinds `page`'s slots differ for; desktops only when `qrCodes` are drawn.
    init(_ page: SplicedPage, qrCodes: Bool) {
        for slot in page.slots {
            switch slot {
            case .qrCode, .floatingQRCode: desktop = desktop || qrCodes
            case .openInBrowser: inAppBrowsers = true
            case .appButtons: phones = true
            case .appArgument, .pageURL: break
            }
        }
    }

    /// The kinds either differs for.
    func union(_ other: VisitorKinds) -> VisitorKinds {
        var union = self
        union.desktop = desktop || other.desktop
        union.inAppBrowsers = inAppBrowsers || other.inAppBrowsers
        union.phones = phones || other.phones
        return union
    }

    /// Whether no page differs for anyone, so the `User-Agent` is not read.
    var isEmpty: Bool { !desktop && !inAppBrowsers && !phones }

    /// Whether `visitor` gets a page of their own.
    func differs(for visitor: Visitor) -> Bool {
        switch visitor.platform {
        case .desktop: desktop
        case .iOS, .android: phones || (inAppBrowsers && visitor.inAppBrowser != nil)
        case .other: false
        }
    }

    /// `visitor` as far as the pages tell visitors apart: ``Visitor/other`` when none differs for them.
    func relevant(_ visitor: Visitor) -> Visitor {
        var visitor = visitor
        if !inAppBrowsers { visitor.inAppBrowser = nil }
        return differs(for: visitor) ? visitor : .other
    }
}
