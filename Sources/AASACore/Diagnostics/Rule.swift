/// One diagnostic rule: its stable id, its usual severity, what it means, and where the docs explain it.
///
/// Every rule a finding can carry is a static member below, in the order of the table in
/// docs/configuration.md#errors-and-warnings, and ``all`` lists them; `RuleCatalogueTests` fails when the docs and
/// this list disagree. Adding a rule: CONTRIBUTING.md, "Adding a lint rule".
public struct Rule: Sendable, Hashable, CustomStringConvertible {
    /// The stable id scripts and tests key on, e.g. `app-id-format`.
    public let id: String
    /// The severity it is reported with unless the finding says otherwise (some rules warn or err by case).
    public let severity: Diagnostic.Severity
    /// What it means, in one line.
    public let summary: String
    /// Where the docs explain it, relative to `docs/` (`configuration.md#errors-and-warnings`).
    public let documentation: String

    private init(
        _ id: String, _ severity: Diagnostic.Severity, _ summary: String,
        docs: String = "configuration.md#errors-and-warnings"
    ) {
        self.id = id
        self.severity = severity
        self.summary = summary
        self.documentation = docs
    }

    /// The id.
    public var description: String { id }

    /// The rule with `id`, or `nil` when no rule has it.
    public static func named(_ id: String) -> Rule? { byID[id] }

    private static let byID = Dictionary(uniqueKeysWithValues: all.map { ($0.id, $0) })

    /// The config folder is missing or unreadable.
    public static let configFolder = Rule("config-folder", .error, "The config folder is missing or unreadable.")

    /// The folder name is not a lower-case host name.
    public static let domainName = Rule("domain-name", .error, "The folder name is not a lower-case host name.")

    /// The domain folder has no `site.json`, or a file the config names does not exist.
    public static let missingFile = Rule(
        "missing-file", .error, "The domain folder has no `site.json`, or a file the config names does not exist.")

    /// A file is over its cap (`site.json` 1 MiB, the landing template 1 MiB, a signing identity file 1 MiB, `fullchain.pem` 1 MiB, `privkey.pem` 64 KiB; security.md); it is not read.
    public static let fileTooLarge = Rule(
        "file-too-large", .error,
        "A file is over its cap (`site.json` 1 MiB, the landing template 1 MiB, a signing identity file 1 MiB, `fullchain.pem` 1 MiB, `privkey.pem` 64 KiB; security.md); it is not read.",
        docs: "security.md#file-confinement-and-bounded-reads")

    /// A file exists but cannot be opened or read (permissions).
    public static let fileUnreadable = Rule(
        "file-unreadable", .error, "A file exists but cannot be opened or read (permissions).",
        docs: "security.md#file-confinement-and-bounded-reads")

    /// A file, or the domain folder itself, leads (through symlinks) outside the domain's own folder: into another domain's folder, the certificate folder, or anywhere else on the machine. Nothing is read through it. See security.md.
    public static let pathOutside = Rule(
        "path-outside", .error,
        "A file, or the domain folder itself, leads (through symlinks) outside the domain's own folder: into another domain's folder, the certificate folder, or anywhere else on the machine. Nothing is read through it. See security.md.",
        docs: "security.md#file-confinement-and-bounded-reads")

    /// A file is a FIFO, a device, a socket or a folder, not a regular file; it is not read.
    public static let fileType = Rule(
        "file-type", .error, "A file is a FIFO, a device, a socket or a folder, not a regular file; it is not read.",
        docs: "security.md#file-confinement-and-bounded-reads")

    /// A page or the landing template holds PEM private-key armour (`-----BEGIN … PRIVATE KEY-----`): it is never served, whatever its path. Replace the key: it may have leaked.
    public static let privateKeyInPage = Rule(
        "private-key-in-page", .error,
        "A page or the landing template holds PEM private-key armour (`-----BEGIN … PRIVATE KEY-----`): it is never served, whatever its path. Replace the key: it may have leaked.",
        docs: "security.md#file-confinement-and-bounded-reads")

    /// The domain's pages do not fit in what is left of the server-wide pages budget (`serve --pages-memory`); the rest of its `pages/` is not read and, on reload, it keeps its last good version.
    public static let pagesMemory = Rule(
        "pages-memory", .error,
        "The domain's pages do not fit in what is left of the server-wide pages budget (`serve --pages-memory`); the rest of its `pages/` is not read and, on reload, it keeps its last good version.",
        docs: "security.md#file-confinement-and-bounded-reads")

    /// At start, no domain folder could be served: the start fails with exit status 2 (one failing domain beside good ones never stops the start).
    public static let noDomainServed = Rule(
        "no-domain-served", .error,
        "At start, no domain folder could be served: the start fails with exit status 2 (one failing domain beside good ones never stops the start)."
    )

    /// The file is not UTF-8 (the first bad byte, and the key it is in).
    public static let notUTF8 = Rule(
        "not-utf8", .error, "The file is not UTF-8 (the first bad byte, and the key it is in).")

    /// The file starts with a byte order mark.
    public static let bom = Rule("bom", .warning, "The file starts with a byte order mark.")

    /// Not valid JSON (comments, trailing comma, quotes, …).
    public static let invalidJSON = Rule(
        "invalid-json", .error, "Not valid JSON (comments, trailing comma, quotes, …).")

    /// Nested more than 64 levels.
    public static let jsonTooDeep = Rule("json-too-deep", .error, "Nested more than 64 levels.")

    /// A key aasa-server does not know at that level (typo, Apple's key name, or wrong level).
    public static let unknownKey = Rule(
        "unknown-key", .error, "A key aasa-server does not know at that level (typo, Apple's key name, or wrong level)."
    )

    /// The same key twice in one object, with both lines. Also in files given to `check --aasa` and `import`: Apple's reader keeps one copy without a word, so the file does not mean what it says and cannot be imported faithfully.
    public static let duplicateKey = Rule(
        "duplicate-key", .error,
        "The same key twice in one object, with both lines. Also in files given to `check --aasa` and `import`: Apple's reader keeps one copy without a word, so the file does not mean what it says and cannot be imported faithfully."
    )

    /// E.g. a number where a string is expected, `\"true\"` instead of `true`.
    public static let wrongType = Rule(
        "wrong-type", .error, "E.g. a number where a string is expected, `\"true\"` instead of `true`.")

    /// A test without `url`.
    public static let missingKey = Rule("missing-key", .error, "A test without `url`.")

    /// An app entry without `appIDs`, or with an empty list.
    public static let noApp = Rule("no-app", .error, "An app entry without `appIDs`, or with an empty list.")

    /// An app entry without `rules`, or with an empty list.
    public static let noRules = Rule("no-rules", .error, "An app entry without `rules`, or with an empty list.")

    /// A test without exactly one of `opensApp` / `staysOnWeb: true`.
    public static let testExpectation = Rule(
        "test-expectation", .error, "A test without exactly one of `opensApp` / `staysOnWeb: true`.")

    /// Not `TEAMID.bundle.id` (see App IDs).
    public static let appIDFormat = Rule("app-id-format", .error, "Not `TEAMID.bundle.id` (see App IDs).")

    /// The same app twice in one list.
    public static let duplicateApp = Rule("duplicate-app", .error, "The same app twice in one list.")

    /// A variable name that is empty or contains `$`, `(`, `)`.
    public static let variableName = Rule(
        "variable-name", .error, "A variable name that is empty or contains `$`, `(`, `)`.")

    /// A variable with no values.
    public static let variableEmpty = Rule("variable-empty", .error, "A variable with no values.")

    /// A variable value containing `$(`.
    public static let variableNested = Rule("variable-nested", .error, "A variable value containing `$(`.")

    /// `cacheControl` is empty or has line breaks / control characters.
    public static let cacheControl = Rule(
        "cache-control", .error, "`cacheControl` is empty or has line breaks / control characters.")

    /// A rule left out of the iOS 9–12 paths.
    public static let legacyInexpressible = Rule(
        "legacy-inexpressible", .warning, "A rule left out of the iOS 9–12 paths.")

    /// The generated file is over 100 KiB / over 131,072 bytes.
    public static let fileSize = Rule("file-size", .warning, "The generated file is over 100 KiB / over 131,072 bytes.")

    /// `$(name)` names no variable in `variables` and no built-in.
    public static let unknownVariable = Rule(
        "unknown-variable", .error, "`$(name)` names no variable in `variables` and no built-in.")

    /// `$(` without `)`, or `$()`.
    public static let unterminatedVariable = Rule("unterminated-variable", .error, "`$(` without `)`, or `$()`.")

    /// `$(` without `)`, or `$()`.
    public static let emptyVariableName = Rule("empty-variable-name", .error, "`$(` without `)`, or `$()`.")

    /// A variable in `variables` replaces a built-in such as `digit`.
    public static let variableShadowsBuiltIn = Rule(
        "variable-shadows-built-in", .warning, "A variable in `variables` replaces a built-in such as `digit`.")

    /// A variable defined twice; the last definition wins.
    public static let duplicateVariable = Rule(
        "duplicate-variable", .warning, "A variable defined twice; the last definition wins.")

    /// A non-ASCII pattern under `percentEncoded: true` can never match; percent-encode it or set `percentEncoded: false`.
    public static let nonASCIIPatternWhilePercentEncoded = Rule(
        "non-ascii-pattern-while-percent-encoded", .warning,
        "A non-ASCII pattern under `percentEncoded: true` can never match; percent-encode it or set `percentEncoded: false`."
    )

    /// A pattern over 1,024 characters (docs: Pattern limits).
    public static let patternTooLong = Rule(
        "pattern-too-long", .error, "A pattern over 1,024 characters (see Pattern limits).")

    /// A pattern over 32 wildcards, 8 variable uses, a step width of 512 or 4,096 automaton states, or banner exclusions over 4,096 characters together (docs: Pattern limits).
    public static let patternTooComplex = Rule(
        "pattern-too-complex", .error,
        "A pattern over 32 wildcards, 8 variable uses, a step width of 512 or 4,096 automaton states, or banner exclusions over 4,096 characters together (see Pattern limits)."
    )

    /// A variable over 1,024 values or 16,384 bytes of values; no pattern using it is compiled (docs: Pattern limits).
    public static let variableTooLarge = Rule(
        "variable-too-large", .error,
        "A variable over 1,024 values or 16,384 bytes of values; no pattern using it is compiled (see Pattern limits).")

    /// The file's patterns together over a step width of 16,384 or 65,536 automaton states (docs: Pattern limits).
    public static let rulesTooComplex = Rule(
        "rules-too-complex", .error,
        "The file's patterns together over a step width of 16,384 or 65,536 automaton states (see Pattern limits).")

    /// A test URL does something else than expected, or is not on the domain.
    public static let testURL = Rule(
        "test-url", .error, "A test URL does something else than expected, or is not on the domain.")

    /// A rule that can never apply: an earlier rule for the same apps already matches every URL it matches (the classic case: an exclusion below a catch-all). A note instead when a file has so many overlapping rules (hundreds starting with `*`) that comparing them all would hold up a reload: the rules after it are not checked.
    public static let unreachableRule = Rule(
        "unreachable-rule", .warning,
        "A rule that can never apply: an earlier rule for the same apps already matches every URL it matches (the classic case: an exclusion below a catch-all). A note instead when a file has so many overlapping rules (hundreds starting with `*`) that comparing them all would hold up a reload: the rules after it are not checked."
    )

    /// An exclusion with a query item `\"*\"`: it also matches URLs without that item (absent counts as `\"\"`), so it excludes every URL its path matches. Use `\"?*\"`.
    public static let excludeQueryStar = Rule(
        "exclude-query-star", .warning,
        "An exclusion with a query item `\"*\"`: it also matches URLs without that item (absent counts as `\"\"`), so it excludes every URL its path matches. Use `\"?*\"`."
    )

    /// An App Clip ID that does not extend any listed app of its team (error), or whose parent app is not listed at all (warning).
    public static let appClipParent = Rule(
        "appclip-parent", .error,
        "An App Clip ID that does not extend any listed app of its team (error), or whose parent app is not listed at all (warning)."
    )

    /// `smartAppBanner.appStoreID` is not digits.
    public static let bannerAppStoreID = Rule(
        "banner-app-store-id", .error, "`smartAppBanner.appStoreID` is not digits.")

    /// `appClipBundleID` is not the bundle part of an App Clip in `appClips` (or has a team prefix), or `appClipDisplay` is not `\"card\"` or lacks `appClipBundleID`.
    public static let bannerAppClip = Rule(
        "banner-app-clip", .error,
        "`appClipBundleID` is not the bundle part of an App Clip in `appClips` (or has a team prefix), or `appClipDisplay` is not `\"card\"` or lacks `appClipBundleID`."
    )

    /// A banner value with a control character or line break, or empty.
    public static let bannerControlCharacter = Rule(
        "banner-control-character", .error, "A banner value with a control character or line break, or empty.")

    /// A banner value with a control character or line break, or empty.
    public static let bannerEmpty = Rule(
        "banner-empty", .error, "A banner value with a control character or line break, or empty.")

    /// An `appArgument` placeholder other than `{url}`, `{path}`, `{query}`.
    public static let bannerAppArgument = Rule(
        "banner-app-argument", .error, "An `appArgument` placeholder other than `{url}`, `{path}`, `{query}`.")

    /// An `exclude` entry that is not a path pattern.
    public static let bannerExclude = Rule("banner-exclude", .error, "An `exclude` entry that is not a path pattern.")

    /// A landing page without `smartAppBanner`, a control character in its title, a template path outside the domain folder, an unreadable template, or an unknown `{{placeholder}}`.
    public static let landingPage = Rule(
        "landing-page", .error,
        "A landing page without `smartAppBanner`, a control character in its title, a template path outside the domain folder, an unreadable template, or an unknown `{{placeholder}}`."
    )

    /// A landing page without `smartAppBanner`, a control character in its title, a template path outside the domain folder, an unreadable template, an unknown `{{placeholder}}`, or `{{url}}` used more than 16 times.
    public static let landingTemplate = Rule(
        "landing-template", .error,
        "A landing page without `smartAppBanner`, a control character in its title, a template path outside the domain folder, an unreadable template, an unknown `{{placeholder}}`, or `{{url}}` used more than 16 times."
    )

    /// A file over 16 MiB, or a `pages/` folder over 64 MiB, 10,000 files or 20,000 entries; reading stops at the file or entry that passes the cap.
    public static let pageTooLarge = Rule(
        "page-too-large", .error,
        "A file over 16 MiB, or a `pages/` folder over 64 MiB, 10,000 files or 20,000 entries; reading stops at the file or entry that passes the cap."
    )

    /// A file over 16 MiB, or a `pages/` folder over 64 MiB, 10,000 files or 20,000 entries; reading stops at the file or entry that passes the cap.
    public static let pagesTooLarge = Rule(
        "pages-too-large", .error,
        "A file over 16 MiB, or a `pages/` folder over 64 MiB, 10,000 files or 20,000 entries; reading stops at the file or entry that passes the cap."
    )

    /// A symlink out of `pages/` (the message says where it leads) or a broken one, or a name that cannot be requested safely: not served, and nothing is read through the link.
    public static let pageSymlink = Rule(
        "page-symlink", .warning,
        "A symlink out of `pages/` (the message says where it leads) or a broken one, or a name that cannot be requested safely: not served, and nothing is read through the link."
    )

    /// A symlink out of `pages/` (the message says where it leads) or a broken one, or a name that cannot be requested safely: not served, and nothing is read through the link.
    public static let pageName = Rule(
        "page-name", .warning,
        "A symlink out of `pages/` (the message says where it leads) or a broken one, or a name that cannot be requested safely: not served, and nothing is read through the link."
    )

    /// A touch icon that is not a file in `pages/`, not a PNG, or not square.
    public static let touchIconMissing = Rule(
        "touch-icon-missing", .error, "A touch icon that is not a file in `pages/`, not a PNG, or not square.")

    /// A touch icon that is not a file in `pages/`, not a PNG, or not square.
    public static let touchIconFormat = Rule(
        "touch-icon-format", .error, "A touch icon that is not a file in `pages/`, not a PNG, or not square.")

    /// A touch icon that is not a file in `pages/`, not a PNG, or not square.
    public static let touchIconSquare = Rule(
        "touch-icon-square", .error, "A touch icon that is not a file in `pages/`, not a PNG, or not square.")

    /// An icon whose name says another size; no 180×180 icon.
    public static let touchIconSize = Rule(
        "touch-icon-size", .warning, "An icon whose name says another size; no 180×180 icon.")

    /// An icon whose name says another size; no 180×180 icon.
    public static let touchIcon180 = Rule(
        "touch-icon-180", .warning, "An icon whose name says another size; no 180×180 icon.")

    /// `check` only: no certificate in `certs/` covers the domain, or `certs/<domain>/` holds one for other names.
    public static let certificateMissing = Rule(
        "certificate-missing", .error,
        "`check` only: no certificate in `certs/` covers the domain, or `certs/<domain>/` holds one for other names.")

    /// `check` only: no certificate in `certs/` covers the domain, or `certs/<domain>/` holds one for other names.
    public static let certificateName = Rule(
        "certificate-name", .error,
        "`check` only: no certificate in `certs/` covers the domain, or `certs/<domain>/` holds one for other names.")

    /// `privkey.pem` does not belong to `fullchain.pem`, or a file cannot be read.
    public static let certificateKeyMismatch = Rule(
        "certificate-key-mismatch", .error,
        "`privkey.pem` does not belong to `fullchain.pem`, or a file cannot be read.")

    /// `privkey.pem` does not belong to `fullchain.pem`, or a file cannot be read.
    public static let certificateInvalid = Rule(
        "certificate-invalid", .error, "`privkey.pem` does not belong to `fullchain.pem`, or a file cannot be read.")

    /// A `privkey.pem` (or the development CA's key) that other users can read: a mode bit for others, or for a group the server does not run with. An error that keeps the certificate from loading under `serve --strict`. See security.md.
    public static let privateKeyPermissions = Rule(
        "private-key-permissions", .warning,
        "A `privkey.pem` (or the development CA's key) that other users can read: a mode bit for others, or for a group the server does not run with. An error that keeps the certificate from loading under `serve --strict`. See security.md.",
        docs: "security.md#private-keys")

    /// The domain's certificate has expired, or expires within 14 days.
    public static let certificateExpired = Rule(
        "certificate-expired", .error, "The domain's certificate has expired, or expires within 14 days.")

    /// The domain's certificate has expired, or expires within 14 days.
    public static let certificateExpiring = Rule(
        "certificate-expiring", .warning, "The domain's certificate has expired, or expires within 14 days.")

    /// `signing` names an incomplete or unreadable identity, or no certificate covers the domain.
    public static let signingIdentity = Rule(
        "signing-identity", .error,
        "`signing` names an incomplete or unreadable identity, or no certificate covers the domain.")

    /// The signing key does not match, the certificate is expired or not yet valid, does not cover the domain, lacks its chain, or has an RSA key under 2048 bits.
    public static let signingKeyMismatch = Rule(
        "signing-key-mismatch", .error,
        "The signing key does not match, the certificate is expired or not yet valid, does not cover the domain, lacks its chain, or has an RSA key under 2048 bits."
    )

    /// The signing key does not match, the certificate is expired or not yet valid, does not cover the domain, lacks its chain, or has an RSA key under 2048 bits.
    public static let signingExpired = Rule(
        "signing-expired", .error,
        "The signing key does not match, the certificate is expired or not yet valid, does not cover the domain, lacks its chain, or has an RSA key under 2048 bits."
    )

    /// The signing key does not match, the certificate is expired or not yet valid, does not cover the domain, lacks its chain, or has an RSA key under 2048 bits.
    public static let signingName = Rule(
        "signing-name", .error,
        "The signing key does not match, the certificate is expired or not yet valid, does not cover the domain, lacks its chain, or has an RSA key under 2048 bits."
    )

    /// The signing key does not match, the certificate is expired or not yet valid, does not cover the domain, lacks its chain, or has an RSA key under 2048 bits.
    public static let signingChain = Rule(
        "signing-chain", .error,
        "The signing key does not match, the certificate is expired or not yet valid, does not cover the domain, lacks its chain, or has an RSA key under 2048 bits."
    )

    /// The signing key does not match, the certificate is expired or not yet valid, does not cover the domain, lacks its chain, or has an RSA key under 2048 bits.
    public static let signingKeySize = Rule(
        "signing-key-size", .error,
        "The signing key does not match, the certificate is expired or not yet valid, does not cover the domain, lacks its chain, or has an RSA key under 2048 bits."
    )

    /// OpenSSL could not make the signature.
    public static let signingFailed = Rule("signing-failed", .error, "OpenSSL could not make the signature.")

    /// A malformed `android` package name or fingerprint.
    public static let androidPackage = Rule(
        "android-package", .error, "A malformed `android` package name or fingerprint.")

    /// A malformed `android` package name or fingerprint.
    public static let androidFingerprint = Rule(
        "android-fingerprint", .error, "A malformed `android` package name or fingerprint.")

    /// An app with neither App Links nor sign-ins, or dynamic rules that cannot apply (`rules` with `rulesFrom`, `appLinks: false`, an unknown `rulesFrom`).
    public static let androidNoRelation = Rule(
        "android-no-relation", .error,
        "An app with neither App Links nor sign-ins, or dynamic rules that cannot apply (`rules` with `rulesFrom`, `appLinks: false`, an unknown `rulesFrom`)."
    )

    /// An app with neither App Links nor sign-ins, or dynamic rules that cannot apply (`rules` with `rulesFrom`, `appLinks: false`, an unknown `rulesFrom`).
    public static let androidRules = Rule(
        "android-rules", .error,
        "An app with neither App Links nor sign-ins, or dynamic rules that cannot apply (`rules` with `rulesFrom`, `appLinks: false`, an unknown `rulesFrom`)."
    )

    /// The same fingerprint twice, or the same package twice with the same permissions.
    public static let duplicateFingerprint = Rule(
        "duplicate-fingerprint", .warning,
        "The same fingerprint twice, or the same package twice with the same permissions.")

    /// The same fingerprint twice, or the same package twice with the same permissions.
    public static let duplicatePackage = Rule(
        "duplicate-package", .warning,
        "The same fingerprint twice, or the same package twice with the same permissions.")

    /// Android 15+ discards a `dynamic_app_link_components` block whole: it is empty, not a list, has a string `?`, a key Android does not know, a value of the wrong type, or a package has two blocks; the app's intent filters decide instead (error, `check --assetlinks`). A warning when no rule of an `android` app can be generated: its list is left out.
    public static let androidDynamicRules = Rule(
        "android-dynamic-rules", .error,
        "Android 15+ discards a `dynamic_app_link_components` block whole: it is empty, not a list, has a string `?`, a key Android does not know, a value of the wrong type, or a package has two blocks; the app's intent filters decide instead (error, `check --assetlinks`). A warning when no rule of an `android` app can be generated: its list is left out."
    )

    /// An Android dynamic rule answers a URL (named) differently from the Apple rule it mirrors: Android's `*` and `?*` stop at the first occurrence of the next character, Android has no `caseSensitive`, and its query entries need their item present.
    public static let androidWildcardDiffers = Rule(
        "android-wildcard-differs", .warning,
        "An Android dynamic rule answers a URL (named) differently from the Apple rule it mirrors: Android's `*` and `?*` stop at the first occurrence of the next character, Android has no `caseSensitive`, and its query entries need their item present."
    )

    /// A rule Android's dynamic rules cannot express.
    public static let androidRuleLeftOut = Rule(
        "android-rule-left-out", .warning, "A rule Android's dynamic rules cannot express.")

    /// An Apple file's `details` uses the iOS 9 beta dictionary form, in which the order between apps is undefined (`check --aasa`, `import`).
    public static let detailsDictionary = Rule(
        "details-dictionary", .warning,
        "An Apple file's `details` uses the iOS 9 beta dictionary form, in which the order between apps is undefined (`check --aasa`, `import`)."
    )

    /// An Apple file's `applinks.apps` is not an empty array; no iOS version reads it (`check --aasa`, `import`).
    public static let legacyAppsNotEmpty = Rule(
        "legacy-apps-not-empty", .warning,
        "An Apple file's `applinks.apps` is not an empty array; no iOS version reads it (`check --aasa`, `import`).")

    /// An Apple file declares no service (`applinks`, `webcredentials`, `appclips`, `activitycontinuation`, `authsrv`).
    public static let noServices = Rule(
        "no-services", .error,
        "An Apple file declares no service (`applinks`, `webcredentials`, `appclips`, `activitycontinuation`, `authsrv`)."
    )

    /// `\"components\": []` hides an entry's `paths` from iOS 13+ (error), or an entry's components are empty so it opens no URL (warning).
    public static let emptyComponents = Rule(
        "empty-components", .error,
        "`\"components\": []` hides an entry's `paths` from iOS 13+ (error), or an entry's components are empty so it opens no URL (warning)."
    )

    /// `defaults` sets a pattern key, which Apple applies to every rule that lacks it (undocumented behaviour).
    public static let defaultsPattern = Rule(
        "defaults-pattern", .warning,
        "`defaults` sets a pattern key, which Apple applies to every rule that lacks it (undocumented behaviour).")

    /// An Apple file's substitution variable has a malformed name, a value that uses another variable, or a pattern uses such a broken variable.
    public static let invalidVariableName = Rule(
        "invalid-variable-name", .error,
        "An Apple file's substitution variable has a malformed name, a value that uses another variable, or a pattern uses such a broken variable."
    )

    /// An Apple file's substitution variable has a malformed name, a value that uses another variable, or a pattern uses such a broken variable.
    public static let variableValueContainsVariable = Rule(
        "variable-value-contains-variable", .error,
        "An Apple file's substitution variable has a malformed name, a value that uses another variable, or a pattern uses such a broken variable."
    )

    /// An Apple file's substitution variable has a malformed name, a value that uses another variable, or a pattern uses such a broken variable.
    public static let invalidVariableUsed = Rule(
        "invalid-variable-used", .error,
        "An Apple file's substitution variable has a malformed name, a value that uses another variable, or a pattern uses such a broken variable."
    )

    /// `import` or `check --aasa` was given a CMS-signed (PKCS#7) file instead of JSON; extract the JSON first.
    public static let signedFile = Rule(
        "signed-file", .error,
        "`import` or `check --aasa` was given a CMS-signed (PKCS#7) file instead of JSON; extract the JSON first.")

    /// `import` of an Apple file whose entry has `appID` with legacy `paths` beside `appIDs`: the paths, which iOS 12 applies to `appID` only, are imported for every app of the entry.
    public static let legacyAppIDs = Rule(
        "legacy-app-ids", .warning,
        "`import` of an Apple file whose entry has `appID` with legacy `paths` beside `appIDs`: the paths, which iOS 12 applies to `appID` only, are imported for every app of the entry."
    )

    /// `import` into a domain whose existing `site.json` has errors; fix them first.
    public static let existingConfig = Rule(
        "existing-config", .error, "`import` into a domain whose existing `site.json` has errors; fix them first.")

    /// A tool could not write its output file (`import`, `sign --out`); nothing was replaced.
    public static let writeFailed = Rule(
        "write-failed", .error, "A tool could not write its output file (`import`, `sign --out`); nothing was replaced."
    )

    /// `hsts` asks for `preload` without `includeSubDomains` or with a `maxAge` under a year: the preload list refuses it.
    public static let hstsPreload = Rule(
        "hsts-preload", .error,
        "`hsts` asks for `preload` without `includeSubDomains` or with a `maxAge` under a year: the preload list refuses it."
    )

    /// `hsts` `maxAge` is under a day: browsers forget the policy almost at once.
    public static let hstsMaxAge = Rule(
        "hsts-max-age", .warning, "`hsts` `maxAge` is under a day: browsers forget the policy almost at once.")

    /// `ocsp.der` cannot be stapled (unreadable, for another certificate, expired, no responder): the handshake goes on without a staple.
    public static let ocspStaple = Rule(
        "ocsp-staple", .warning,
        "`ocsp.der` cannot be stapled (unreadable, for another certificate, expired, no responder): the handshake goes on without a staple."
    )

    /// The certificate folder holds no usable certificate, so HTTPS cannot start (`serve`).
    public static let noCertificates = Rule(
        "no-certificates", .error,
        "The certificate folder holds no usable certificate, so HTTPS cannot start (`serve`).")

    /// `--acme` cannot run: no plain HTTP listener for the challenges, an unreadable `--acme-ca-file`, or an account key that cannot be read or created.
    public static let acmeSetup = Rule(
        "acme-setup", .error,
        "`--acme` cannot run: no plain HTTP listener for the challenges, an unreadable `--acme-ca-file`, or an account key that cannot be read or created."
    )

    /// `certs acme` could not obtain a certificate for a domain: the CA's problem document, an unreachable CA, or a challenge the CA could not validate, with the URL it tried.
    public static let acmeOrder = Rule(
        "acme-order", .error,
        "`certs acme` could not obtain a certificate for a domain: the CA's problem document, an unreachable CA, or a challenge the CA could not validate, with the URL it tried."
    )

    /// A listener could not start (the port is in use, an invalid bind address): `serve` exits with status 1.
    public static let listener = Rule(
        "listener", .error,
        "A listener could not start (the port is in use, an invalid bind address): `serve` exits with status 1.")

    /// `import` of an assetlinks.json: a fingerprint not in Android's upper-case colon-separated form, imported normalised.
    public static let androidFingerprintForm = Rule(
        "android-fingerprint-form", .warning,
        "`import` of an assetlinks.json: a fingerprint not in Android's upper-case colon-separated form, imported normalised."
    )

    /// `import` of an assetlinks.json that is not a JSON array of statements, has no statements, or delegates to no Android app.
    public static let assetLinksStructure = Rule(
        "assetlinks-structure", .error,
        "`import` of an assetlinks.json that is not a JSON array of statements, has no statements, or delegates to no Android app."
    )

    /// `import` of an assetlinks.json that is not a JSON array of statements, has no statements, or delegates to no Android app.
    public static let assetLinksEmpty = Rule(
        "assetlinks-empty", .error,
        "`import` of an assetlinks.json that is not a JSON array of statements, has no statements, or delegates to no Android app."
    )

    /// `import` of an assetlinks.json that is not a JSON array of statements, has no statements, or delegates to no Android app.
    public static let assetLinksNoApp = Rule(
        "assetlinks-no-app", .error,
        "`import` of an assetlinks.json that is not a JSON array of statements, has no statements, or delegates to no Android app."
    )

    /// `import` of an assetlinks.json: one statement instead of a list, an `include` (not fetched), a key Android ignores, a relation other than App Links and sign-in sharing, a namespace Android ignores, or a web target; each left out or imported as the message says.
    public static let assetLinksSingleObject = Rule(
        "assetlinks-single-object", .warning,
        "`import` of an assetlinks.json: one statement instead of a list, an `include` (not fetched), a key Android ignores, a relation other than App Links and sign-in sharing, a namespace Android ignores, or a web target; each left out or imported as the message says."
    )

    /// `import` of an assetlinks.json: one statement instead of a list, an `include` (not fetched), a key Android ignores, a relation other than App Links and sign-in sharing, a namespace Android ignores, or a web target; each left out or imported as the message says.
    public static let assetLinksInclude = Rule(
        "assetlinks-include", .warning,
        "`import` of an assetlinks.json: one statement instead of a list, an `include` (not fetched), a key Android ignores, a relation other than App Links and sign-in sharing, a namespace Android ignores, or a web target; each left out or imported as the message says."
    )

    /// `import` of an assetlinks.json: one statement instead of a list, an `include` (not fetched), a key Android ignores, a relation other than App Links and sign-in sharing, a namespace Android ignores, or a web target; each left out or imported as the message says.
    public static let assetLinksUnknownKey = Rule(
        "assetlinks-unknown-key", .warning,
        "`import` of an assetlinks.json: one statement instead of a list, an `include` (not fetched), a key Android ignores, a relation other than App Links and sign-in sharing, a namespace Android ignores, or a web target; each left out or imported as the message says."
    )

    /// `import` of an assetlinks.json: one statement instead of a list, an `include` (not fetched), a key Android ignores, a relation other than App Links and sign-in sharing, a namespace Android ignores, or a web target; each left out or imported as the message says.
    public static let assetLinksRelation = Rule(
        "assetlinks-relation", .warning,
        "`import` of an assetlinks.json: one statement instead of a list, an `include` (not fetched), a key Android ignores, a relation other than App Links and sign-in sharing, a namespace Android ignores, or a web target; each left out or imported as the message says."
    )

    /// `import` of an assetlinks.json: one statement instead of a list, an `include` (not fetched), a key Android ignores, a relation other than App Links and sign-in sharing, a namespace Android ignores, or a web target; each left out or imported as the message says.
    public static let assetLinksNamespace = Rule(
        "assetlinks-namespace", .warning,
        "`import` of an assetlinks.json: one statement instead of a list, an `include` (not fetched), a key Android ignores, a relation other than App Links and sign-in sharing, a namespace Android ignores, or a web target; each left out or imported as the message says."
    )

    /// `import` of an assetlinks.json: one statement instead of a list, an `include` (not fetched), a key Android ignores, a relation other than App Links and sign-in sharing, a namespace Android ignores, or a web target; each left out or imported as the message says.
    public static let assetLinksWebTarget = Rule(
        "assetlinks-web-target", .warning,
        "`import` of an assetlinks.json: one statement instead of a list, an `include` (not fetched), a key Android ignores, a relation other than App Links and sign-in sharing, a namespace Android ignores, or a web target; each left out or imported as the message says."
    )

    /// Every rule, in the docs' order.
    public static let all: [Rule] = [
        .configFolder,
        .domainName,
        .missingFile,
        .fileTooLarge,
        .fileUnreadable,
        .pathOutside,
        .fileType,
        .privateKeyInPage,
        .pagesMemory,
        .noDomainServed,
        .notUTF8,
        .bom,
        .invalidJSON,
        .jsonTooDeep,
        .unknownKey,
        .duplicateKey,
        .wrongType,
        .missingKey,
        .noApp,
        .noRules,
        .testExpectation,
        .appIDFormat,
        .duplicateApp,
        .variableName,
        .variableEmpty,
        .variableNested,
        .cacheControl,
        .legacyInexpressible,
        .fileSize,
        .unknownVariable,
        .unterminatedVariable,
        .emptyVariableName,
        .variableShadowsBuiltIn,
        .duplicateVariable,
        .nonASCIIPatternWhilePercentEncoded,
        .patternTooLong,
        .patternTooComplex,
        .variableTooLarge,
        .rulesTooComplex,
        .testURL,
        .unreachableRule,
        .excludeQueryStar,
        .appClipParent,
        .bannerAppStoreID,
        .bannerAppClip,
        .bannerControlCharacter,
        .bannerEmpty,
        .bannerAppArgument,
        .bannerExclude,
        .landingPage,
        .landingTemplate,
        .pageTooLarge,
        .pagesTooLarge,
        .pageSymlink,
        .pageName,
        .touchIconMissing,
        .touchIconFormat,
        .touchIconSquare,
        .touchIconSize,
        .touchIcon180,
        .certificateMissing,
        .certificateName,
        .certificateKeyMismatch,
        .certificateInvalid,
        .privateKeyPermissions,
        .certificateExpired,
        .certificateExpiring,
        .signingIdentity,
        .signingKeyMismatch,
        .signingExpired,
        .signingName,
        .signingChain,
        .signingKeySize,
        .signingFailed,
        .androidPackage,
        .androidFingerprint,
        .androidNoRelation,
        .androidRules,
        .duplicateFingerprint,
        .duplicatePackage,
        .androidDynamicRules,
        .androidWildcardDiffers,
        .androidRuleLeftOut,
        .detailsDictionary,
        .legacyAppsNotEmpty,
        .noServices,
        .emptyComponents,
        .defaultsPattern,
        .invalidVariableName,
        .variableValueContainsVariable,
        .invalidVariableUsed,
        .signedFile,
        .legacyAppIDs,
        .existingConfig,
        .writeFailed,
        .hstsPreload,
        .hstsMaxAge,
        .ocspStaple,
        .noCertificates,
        .acmeSetup,
        .acmeOrder,
        .listener,
        .androidFingerprintForm,
        .assetLinksStructure,
        .assetLinksEmpty,
        .assetLinksNoApp,
        .assetLinksSingleObject,
        .assetLinksInclude,
        .assetLinksUnknownKey,
        .assetLinksRelation,
        .assetLinksNamespace,
        .assetLinksWebTarget,
    ]
}
