extension SiteConfig {
    static let topKeys = [
        "$schema", "legacyFormat", "cacheControl", "universalLinks", "webCredentials", "appClips", "handoff", "authsrv",
        "tests",
        "signing", "android", "smartAppBanner", "pages", "hsts", "passkeys", "changePassword", "fallback",
    ]
    static let defaultsKeys = ["caseSensitive", "percentEncoded"]
    static let appKeys = ["appIDs", "defaults", "rules", "legacyPaths", "comment"]

    /// Decodes a `site.json` document; problems are reported to `reader`, and `nil` means unusable.
    ///
    /// This is decoding only (types, unknown keys); ``SiteConfigValidator`` checks meaning. Keys with
    /// problems are reported and left out, and the rest is still returned, so later checks can report
    /// their findings in the same run; `nil` only when the document is not an object.
    public static func read(_ root: JSONNode, reader: JSONReader) -> SiteConfig? {
        guard let top = reader.object(root, path: .root, known: topKeys, what: "a JSON object") else { return nil }
        var config = SiteConfig()
        if let member = top["legacyFormat"], let flag = reader.bool(member.value, path: .root.key("legacyFormat")) {
            config.legacyFormat = flag
        }
        if let member = top["cacheControl"], let value = reader.string(member.value, path: .root.key("cacheControl")) {
            config.cacheControl = value
        }
        if let member = top["universalLinks"] {
            config.universalLinks = readUniversalLinks(member.value, path: .root.key("universalLinks"), reader: reader)
        }
        // Each list set in place (a key path per list was made and applied to the whole config at every load).
        func strings(_ key: String) -> [String]? {
            top[key].flatMap { reader.strings($0.value, path: .root.key(key)) }
        }
        if let list = strings("webCredentials") { config.webCredentials = list }
        if let list = strings("appClips") { config.appClips = list }
        if let list = strings("handoff") { config.handoff = list }
        if let list = strings("authsrv") { config.authsrv = list }
        if let member = top["smartAppBanner"] {
            config.smartAppBanner = BannerConfig.read(member.value, path: .root.key("smartAppBanner"), reader: reader)
        }
        if let member = top["pages"],
            let pages = PagesConfig.read(member.value, path: .root.key("pages"), reader: reader)
        {
            config.pages = pages
        }
        if let member = top["tests"], let elements = reader.array(member.value, path: .root.key("tests")) {
            config.tests = elements.enumerated().compactMap { index, element in
                readTest(element, path: .root.key("tests").index(index), reader: reader)
            }
        }
        if let member = top["signing"] {
            config.signing = SigningConfig.read(member.value, path: .root.key("signing"), reader: reader)
        }
        if let member = top["android"] {
            config.android = AndroidConfig.read(member.value, path: .root.key("android"), reader: reader)
        }
        if let member = top["hsts"] {
            config.hsts = HSTSConfig.read(member.value, path: .root.key("hsts"), reader: reader)
        }
        if let member = top["passkeys"] {
            config.passkeys = PasskeyEndpoints.read(member.value, path: .root.key("passkeys"), reader: reader)
        }
        if let member = top["changePassword"],
            let url = reader.string(member.value, path: .root.key("changePassword"))
        {
            config.changePassword = url
        }
        if let member = top["fallback"] {
            config.fallback = AppFallback.read(member.value, path: .root.key("fallback"), reader: reader)
        }
        return config
    }

    private static func readUniversalLinks(_ node: JSONNode, path: @autoclosure () -> KeyPath, reader: JSONReader)
        -> UniversalLinks?
    {
        guard let object = reader.object(node, path: path(), known: ["defaults", "variables", "apps"]) else {
            return nil
        }
        var links = UniversalLinks()
        if let member = object["defaults"] {
            links.defaults = readDefaults(member.value, path: path().key("defaults"), reader: reader)
        }
        if let member = object["variables"] {
            let variablesPath = path().key("variables")
            if case .object(let members) = member.value.value {
                links.variables = members.compactMap { variable in
                    reader.strings(variable.value, path: variablesPath.key(variable.key)).map {
                        SubstitutionVariable(name: variable.key, values: $0)
                    }
                }
            } else {
                reader.report(
                    .error, rule: .wrongType,
                    "expected an object of string lists, found \(member.value.value.typeName)",
                    at: member.value.offset, path: variablesPath,
                    hint: "write \"variables\": {\"name\": [\"a\", \"b\"]}")
            }
        }
        if let member = object["apps"], let elements = reader.array(member.value, path: path().key("apps")) {
            links.apps = elements.enumerated().compactMap { index, element in
                readApp(element, path: path().key("apps").index(index), reader: reader)
            }
        }
        return links
    }

    private static func readDefaults(_ node: JSONNode, path: @autoclosure () -> KeyPath, reader: JSONReader)
        -> MatchingDefaults?
    {
        guard let object = reader.object(node, path: path(), known: defaultsKeys) else { return nil }
        var defaults = MatchingDefaults()
        if let member = object["caseSensitive"] {
            defaults.caseSensitive = reader.bool(member.value, path: path().key("caseSensitive"))
        }
        if let member = object["percentEncoded"] {
            defaults.percentEncoded = reader.bool(member.value, path: path().key("percentEncoded"))
        }
        return defaults
    }

    private static func readApp(_ node: JSONNode, path: @autoclosure () -> KeyPath, reader: JSONReader) -> AppRules? {
        guard let object = reader.object(node, path: path(), known: appKeys) else { return nil }
        var app = AppRules(appIDs: [], rules: [])
        if let member = object["appIDs"] {
            app.appIDs = reader.strings(member.value, path: path().key("appIDs")) ?? []
        } else {
            reader.report(
                .error, rule: .noApp, "this entry names no app", at: node.offset, path: path(),
                hint: "add \"appIDs\": [\"TEAMID.bundle.id\"]")
        }
        if let member = object["defaults"] {
            app.defaults = readDefaults(member.value, path: path().key("defaults"), reader: reader)
        }
        if let member = object["legacyPaths"] {
            app.legacyPaths = reader.strings(member.value, path: path().key("legacyPaths"))
        }
        if let member = object["rules"], let elements = reader.array(member.value, path: path().key("rules")) {
            app.rules = elements.enumerated().compactMap { index, element in
                readRule(element, path: path().key("rules").index(index), reader: reader)
            }
        } else if object["rules"] == nil {
            reader.report(
                .error, rule: .noRules, "this entry has no \"rules\", so its apps open no URL", at: node.offset,
                path: path(),
                hint: "add \"rules\": [{\"path\": \"/*\"}] to claim every URL")
        }
        return app
    }

    private static func readRule(_ node: JSONNode, path: @autoclosure () -> KeyPath, reader: JSONReader)
        -> ComponentPattern?
    {
        ComponentPattern.read(node, path: path(), reader: reader, spelling: .site)
    }

    private static func readTest(_ node: JSONNode, path: @autoclosure () -> KeyPath, reader: JSONReader) -> LinkTest? {
        guard let object = reader.object(node, path: path(), known: ["url", "opensApp", "staysOnWeb", "comment"]) else {
            return nil
        }
        guard let urlMember = object["url"], let url = reader.string(urlMember.value, path: path().key("url")) else {
            if object["url"] == nil {
                reader.report(.error, rule: .missingKey, "test has no \"url\"", at: node.offset, path: path())
            }
            return nil
        }
        switch (object["opensApp"], object["staysOnWeb"]) {
        case (let app?, nil):
            return reader.string(app.value, path: path().key("opensApp")).map {
                LinkTest(url: url, expectation: .opensApp($0), offset: node.offset)
            }
        case (nil, let web?):
            guard let flag = reader.bool(web.value, path: path().key("staysOnWeb")) else { return nil }
            if !flag {
                reader.report(
                    .error, rule: .testExpectation, "\"staysOnWeb\": false asserts nothing", at: web.value.offset,
                    path: path().key("staysOnWeb"), hint: "use \"opensApp\": \"TEAMID.bundle.id\" instead")
                return nil
            }
            return LinkTest(url: url, expectation: .staysOnWeb, offset: node.offset)
        default:
            reader.report(
                .error, rule: .testExpectation, "a test needs exactly one of \"opensApp\" or \"staysOnWeb\"",
                at: node.offset,
                path: path(), hint: "add \"opensApp\": \"TEAMID.bundle.id\" or \"staysOnWeb\": true")
            return nil
        }
    }
}

extension SiteConfig {
    /// The config as `site.json` content, omitting values equal to their defaults.
    public func jsonValue(schema: String? = "../../docs/site.schema.json") -> JSONValue {
        var pairs: [(String, JSONValue)] = []
        if let schema { pairs.append(("$schema", .string(schema))) }
        if !legacyFormat { pairs.append(("legacyFormat", .bool(false))) }
        if cacheControl != Self.defaultCacheControl { pairs.append(("cacheControl", .string(cacheControl))) }
        if let universalLinks { pairs.append(("universalLinks", universalLinks.jsonValue)) }
        if !webCredentials.isEmpty { pairs.append(("webCredentials", .strings(webCredentials))) }
        if !appClips.isEmpty { pairs.append(("appClips", .strings(appClips))) }
        if !handoff.isEmpty { pairs.append(("handoff", .strings(handoff))) }
        if !authsrv.isEmpty { pairs.append(("authsrv", .strings(authsrv))) }
        if let smartAppBanner { pairs.append(("smartAppBanner", smartAppBanner.jsonValue)) }
        if !pages.isDefault { pairs.append(("pages", pages.jsonValue)) }
        if !tests.isEmpty {
            pairs.append(
                (
                    "tests",
                    .array(
                        tests.map { test in
                            switch test.expectation {
                            case .opensApp(let app):
                                JSONNode(.members([("url", .string(test.url)), ("opensApp", .string(app))]))
                            case .staysOnWeb:
                                JSONNode(.members([("url", .string(test.url)), ("staysOnWeb", .bool(true))]))
                            }
                        })
                ))
        }
        if let signing { pairs.append(("signing", signing.jsonValue)) }
        if let android { pairs.append(("android", android.jsonValue)) }
        if let hsts { pairs.append(("hsts", hsts.jsonValue)) }
        if let passkeys { pairs.append(("passkeys", passkeys.jsonValue)) }
        if let changePassword { pairs.append(("changePassword", .string(changePassword))) }
        if let fallback { pairs.append(("fallback", fallback.jsonValue)) }
        return .members(pairs)
    }
}

extension MatchingDefaults {
    var jsonValue: JSONValue {
        var pairs: [(String, JSONValue)] = []
        if let caseSensitive { pairs.append(("caseSensitive", .bool(caseSensitive))) }
        if let percentEncoded { pairs.append(("percentEncoded", .bool(percentEncoded))) }
        return .members(pairs)
    }
}

extension UniversalLinks {
    var jsonValue: JSONValue {
        var pairs: [(String, JSONValue)] = []
        if let defaults { pairs.append(("defaults", defaults.jsonValue)) }
        if !variables.isEmpty {
            pairs.append(("variables", .members(variables.map { ($0.name, .strings($0.values)) })))
        }
        pairs.append(("apps", .array(apps.map { JSONNode($0.jsonValue) })))
        return .members(pairs)
    }
}

extension AppRules {
    var jsonValue: JSONValue {
        var pairs: [(String, JSONValue)] = [("appIDs", .strings(appIDs))]
        if let defaults { pairs.append(("defaults", defaults.jsonValue)) }
        pairs.append(("rules", .array(rules.map { JSONNode($0.jsonValue(spelling: .site)) })))
        if let legacyPaths { pairs.append(("legacyPaths", .strings(legacyPaths))) }
        return .members(pairs)
    }
}

extension Rule {
    /// Reported by `SiteConfig`; also by `AssociationFile`, `AndroidApp`, `BannerConfig`, `AssetLinksImporter`.
    public static let missingKey = Rule("missing-key", .error, "A test without `url`.")

    /// Reported by `SiteConfig`; also by `AndroidConfig`, `AssociationImporter`, `DetailsWithoutAppRule`,
    /// `AppEntryRule`.
    public static let noApp = Rule("no-app", .error, "An app entry without `appIDs`, or with an empty list.")

    /// Reported by `SiteConfig`; also by `AssociationImporter`, `AppEntryRule`.
    public static let noRules = Rule("no-rules", .error, "An app entry without `rules`, or with an empty list.")

    /// Reported by `SiteConfig`.
    public static let testExpectation = Rule(
        "test-expectation", .error, "A test without exactly one of `opensApp` / `staysOnWeb: true`.")

    /// The rules of site.json's required keys and entries (stage 2), in the order of the docs table: their part of
    /// `Rule.all`.
    package static let siteKeyRules: [Rule] = [
        .missingKey,
        .noApp,
        .noRules,
        .testExpectation,
    ]
}
