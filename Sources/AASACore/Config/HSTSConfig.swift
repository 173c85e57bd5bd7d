/// The `hsts` section of a site config: a `Strict-Transport-Security` header (RFC 6797) on every HTTPS
/// response of the domain.
///
/// Off unless configured: HSTS binds browsers to HTTPS for `maxAge` seconds and cannot be taken back
/// sooner, so it is the operator's decision. Never sent over plain HTTP (RFC 6797 §7.2: a user agent
/// ignores it there, and a TLS-terminating proxy in front of the HTTP listener sets its own).
public struct HSTSConfig: Sendable, Hashable {
    /// One year: the shortest `max-age` the preload list accepts, and the usual recommendation.
    public static let defaultMaxAge = 31_536_000

    /// Whether the header is sent. `"hsts": false` or `{"enabled": false}` turns it off.
    public var enabled: Bool = true
    /// Seconds browsers keep to HTTPS; 0 tells them to forget the policy.
    public var maxAge: Int = HSTSConfig.defaultMaxAge
    /// Whether the policy covers every subdomain too.
    public var includeSubDomains: Bool = false
    /// Whether to add `preload` (consent to the browsers' preload list; hstspreload.org).
    public var preload: Bool = false

    /// Creates an HSTS section.
    public init(
        enabled: Bool = true, maxAge: Int = HSTSConfig.defaultMaxAge, includeSubDomains: Bool = false,
        preload: Bool = false
    ) {
        self.enabled = enabled
        self.maxAge = maxAge
        self.includeSubDomains = includeSubDomains
        self.preload = preload
    }

    /// The header value, e.g. `max-age=31536000; includeSubDomains`.
    public var headerValue: String {
        var value = "max-age=\(maxAge)"
        if includeSubDomains { value += "; includeSubDomains" }
        if preload { value += "; preload" }
        return value
    }

    /// The keys of the object form.
    static let keys = ["enabled", "maxAge", "includeSubDomains", "preload", "comment"]

    /// Decodes `true`/`false` or the object form.
    static func read(_ node: JSONNode, path: @autoclosure () -> KeyPath, reader: JSONReader) -> HSTSConfig? {
        switch reader.flagOrObject(
            node, path: path(), known: keys,
            hint: "write \"hsts\": true for max-age=\(defaultMaxAge), or {\"maxAge\": 31536000, …}")
        {
        case nil: return nil
        case .flag(let flag): return HSTSConfig(enabled: flag)
        case .object(let object): return read(object, path: path(), reader: reader)
        }
    }

    /// Decodes the object form.
    private static func read(_ object: JSONObject, path: @autoclosure () -> KeyPath, reader: JSONReader) -> HSTSConfig {
        var hsts = HSTSConfig()
        for (key, keyPath) in [
            ("enabled", \HSTSConfig.enabled), ("includeSubDomains", \.includeSubDomains), ("preload", \.preload),
        ] {
            if let member = object[key], let flag = reader.bool(member.value, path: path().key(key)) {
                hsts[keyPath: keyPath] = flag
            }
        }
        if let member = object["comment"] { _ = reader.string(member.value, path: path().key("comment")) }
        if let member = object["maxAge"] {
            if case .number(let number) = member.value.value, number >= 0, number <= 1e9, number.rounded() == number {
                hsts.maxAge = Int(number)
            } else {
                reader.report(
                    .error, rule: .wrongType, "\"maxAge\" must be a whole number of seconds from 0 to 1000000000",
                    at: member.value.offset, path: path().key("maxAge"),
                    hint: "e.g. 31536000 (one year); 0 tells browsers to forget the policy")
            }
        }
        return hsts
    }

    /// As site.json content: `true`/`false` when nothing else is set.
    var jsonValue: JSONValue {
        guard maxAge != Self.defaultMaxAge || includeSubDomains || preload else { return .bool(enabled) }
        var pairs: [(String, JSONValue)] = []
        if !enabled { pairs.append(("enabled", .bool(false))) }
        if maxAge != Self.defaultMaxAge { pairs.append(("maxAge", .number(Double(maxAge)))) }
        if includeSubDomains { pairs.append(("includeSubDomains", .bool(true))) }
        if preload { pairs.append(("preload", .bool(true))) }
        return .members(pairs)
    }
}

/// `preload` only works as the preload list demands (hstspreload.org): `includeSubDomains` and a
/// `max-age` of at least a year. Anything less is refused by the list, so say so at load.
public struct HSTSRule: SiteRule {
    /// Creates the rule.
    public init() {}

    /// Reports `preload` without `includeSubDomains` or with a `maxAge` under a year, and a short `maxAge`.
    public func check(_ site: SiteContext) -> [Diagnostic] {
        guard let hsts = site.config.hsts, hsts.enabled else { return [] }
        let path = KeyPath.root.key("hsts")
        var found: [Diagnostic] = []
        if hsts.preload && !hsts.includeSubDomains {
            found.append(
                site.diagnostic(
                    .error, rule: .hstsPreload,
                    "\"preload\" needs \"includeSubDomains\": the preload list refuses it",
                    at: path.key("preload"), hint: "add \"includeSubDomains\": true, or remove \"preload\""))
        }
        if hsts.preload && hsts.maxAge < HSTSConfig.defaultMaxAge {
            found.append(
                site.diagnostic(
                    .error, rule: .hstsPreload,
                    "\"preload\" needs a maxAge of at least \(HSTSConfig.defaultMaxAge) seconds (one year)",
                    at: path.key("maxAge"), hint: "set \"maxAge\": \(HSTSConfig.defaultMaxAge) or more"))
        }
        if hsts.maxAge > 0 && hsts.maxAge < 86_400 && !hsts.preload {
            found.append(
                site.diagnostic(
                    .warning, rule: .hstsMaxAge,
                    "maxAge \(hsts.maxAge) is under a day: browsers forget the policy almost at once",
                    at: path.key("maxAge"), hint: "use 31536000 (one year) once HTTPS works everywhere on the domain"))
        }
        return found
    }
}

extension Rule {
    /// Reported by `HSTSRule`.
    public static let hstsPreload = Rule(
        "hsts-preload", .error,
        "`hsts` asks for `preload` without `includeSubDomains` or with a `maxAge` under a year: the preload list refuses it."
    )

    /// Reported by `HSTSRule`.
    public static let hstsMaxAge = Rule(
        "hsts-max-age", .warning, "`hsts` `maxAge` is under a day: browsers forget the policy almost at once.")

    /// The rules of the `hsts` section, in the order of the docs table: their part of `Rule.all`.
    package static let hstsRules: [Rule] = [
        .hstsPreload,
        .hstsMaxAge,
    ]
}
