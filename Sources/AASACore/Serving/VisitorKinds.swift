/// Which visitors any of a domain's pages differs for: what of a visitor is worth telling apart when its pages are
/// answered and their renderings kept, so visitors that get the same page share one rendering per URL.
struct VisitorKinds: Sendable {
    /// A page shows desktop visitors a QR code.
    private var desktop = false
    /// A page has the `open-in-browser` element.
    private var inAppBrowsers = false
    /// A page has the landing page's buttons, which differ for iPhones and Android phones.
    private var phones = false

    /// The kinds `pages` (the per-visitor pages of a domain) differ for; desktops only when `qrCodes` are drawn.
    init(pages: [SplicedPage], qrCodes: Bool) {
        for slot in pages.flatMap(\.slots) {
            switch slot {
            case .qrCode, .floatingQRCode: desktop = desktop || qrCodes
            case .openInBrowser: inAppBrowsers = true
            case .appButtons: phones = true
            case .appArgument, .pageURL: break
            }
        }
    }

    /// Whether no page differs for anyone, so the `User-Agent` is not read.
    var isEmpty: Bool { !desktop && !inAppBrowsers && !phones }

    /// `visitor` as far as the domain's pages tell visitors apart: ``Visitor/other`` when none differs for them.
    func relevant(_ visitor: Visitor) -> Visitor {
        var visitor = visitor
        if !inAppBrowsers { visitor.inAppBrowser = nil }
        switch visitor.platform {
        case .desktop: return desktop ? visitor : .other
        case .iOS, .android: return phones || visitor.inAppBrowser != nil ? visitor : .other
        case .other: return .other
        }
    }
}
