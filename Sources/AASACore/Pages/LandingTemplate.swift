#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The fallback landing page's template: `{{placeholder}}`s filled in at load (all HTML-escaped), except
/// `{{url}}`, which is the request's URL and is spliced in per request, and `{{qrCode}}`, where a desktop visitor
/// gets a QR code of the page's URL (nothing for anyone else).
public struct LandingTemplate: Sendable {
    /// The placeholders a template may use.
    public static let placeholders = [
        "title", "description", "appStoreURL", "appStoreID", "image", "domain", "url", "qrCode",
    ]

    /// How many times a template may use `{{qrCode}}`: one code per page (each use is a few KB per desktop rendering).
    public static let maximumQRCodeUses = 1

    /// The values of a landing page.
    public struct Values: Sendable {
        /// Page title and `og:title`.
        public var title: String
        /// Text and `og:description`.
        public var description: String
        /// `https://apps.apple.com/app/id…`.
        public var appStoreURL: String
        /// The App Store ID.
        public var appStoreID: String
        /// Absolute `og:image` URL, or `""`.
        public var image: String
        /// The domain.
        public var domain: String
    }

    /// The template text.
    public var text: String

    /// Creates a template from its text.
    public init(text: String) {
        self.text = text
    }

    /// Why the template cannot be used: each unknown or unterminated placeholder.
    public var problems: [String] {
        var found: [String] = []
        var rest = Substring(text)
        while let open = rest.firstRange(of: "{{") {
            guard let close = rest[open.upperBound...].firstRange(of: "}}") else {
                found.append("'{{' without '}}'")
                break
            }
            let name = rest[open.upperBound..<close.lowerBound].trimmedSpaces
            if !Self.placeholders.contains(name) {
                found.append("unknown placeholder {{\(name)}} (known: \(Self.placeholders.joined(separator: ", ")))")
            }
            rest = rest[close.upperBound...]
        }
        let qrUses = uses(of: "qrCode")
        if qrUses > Self.maximumQRCodeUses {
            found.append("{{qrCode}} used \(qrUses) times (at most \(Self.maximumQRCodeUses): one QR code per page)")
        }
        return found
    }

    /// How many times a template may use `{{url}}`. Each use is the request's URL (up to the request head's size)
    /// spliced in per request, so the uses bound what one request makes the page grow by, and the parts a
    /// rendering is sent in (``SplicedPage/parts(appArgument:pageURL:)``). The built-in page uses it twice.
    public static let maximumURLUses = 16

    /// How many times the template uses `{{url}}`.
    public var urlUses: Int { uses(of: "url") }

    private func uses(of placeholder: String) -> Int {
        var uses = 0
        var rest = Substring(text)
        while let open = rest.firstRange(of: "{{"), let close = rest[open.upperBound...].firstRange(of: "}}") {
            if rest[open.upperBound..<close.lowerBound].trimmedSpaces == placeholder { uses += 1 }
            rest = rest[close.upperBound...]
        }
        return uses
    }

    /// The marker `{{url}}` becomes before it is split out as a per-request slot.
    static let urlMarker = Array("\u{1}aasa-url\u{1}".utf8)
    /// The marker `{{qrCode}}` becomes before it is split out as a per-request slot.
    static let qrCodeMarker = Array("\u{1}aasa-qr-code\u{1}".utf8)

    /// The page with every value but `{{url}}` and `{{qrCode}}` filled in (escaped); they are left as ``urlMarker``
    /// and ``qrCodeMarker``.
    public func fill(_ values: Values) -> [UInt8] {
        let table = [
            "title": values.title, "description": values.description, "appStoreURL": values.appStoreURL,
            "appStoreID": values.appStoreID, "image": values.image, "domain": values.domain,
        ]
        var out: [UInt8] = []
        var rest = Substring(text)
        while let open = rest.firstRange(of: "{{"), let close = rest[open.upperBound...].firstRange(of: "}}") {
            out += Array(rest[..<open.lowerBound].utf8)
            let name = rest[open.upperBound..<close.lowerBound].trimmedSpaces
            if name == "url" {
                out += Self.urlMarker
            } else if name == "qrCode" {
                out += Self.qrCodeMarker
            } else {
                out += Array(HTMLEscape.escape(table[name] ?? "").utf8)
            }
            rest = rest[close.upperBound...]
        }
        out += Array(rest.utf8)
        return out
    }

    /// The built-in page: title, description, Open Graph tags and a call to action to the App Store.
    public static func builtIn(hasImage: Bool) -> LandingTemplate {
        let image =
            hasImage
            ? "\n<meta property=\"og:image\" content=\"{{image}}\">\n<meta name=\"twitter:card\" content=\"summary\">"
            : ""
        return LandingTemplate(
            text: """
                <!DOCTYPE html>
                <html lang="en">
                <head>
                <meta charset="utf-8">
                <meta name="viewport" content="width=device-width, initial-scale=1">
                <title>{{title}}</title>
                <meta name="description" content="{{description}}">
                <meta property="og:type" content="website">
                <meta property="og:title" content="{{title}}">
                <meta property="og:description" content="{{description}}">
                <meta property="og:url" content="{{url}}">\(image)
                <link rel="canonical" href="{{url}}">
                <style>
                body{margin:0;font:17px/1.5 -apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,sans-serif;color:#1d1d1f;background:#f5f5f7}
                main{max-width:32rem;margin:0 auto;padding:4rem 1.5rem;text-align:center}
                h1{font-size:2rem;line-height:1.2;margin:0 0 .75rem}
                p{margin:0 0 2rem;color:#424245}
                a.cta{display:inline-block;padding:.8rem 1.6rem;border-radius:980px;background:#0071e3;color:#fff;text-decoration:none;font-weight:600}
                small{display:block;margin-top:1.5rem;color:#6e6e73}
                </style>
                </head>
                <body>
                <main>
                <h1>{{title}}</h1>
                <p>{{description}}</p>
                <a class="cta" href="{{appStoreURL}}">Open in the app / Get it on the App Store</a>
                <small>Already have the app? Tap “Open” in the banner above.</small>{{qrCode}}
                </main>
                </body>
                </html>

                """)
    }
}

extension Substring {
    fileprivate var trimmedSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
