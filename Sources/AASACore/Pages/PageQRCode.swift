/// Draws the QR code desktop visitors get of a page's URL, as HTML spliced into the page
/// (``SplicedPage/Slot/qrCode`` and ``SplicedPage/Slot/floatingQRCode``).
///
/// The core imports no C library: the server passes the drawing (`PageQRCode.libqrencode`, module AASAQRCode) to
/// ``RenderedPages``, which renders a page's desktop variant once per URL and keeps it within its byte budget.
public struct PageQRCode: Sendable {
    /// The inline `<svg>` of a QR code of the URL, the URL named in its label; `nil` when the URL has none
    /// (over the drawing's length cap).
    public let draw: @Sendable (_ url: String) -> String?

    /// Creates a drawing.
    public init(draw: @escaping @Sendable (_ url: String) -> String?) {
        self.draw = draw
    }

    /// The line under the code.
    public static let caption = "Scan with your phone to open this page in the app"

    /// The element's `id`, for styling and for tests.
    public static let elementID = "aasa-qr-code"

    /// The HTML a page gets for a desktop visitor: `svg` with ``caption``, in a `<figure>` styled inline (no
    /// stylesheet or script needed). `floating` keeps it in the window's corner (a hosted page, whose layout is the
    /// site's), else it sits where the landing template put `{{qrCode}}`.
    public static func block(svg: String, floating: Bool) -> [UInt8] {
        let place =
            floating
            ? "position:fixed;right:1rem;bottom:1rem;z-index:2147483647;box-shadow:0 2px 12px rgba(0,0,0,.2);"
            : ""
        return Array(
            ("<figure id=\"\(elementID)\" style=\"\(place)margin:2rem auto 0;padding:1rem;max-width:max-content;"
                + "background:#fff;color:#1d1d1f;border-radius:12px;text-align:center;"
                + "font:15px/1.4 -apple-system,BlinkMacSystemFont,'Segoe UI',Roboto,sans-serif\">" + svg
                + "<figcaption style=\"margin-top:.5rem\">\(caption)</figcaption></figure>").utf8)
    }
}
