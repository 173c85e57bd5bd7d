/// One class of URLs whose answer changes between two versions of a domain's config, on one platform.
public struct URLChange: Sendable, Hashable {
    /// How the answer changes.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// The URLs now open an app; they stayed on the web.
        case webToApp = "web-to-app"
        /// The URLs no longer open an app.
        case appToWeb = "app-to-web"
        /// Another app opens them now.
        case appToApp = "app-to-app"
    }

    /// Which client's answer: `iOS 13+`, `iOS 9-12`, or `Android 15+ (<package>)`.
    public var platform: String
    public var kind: Kind
    /// The app IDs (packages, on Android) that opened the URLs before, and that open them now; empty: the web.
    public var from: [String]
    public var to: [String]
    /// The class in words, from the patterns of the rules that decide it (`/help/* with query item
    /// articleNumber of exactly 4 characters`).
    public var description: String
    /// URLs of the class, each checked with the matcher against both versions.
    public var examples: [String]
    /// The rule that decided these URLs before, and the one that decides them now; `nil`: no rule matched.
    public var oldRule: RuleReference?
    public var newRule: RuleReference?

    /// What opened the URLs before, in words: the apps, or `the web`.
    public var opensBefore: String { Self.opens(from) }
    /// What opens them now, in words.
    public var opensNow: String { Self.opens(to) }

    private static func opens(_ apps: [String]) -> String {
        apps.isEmpty ? "the web" : apps.joined(separator: ", ")
    }

    /// The kind of a change from `from` to `to`, which differ.
    static func kind(from: LinkAnswer, to: LinkAnswer) -> Kind {
        switch (from, to) {
        case (.web, _): .webToApp
        case (_, .web): .appToWeb
        default: .appToApp
        }
    }

    /// The change as a JSON object: `kind`, `platform`, `from`, `to`, `description`, `examples`, `oldRule`,
    /// `newRule`.
    public var jsonValue: JSONValue {
        .members([
            ("kind", .string(kind.rawValue)), ("platform", .string(platform)), ("from", .strings(from)),
            ("to", .strings(to)), ("description", .string(description)), ("examples", .strings(examples)),
            ("oldRule", oldRule?.jsonValue ?? .null), ("newRule", newRule?.jsonValue ?? .null),
        ])
    }
}

/// Where a rule is, in the terms of the file the user edits, and what it says.
public struct RuleReference: Sendable, Hashable, CustomStringConvertible {
    /// `universalLinks.apps[0].rules[2]` for a site.json (with the Apple key path in parentheses), else the
    /// Apple key path or `dynamic_app_link_components[n]`.
    public var location: String
    /// The rule as written in the served file.
    public var text: String

    public var description: String { "\(location) \(text)" }

    var jsonValue: JSONValue { .members([("location", .string(location)), ("rule", .string(text))]) }
}
