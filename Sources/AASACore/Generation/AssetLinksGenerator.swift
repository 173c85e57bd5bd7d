/// Turns a config's `android` section into Google's Digital Asset Links statement list, served as
/// `/.well-known/assetlinks.json` (spec §7).
public struct AssetLinksGenerator: Sendable {
    /// Google's relation for App Links (spec §7, G-REL).
    public static let handleAllURLs = "delegate_permission/common.handle_all_urls"
    /// Google's relation for sharing saved sign-ins.
    public static let getLoginCredentials = "delegate_permission/common.get_login_creds"

    /// The generated statement list.
    /// The statement tree is not kept: a server holds one output per domain for as long as it serves it, and the
    /// tree cost about 0.5 KiB per domain that nothing read (the bytes are what is served, tested and signed).
    public struct Output: Sendable {
        /// The compact bytes served.
        public var bytes: [UInt8]
        /// Warnings about rules Android cannot express.
        public var diagnostics: [Diagnostic]
    }

    /// Creates a generator.
    public init() {}

    /// The statement list for `site`, or `nil` when it has no android section.
    ///
    /// One `android_app` statement per app: `handle_all_urls` unless `appLinks` is false, plus
    /// `get_login_creds` when the domain has `webCredentials` apps (or `loginCredentials` says so).
    /// Fingerprints are normalised to upper-case colon-separated hex; malformed ones are reported by
    /// ``AndroidAppRule`` and left out here.
    public func generate(_ site: SiteContext) -> Output? {
        guard let android = site.config.android else { return nil }
        var diagnostics: [Diagnostic] = []
        var output = CompactJSONOutput()
        output.beginArray()
        for (index, app) in android.apps.enumerated() {
            let sharesLogins = app.loginCredentials ?? !site.config.webCredentials.isEmpty
            guard app.appLinks || sharesLogins else { continue }
            output.beginObject()
            output.key("relation")
            output.beginArray()
            if app.appLinks { output.string(Self.handleAllURLs) }
            if sharesLogins { output.string(Self.getLoginCredentials) }
            output.endArray()
            output.key("target")
            output.beginObject()
            output.member("namespace", "android_app")
            output.member("package_name", app.package)
            output.member(
                "sha256_cert_fingerprints", strings: app.fingerprints.compactMap(CertificateFingerprint.normalized))
            output.endObject()
            let rules = dynamicRules(for: app, index: index, site: site, diagnostics: &diagnostics)
            if app.appLinks, let rules {
                output.key("relation_extensions")
                output.beginObject()
                output.key(Self.handleAllURLs)
                output.beginObject()
                output.key("dynamic_app_link_components")
                output.beginArray()
                for rule in rules { rule.write(to: &output, spelling: .apple) }
                output.endArray()
                output.endObject()
                output.endObject()
            }
            output.endObject()
        }
        output.endArray()
        return Output(bytes: output.bytes, diagnostics: diagnostics)
    }

    /// The dynamic rules of `app` in Android's component form (`/`, `?`, `#`, `exclude`, `comment`), leaving
    /// out with a warning what Android cannot express: substitution variables, whole-query patterns, and
    /// case or percent-encoding settings (Android has neither).
    func dynamicRules(for app: AndroidApp, index: Int, site: SiteContext, diagnostics: inout [Diagnostic])
        -> [ComponentPattern]?
    {
        // Made only for a finding.
        var appPath: KeyPath { KeyPath.androidApps.index(index) }
        let rules: [ComponentPattern]
        let rulePath: (Int) -> KeyPath
        if let explicit = app.rules {
            rules = explicit
            rulePath = { appPath.key("rules").index($0) }
        } else if let source = app.rulesFrom,
            let entryIndex = site.config.universalLinks?.apps.firstIndex(where: { $0.appIDs.contains(source) }),
            let entry = site.config.universalLinks?.apps[entryIndex]
        {
            rules = entry.rules
            rulePath = { KeyPath.universalLinksApps.index(entryIndex).key("rules").index($0) }
        } else {
            return nil
        }
        var components: [ComponentPattern] = []
        for (ruleIndex, rule) in rules.enumerated() {
            let texts =
                [rule.path, rule.fragment]
                + {
                    if case .items(let items) = rule.query { return items.map { Optional($0.pattern) } }
                    return []
                }()
            var reason: String?
            if texts.contains(where: { $0?.contains("$(") == true }) {
                reason = "it uses a substitution variable, which Android does not have"
            } else if case .whole(let pattern) = rule.query, pattern != "*" {
                reason = "Android matches query items by name only; write the query as {\"name\": \"pattern\"}"
            }
            if let reason {
                diagnostics.append(
                    site.diagnostic(
                        .warning, rule: .androidRuleLeftOut,
                        "rule left out of \(app.package)'s dynamic App Link rules: \(reason)",
                        at: rulePath(ruleIndex), hint: "give the app its own \"rules\" in the android section"))
                continue
            }
            // Android knows `/`, `?` (a dictionary), `#` and `exclude`, nothing else: any other key, a comment
            // included, makes it discard every rule (spec §7.1).
            var android = rule
            android.caseSensitive = nil
            android.percentEncoded = nil
            android.comment = nil
            if case .whole = android.query { android.query = nil }
            // Only a rule mirrored from an Apple entry (`rulesFrom`) has an Apple reading to differ from: the app's
            // own `rules` are written for Android.
            if app.rules == nil,
                let url = WildcardDifference.witness(apple: rule, android: android, domain: site.domain)
            {
                diagnostics.append(
                    site.diagnostic(
                        .warning, rule: .androidWildcardDiffers,
                        "iOS and Android 15+ answer \(url) differently: Android's \"*\" and \"?*\" stop at the first occurrence of the character after them, Android has no caseSensitive, and a query entry needs its item present",
                        at: rulePath(ruleIndex),
                        hint:
                            "give the Android app its own \"rules\" written for Android's matching, or rewrite this rule so both platforms read it alike"
                    ))
            }
            components.append(android)
        }
        guard !components.isEmpty else {
            // Android discards an empty list (spec §7.1); leave it out so nothing pretends to narrow the manifest.
            diagnostics.append(
                site.diagnostic(
                    .warning, rule: .androidDynamicRules,
                    "no dynamic rule is left for \(app.package): the empty list is left out, and the app's intent filters decide on Android 15+ too",
                    at: app.rules != nil ? appPath.key("rules") : appPath.key("rulesFrom"),
                    hint: "give the app rules Android can express, or drop \"rules\""))
            return nil
        }
        return components
    }
}

extension Rule {
    /// Reported by `AssetLinksGenerator`.
    public static let androidWildcardDiffers = Rule(
        "android-wildcard-differs", .warning,
        "An Android dynamic rule answers a URL (named) differently from the Apple rule it mirrors: Android's `*` and `?*` stop at the first occurrence of the next character, Android has no `caseSensitive`, and its query entries need their item present."
    )

    /// Reported by `AssetLinksGenerator`.
    public static let androidRuleLeftOut = Rule(
        "android-rule-left-out", .warning, "A rule Android's dynamic rules cannot express.")
}
