import AASACore
import Foundation

/// The admin listener's `GET /`: one self-contained page (docs/operations.md, "Dashboard") that reads the same
/// JSON endpoints a script would (`/status`, `/fetches`, `/traffic`, `/match`) and adds no data path of its own.
///
/// Its stylesheet and script (`Dashboard/dashboard.css`, `dashboard.js`, compiled into the binary) are inlined
/// into `dashboard.html`, and the Content-Security-Policy allows exactly those two by their SHA-256 and
/// requests to its own origin only: no other script, style, frame, form target or origin can run or be reached,
/// even if a tenant's text shown on the page tried.
enum DashboardPage {
    /// The page and its headers, built once.
    static let response: Response = {
        let style = String(decoding: PackageResources.dashboard_css, as: UTF8.self)
        let script = String(decoding: PackageResources.dashboard_js, as: UTF8.self)
        let page = String(decoding: PackageResources.dashboard_html, as: UTF8.self)
            .replacingOccurrences(of: "{{style}}", with: style)
            .replacingOccurrences(of: "{{script}}", with: script)
        return Response(
            status: 200,
            headers: [
                HTTPHeader("Content-Type", "text/html; charset=utf-8"),
                HTTPHeader("Cache-Control", "no-cache"),
                HTTPHeader("Content-Security-Policy", contentSecurityPolicy(style: style, script: script)),
                HTTPHeader("X-Content-Type-Options", "nosniff"),
                HTTPHeader("X-Frame-Options", "DENY"),
                HTTPHeader("Referrer-Policy", "no-referrer"),
                HTTPHeader("Cross-Origin-Opener-Policy", "same-origin"),
                HTTPHeader("Cross-Origin-Resource-Policy", "same-origin"),
            ],
            body: Array(page.utf8))
    }()

    /// The policy: nothing by default; the inlined script and style by hash; `fetch` to this origin; images
    /// only as `data:` URLs; no base URL, form target or framing.
    static func contentSecurityPolicy(style: String, script: String) -> String {
        func hash(_ text: String) -> String {
            "'sha256-\(Data(SHA256.digest(Array(text.utf8))).base64EncodedString())'"
        }
        return "default-src 'none'; script-src \(hash(script)); style-src \(hash(style)); connect-src 'self'; "
            + "img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    }
}
