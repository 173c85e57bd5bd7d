/// The `fallback` section of a site config: where the landing page's button sends a visitor whose phone does not
/// open the app, per platform.
public struct AppFallback: Sendable, Hashable {
    /// Where a button leads.
    public enum Target: Sendable, Hashable {
        /// The app's store page: the App Store (`smartAppBanner.appStoreID`) on iOS, Google Play (the package of the
        /// domain's first Android app) on Android. Written `"appStore"` for `ios` and `"play"` for `android`.
        case store
        /// The domain's web site, `https://<domain>/`. Written `"web"`.
        case web
        /// Another page, an absolute `https` URL.
        case url(String)
    }

    /// For iPhone and iPad visitors; `nil`: ``Target/store``.
    public var ios: Target?
    /// For Android visitors; `nil`: ``Target/store``, or ``Target/web`` when the domain has no Android app.
    public var android: Target?

    /// Creates the section.
    public init(ios: Target? = nil, android: Target? = nil) {
        self.ios = ios
        self.android = android
    }

    static let keys = ["ios", "android", "comment"]
    /// How ``Target/store`` is written, per key.
    static let storeNames = ["ios": "appStore", "android": "play"]

    /// Decodes the site.json object, reporting problems to `reader`; `nil` when it is not an object.
    static func read(_ node: JSONNode, path: @autoclosure () -> KeyPath, reader: JSONReader) -> AppFallback? {
        guard let object = reader.object(node, path: path(), known: keys) else { return nil }
        var fallback = AppFallback()
        for (key, keyPath) in [("ios", \AppFallback.ios), ("android", \AppFallback.android)] {
            guard let member = object[key], let text = reader.string(member.value, path: path().key(key)) else {
                continue
            }
            let store = storeNames[key] ?? ""
            switch text {
            case store: fallback[keyPath: keyPath] = .store
            case "web": fallback[keyPath: keyPath] = .web
            case _ where text.lowercased().hasPrefix("https://"): fallback[keyPath: keyPath] = .url(text)
            default:
                reader.report(
                    .error, rule: .fallbackTarget,
                    "\"\(LogEscaping.excerpt(text))\" is not a fallback for \(key)",
                    at: member.value.offset, path: path().key(key),
                    hint: "use \"\(store)\", \"web\" or an https URL such as \"https://example.com/get-the-app\"")
            }
        }
        if let member = object["comment"] { _ = reader.string(member.value, path: path().key("comment")) }
        return fallback
    }

    /// As site.json content.
    var jsonValue: JSONValue {
        func text(_ target: Target, store: String) -> JSONValue {
            switch target {
            case .store: .string(store)
            case .web: .string("web")
            case .url(let url): .string(url)
            }
        }
        var members: [(String, JSONValue)] = []
        if let ios { members.append(("ios", text(ios, store: "appStore"))) }
        if let android { members.append(("android", text(android, store: "play"))) }
        return .members(members)
    }
}

extension Rule {
    /// Reported by `AppFallback` when a value is none of the forms.
    public static let fallbackTarget = Rule(
        "fallback-target", .error,
        "A [`fallback`](#fallback) value that is not `\"appStore\"` (iOS), `\"play\"` (Android), `\"web\"` or an `https` URL."
    )
}
