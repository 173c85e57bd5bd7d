/// The `open-in-browser` element an in-app browser's visitor gets at the top of a page with the banner and of the
/// landing page: why the app does not open here, the link ``InAppBrowser`` says that browser honours, and the steps
/// to do by hand. Plain HTML styled inline: no stylesheet or script needed, and nothing of the site's is assumed.
public enum OpenInBrowser {
    /// The element's `id`.
    public static let elementID = "open-in-browser"

    /// The element for a visitor in `browser` on `platform`, on the page at `request`'s URL.
    public static func block(_ browser: InAppBrowser, platform: Visitor.Platform, request: PageRequest) -> [UInt8] {
        let behaviour = browser.behaviour(on: platform)
        let url = URLText.encode(request.url, encodeCommas: false)
        let what =
            browser.tokens.isEmpty
            ? "This page is open inside an app, where links do not open other apps."
            : "This page is open in \(browser.name)’s browser, where links do not open apps."
        // Each paragraph inherits the box's colour by its own inline style: a page's rule for `p` (the built-in
        // landing template's grey) would otherwise draw it dark on the dark box.
        var html =
            "<div id=\"\(elementID)\" role=\"region\" aria-label=\"Open in your browser\" data-in-app-browser=\""
            + browser.id + "\" style=\"" + boxStyle + "\"><p style=\"margin:0 0 .6rem;color:inherit\">"
            + HTMLEscape.escape(what)
            + "</p>"
        if let link = link(behaviour.escape, platform: platform, url: url) {
            html +=
                "<a href=\"" + String(decoding: HTMLEscape.escape(link.href), as: UTF8.self) + "\" style=\""
                + buttonStyle + "\">" + HTMLEscape.escape(link.label) + "</a>"
            if !behaviour.steps.isEmpty {
                html +=
                    "<p style=\"margin:.6rem 0 0;font-size:14px;color:inherit\">If nothing happens: "
                    + HTMLEscape.escape(behaviour.steps) + "</p>"
            }
        } else {
            html += "<p style=\"margin:0;font-weight:600;color:inherit\">" + HTMLEscape.escape(behaviour.steps) + "</p>"
        }
        return Array((html + "</div>").utf8)
    }

    /// The link of `escape` for the page at `url` (encoded), with its label; `nil` for ``InAppBrowser/Escape/steps``.
    static func link(_ escape: InAppBrowser.Escape, platform: Visitor.Platform, url: [UInt8])
        -> (href: [UInt8], label: String)?
    {
        let label = platform == .iOS ? "Open in Safari" : "Open in your browser"
        switch escape {
        case .safariScheme:
            return (Array("x-safari-".utf8) + url, "Open in Safari")
        case .instagramExternalBrowser:
            return (Array("instagram://extbrowser/?url=".utf8) + URLText.encodeComponent(url), label)
        case .lineExternalBrowser:
            let separator = !url.contains(UInt8(ascii: "?")) ? "?" : url.last == UInt8(ascii: "?") ? "" : "&"
            return (url + Array((separator + "openExternalBrowser=1").utf8), label)
        case .browserIntent:
            return (IntentURL.make(pageURL: url, package: nil, fallback: nil), label)
        case .steps:
            return nil
        }
    }

    private static let boxStyle =
        "box-sizing:border-box;width:100%;margin:0;padding:1rem 1.25rem;background:#1d1d1f;color:#fff;"
        + "text-align:center;font:16px/1.4 -apple-system,BlinkMacSystemFont,'Segoe UI',Roboto,sans-serif"
    private static let buttonStyle =
        "display:inline-block;padding:.65rem 1.4rem;border-radius:980px;background:#fff;color:#1d1d1f;"
        + "text-decoration:none;font-weight:600"
}
