/// How a domain's `pages/` folder is served: `"pages"` in `site.json`.
public struct PagesConfig: Sendable, Hashable {
    /// The generated page for URLs an app claims that have no page (`"landingPage"`).
    public struct LandingPage: Sendable, Hashable {
        /// Whether it is served. On by default once the domain has a Smart App Banner.
        public var enabled: Bool = true
        /// Page title and `og:title`; default: the domain name.
        public var title: String?
        /// Text under the title and `og:description`.
        public var description: String?
        /// Path (in `pages/`) or absolute URL of the `og:image`; default: the largest touch icon.
        public var image: String?
        /// The template, relative to the domain folder; default `pages/_landing.html` when it exists.
        public var template: String?

        /// Creates the settings.
        public init(
            enabled: Bool = true, title: String? = nil, description: String? = nil, image: String? = nil,
            template: String? = nil
        ) {
            self.enabled = enabled
            self.title = title
            self.description = description
            self.image = image
            self.template = template
        }
    }

    /// `Cache-Control` for everything served from `pages/` and the landing page (separate from the
    /// association file's `cacheControl`).
    public var cacheControl: String = PagesConfig.defaultCacheControl
    /// Touch icon files (URL paths in `pages/`); `nil`: the `apple-touch-icon*.png` files in the pages root.
    public var touchIcons: [String]?
    /// The fallback landing page.
    public var landingPage = LandingPage()

    /// The default `Cache-Control` for pages.
    public static let defaultCacheControl = "max-age=300"

    /// Creates the settings.
    public init(cacheControl: String = PagesConfig.defaultCacheControl, touchIcons: [String]? = nil) {
        self.cacheControl = cacheControl
        self.touchIcons = touchIcons
    }
}

extension PagesConfig {
    static let keys = ["cacheControl", "touchIcons", "landingPage", "comment"]
    static let landingKeys = ["enabled", "title", "description", "image", "template", "comment"]

    /// Decodes `"pages"`; problems are reported to `reader`.
    static func read(_ node: JSONNode, path: @autoclosure () -> KeyPath, reader: JSONReader) -> PagesConfig? {
        guard let object = reader.object(node, path: path(), known: keys) else { return nil }
        var pages = PagesConfig()
        if let member = object["cacheControl"],
            let value = reader.string(member.value, path: path().key("cacheControl"))
        {
            pages.cacheControl = value
        }
        if let member = object["touchIcons"] {
            pages.touchIcons = reader.strings(member.value, path: path().key("touchIcons"))
        }
        if let member = object["landingPage"] {
            let landingPath = path().key("landingPage")
            if case .bool(let on) = member.value.value {
                pages.landingPage.enabled = on
            } else if let landing = reader.object(
                member.value, path: landingPath, known: landingKeys, what: "an object or a boolean")
            {
                if let flag = landing["enabled"], let on = reader.bool(flag.value, path: landingPath.key("enabled")) {
                    pages.landingPage.enabled = on
                }
                for (key, keyPath) in [
                    ("title", \LandingPage.title), ("description", \.description), ("image", \.image),
                    ("template", \.template),
                ] {
                    if let member = landing[key], let value = reader.string(member.value, path: landingPath.key(key)) {
                        pages.landingPage[keyPath: keyPath] = value
                    }
                }
            }
        }
        return pages
    }

    /// Whether every setting is the default (then `site.json` needs no `"pages"`).
    var isDefault: Bool { self == PagesConfig() }

    /// The settings as `site.json` content, omitting defaults.
    var jsonValue: JSONValue {
        var pairs: [(String, JSONValue)] = []
        if cacheControl != Self.defaultCacheControl { pairs.append(("cacheControl", .string(cacheControl))) }
        if let touchIcons { pairs.append(("touchIcons", .strings(touchIcons))) }
        let landing = landingPage
        if landing != LandingPage() {
            if landing == LandingPage(enabled: false) {
                pairs.append(("landingPage", .bool(false)))
            } else {
                var members: [(String, JSONValue)] = []
                if !landing.enabled { members.append(("enabled", .bool(false))) }
                if let title = landing.title { members.append(("title", .string(title))) }
                if let description = landing.description { members.append(("description", .string(description))) }
                if let image = landing.image { members.append(("image", .string(image))) }
                if let template = landing.template { members.append(("template", .string(template))) }
                pairs.append(("landingPage", .members(members)))
            }
        }
        return .members(pairs)
    }
}
