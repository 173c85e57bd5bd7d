/// The android section's apps are well-formed: package names, SHA-256 fingerprints, at least one
/// permission, and dynamic rules that name a real Apple app (spec §7).
public struct AndroidAppRule: SiteRule {
    /// Creates the rule.
    public init() {}

    /// Reports malformed packages and fingerprints, repeats, apps with no permission, and bad rule sources.
    public func check(_ site: SiteContext) -> [Diagnostic] {
        guard let android = site.config.android else { return [] }
        var found: [Diagnostic] = []
        // What makes two apps the same: kept only when there are two or more to compare.
        var seen: [DuplicateKey: Int] = [:]
        for (index, app) in android.apps.enumerated() {
            // Made only for a finding.
            var path: KeyPath { KeyPath.androidApps.index(index) }
            if let problem = Self.packageProblem(app.package) {
                found.append(
                    site.diagnostic(
                        .error, rule: .androidPackage, problem, at: path.key("package"),
                        hint: "use the applicationId from the app's build.gradle, e.g. com.example.shop"))
            }
            if app.fingerprints.isEmpty {
                found.append(
                    site.diagnostic(
                        .error, rule: .androidFingerprint,
                        "\(app.package) lists no fingerprint, so it never verifies",
                        at: path.key("fingerprints"),
                        hint:
                            "add the SHA-256 fingerprint of each signing certificate (debug, release, Play App Signing)"
                    ))
            }
            // Each fingerprint is normalized once (nil exactly when it has a problem); the set of those seen is made
            // only for an app with two or more.
            var normalized: Set<String> = []
            for (fingerprintIndex, fingerprint) in app.fingerprints.enumerated() {
                if let value = CertificateFingerprint.normalized(fingerprint) {
                    if app.fingerprints.count > 1 && !normalized.insert(value).inserted {
                        found.append(
                            site.diagnostic(
                                .warning, rule: .duplicateFingerprint, "fingerprint \(value) is listed twice",
                                at: path.key("fingerprints").index(fingerprintIndex), hint: "remove the repeat"))
                    }
                } else if let problem = CertificateFingerprint.problem(fingerprint) {
                    found.append(
                        site.diagnostic(
                            .error, rule: .androidFingerprint, problem,
                            at: path.key("fingerprints").index(fingerprintIndex),
                            hint: "copy the SHA-256 line of `keytool -list -v -keystore …` or Play Console › "
                                + "App integrity › App signing: 32 hex pairs such as 14:6D:E9:…"))
                }
            }
            let loginCredentials = app.loginCredentials ?? !site.config.webCredentials.isEmpty
            if !app.appLinks && !loginCredentials {
                found.append(
                    site.diagnostic(
                        .error, rule: .androidNoRelation,
                        "\(app.package) gets neither App Links nor sign-in sharing, so its statement says nothing",
                        at: path, hint: "remove \"appLinks\": false, or set \"loginCredentials\": true"))
            }
            if app.rules != nil && app.rulesFrom != nil {
                found.append(
                    site.diagnostic(
                        .error, rule: .androidRules, "\"rules\" and \"rulesFrom\" are both set",
                        at: path.key("rules"),
                        hint: "keep one: explicit rules, or the universal-link rules of an Apple app"))
            }
            if (app.rules != nil || app.rulesFrom != nil) && !app.appLinks {
                found.append(
                    site.diagnostic(
                        .error, rule: .androidRules, "dynamic rules need App Links, but \"appLinks\" is false",
                        at: path.key(app.rules != nil ? "rules" : "rulesFrom"),
                        hint: "remove the rules, or remove \"appLinks\": false"))
            }
            if let source = app.rulesFrom,
                !(site.config.universalLinks?.apps ?? []).contains(where: { $0.appIDs.contains(source) })
            {
                found.append(
                    site.diagnostic(
                        .error, rule: .androidRules,
                        "\"rulesFrom\" names \(source), which no universalLinks app lists",
                        at: path.key("rulesFrom"), hint: "use one of the appIDs in universalLinks.apps"))
            }
            guard android.apps.count > 1 else { continue }
            let key = DuplicateKey(
                package: app.package, appLinks: app.appLinks, loginCredentials: loginCredentials, rules: app.rules,
                rulesFrom: app.rulesFrom)
            if let first = seen[key] {
                found.append(
                    site.diagnostic(
                        .warning, rule: .duplicatePackage,
                        "\(app.package) is listed again with the same permissions (first at android.apps[\(first)])",
                        at: path.key("package"), hint: "merge the fingerprints into the first entry"))
            } else {
                seen[key] = index
            }
        }
        return found
    }

    /// What two entries of `android.apps` share when one repeats the other: the package and every permission.
    private struct DuplicateKey: Hashable {
        let package: String
        let appLinks: Bool
        let loginCredentials: Bool
        let rules: [ComponentPattern]?
        let rulesFrom: String?
    }

    /// Why `name` is not an Android application ID, or `nil` (two or more dot-separated parts, each a
    /// letter followed by letters, digits or `_`).
    public static func packageProblem(_ name: String) -> String? {
        // Split by its bytes, not into Characters, and ASCII only, so the bytes say it: no Unicode property lookups
        // for every package of every domain.
        let parts = name.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count >= 2 else {
            return "'\(name)' is not an Android package name: it needs at least two parts, e.g. com.example.app"
        }
        func isLetter(_ byte: UInt8) -> Bool {
            (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
        }
        for part in parts {
            guard let first = part.first, isLetter(first),
                part.allSatisfy({
                    isLetter($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "_")
                })
            else {
                return "'\(name)' is not an Android package name: '\(Substring(part))' must start with a letter and "
                    + "hold only letters, digits and '_'"
            }
        }
        return nil
    }
}

extension Rule {
    /// Reported by `AndroidAppRule`; also by `AssetLinksImporter`.
    public static let androidPackage = Rule(
        "android-package", .error, "A malformed `android` package name or fingerprint.")

    /// Reported by `AndroidAppRule`; also by `AssetLinksImporter`.
    public static let androidFingerprint = Rule(
        "android-fingerprint", .error, "A malformed `android` package name or fingerprint.")

    /// Reported by `AndroidAppRule`.
    public static let androidNoRelation = Rule(
        "android-no-relation", .error,
        "An app with neither App Links nor sign-ins, or dynamic rules that cannot apply (`rules` with `rulesFrom`, `appLinks: false`, an unknown `rulesFrom`)."
    )

    /// Reported by `AndroidAppRule`.
    public static let androidRules = Rule(
        "android-rules", .error,
        "An app with neither App Links nor sign-ins, or dynamic rules that cannot apply (`rules` with `rulesFrom`, `appLinks: false`, an unknown `rulesFrom`)."
    )

    /// Reported by `AndroidAppRule`.
    public static let duplicateFingerprint = Rule(
        "duplicate-fingerprint", .warning,
        "The same fingerprint twice, or the same package twice with the same permissions.")

    /// Reported by `AndroidAppRule`.
    public static let duplicatePackage = Rule(
        "duplicate-package", .warning,
        "The same fingerprint twice, or the same package twice with the same permissions.")

    /// The rules of the `android` section and the generated assetlinks.json, in the order of the docs table: their part
    /// of `Rule.all`.
    package static let androidAppRules: [Rule] = [
        .androidPackage,
        .androidFingerprint,
        .androidNoRelation,
        .androidRules,
        .duplicateFingerprint,
        .duplicatePackage,
        .androidDynamicRules,
        .androidWildcardDiffers,
        .androidRuleLeftOut,
    ]
}
