#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The fallback landing page's template: `{{placeholder}}`s filled in at load (all HTML-escaped), except those
/// spliced in per request: `{{url}}`, the request's URL; `{{qrCode}}`, where a desktop visitor gets a QR code of the
/// page's URL (nothing for anyone else); `{{openInBrowser}}`, where an in-app browser's visitor gets the
/// `open-in-browser` element (after `<body>` when the template does not place it); and `{{appButtons}}`, the buttons
/// for the visitor's platform (``AppButtons``).
public struct LandingTemplate: Sendable {
    /// The placeholders a template may use.
    public static let placeholders = [
        "title", "description", "appStoreURL", "appStoreID", "image", "domain", "url", "qrCode", "openInBrowser",
        "appButtons",
    ]

    /// The placeholders a template may use once only: each is a block of a few KB per visitor's rendering, and a
    /// page has one of each.
    public static let singleUsePlaceholders = ["qrCode", "openInBrowser", "appButtons"]

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
        for name in Self.singleUsePlaceholders {
            let count = uses(of: name)
            if count > 1 { found.append("{{\(name)}} used \(count) times (at most once: one per page)") }
        }
        // The markers the spliced placeholders become start with U+0001: a template holding one itself would
        // splice the request's values in where no placeholder is counted.
        if text.utf8.contains(0x01) { found.append("a U+0001 control character") }
        return found
    }

    /// How many times a template may use `{{url}}`. Each use is the request's URL (up to the request head's size)
    /// spliced in per request, so the uses bound what one request makes the page grow by, and the parts a
    /// rendering is sent in (``SplicedPage/parts(appArgument:pageURL:)``). The built-in page uses it twice.
    public static let maximumURLUses = 16

    /// How many times the template uses `{{url}}`.
    public var urlUses: Int { uses(of: "url") }

    /// How many times the template uses `{{placeholder}}`.
    public func uses(of placeholder: String) -> Int {
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
    /// The marker `{{openInBrowser}}` becomes before it is split out as a per-request slot.
    static let openInBrowserMarker = Array("\u{1}aasa-open-in-browser\u{1}".utf8)
    /// The marker `{{appButtons}}` becomes before it is split out as a per-request slot.
    static let appButtonsMarker = Array("\u{1}aasa-app-buttons\u{1}".utf8)

    /// Each spliced placeholder, its marker and its slot.
    static let splicedPlaceholders: [(name: String, marker: [UInt8], slot: SplicedPage.Slot)] = [
        ("url", urlMarker, .pageURL), ("qrCode", qrCodeMarker, .qrCode),
        ("openInBrowser", openInBrowserMarker, .openInBrowser), ("appButtons", appButtonsMarker, .appButtons),
    ]

    /// `page` (a filled template, with the banner injected) with each spliced placeholder's marker split out as its
    /// slot.
    static func splitMarkers(_ page: SplicedPage) -> SplicedPage {
        splicedPlaceholders.reduce(page) { $0.splitting($1.marker, into: $1.slot) }
    }

    /// The page with every value but the spliced placeholders' filled in (escaped); those are left as their markers
    /// (``splicedPlaceholders``).
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
            if let spliced = Self.splicedPlaceholders.first(where: { $0.name == name }) {
                out += spliced.marker
            } else {
                out += Array(HTMLEscape.escape(table[name] ?? "").utf8)
            }
            rest = rest[close.upperBound...]
        }
        out += Array(rest.utf8)
        return out
    }

    /// The built-in page: title, description, Open Graph tags, the visitor's buttons and, for an in-app browser's
    /// visitor, the way out of it at the top.
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
                                </style>
                </head>
                <body>{{openInBrowser}}
                <main>
                <h1>{{title}}</h1>
                <p>{{description}}</p>
                {{appButtons}}{{qrCode}}
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
