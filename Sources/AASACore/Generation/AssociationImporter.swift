/// Turns an existing Apple-format file into a ``SiteConfig`` that serves the same answers.
///
/// Legacy `paths` become rules (`NOT ` → `exclude`); the iOS 9 beta dictionary form is read in sorted
/// key order; component keys Apple applies from `defaults` (observed, spec §1.7) are copied into the
/// rules that lack them, so the imported config states them explicitly.
public struct AssociationImporter: Sendable {
    /// Creates an importer.
    public init() {}

    /// The config and what was noticed; errors in `diagnostics` mean nothing may be written.
    public struct Output: Sendable {
        /// The imported config; valid only when `diagnostics` has no errors.
        public var config: SiteConfig
        /// Warnings about what changed shape, errors about what cannot be imported.
        public var diagnostics: [Diagnostic]
    }

    /// Imports `file`. `source` and `root` locate findings in the original file.
    public func importFile(_ file: AssociationFile, source: SourceText? = nil, root: JSONNode? = nil) -> Output {
        var findings = Findings(locator: KeyPathLocator(source: source, root: root))
        var config = SiteConfig()
        config.webCredentials = file.webCredentials ?? []
        config.appClips = file.appClips ?? []
        config.handoff = file.activityContinuation ?? []
        config.authsrv = file.authSrv ?? []
        if let applinks = file.applinks {
            // Legacy output only when the original served legacy paths; an entry without paths in such a file
            // gets an empty legacy list, so iOS 12 sees exactly what it saw before.
            let hasLegacy = applinks.details.contains { $0.paths != nil && $0.appID != nil }
            config.legacyFormat = hasLegacy
            var links = UniversalLinks(variables: applinks.substitutionVariables)
            let (domainFlags, domainPattern) = Self.split(applinks.defaults)
            links.defaults = domainFlags
            for (index, details) in applinks.details.enumerated() {
                let entry = Entry(
                    details: details, path: KeyPath.root.key("applinks").key("details").index(index),
                    domainPattern: domainPattern, hasLegacy: hasLegacy)
                if let app = importEntry(entry, links: links, findings: &findings) { links.apps.append(app) }
            }
            config.universalLinks = links
        }
        return Output(config: config, diagnostics: findings.diagnostics)
    }

    /// One `applinks.details` entry to import, and what it inherits from the file.
    private struct Entry {
        var details: AppLinkDetails
        /// Where it is in the Apple file.
        var path: KeyPath
        /// The component keys of the domain's `defaults`, copied into each rule.
        var domainPattern: ComponentPattern?
        /// Whether the file serves legacy paths at all.
        var hasLegacy: Bool
    }

    /// The findings of an import, each located at its Apple key.
    private struct Findings {
        let locator: KeyPathLocator
        var diagnostics: [Diagnostic] = []

        mutating func add(
            _ severity: Diagnostic.Severity, _ rule: Rule, _ message: String, _ path: KeyPath, hint: String? = nil
        ) {
            diagnostics.append(locator.diagnostic(severity, rule: rule, message, at: path, hint: hint))
        }
    }

    /// One entry as the rules of an app; `nil` (with the reason in `findings`) when it opens no URL or cannot be
    /// imported without changing its meaning.
    private func importEntry(_ entry: Entry, links: UniversalLinks, findings: inout Findings) -> AppRules? {
        let (details, path) = (entry.details, entry.path)
        let appIDs = details.modernAppIDs
        guard !appIDs.isEmpty else {
            findings.add(
                .warning, .noApp, "details entry names no app; iOS ignores it, so it is not imported", path,
                hint: "add \"appIDs\" if an app should open these URLs")
            return nil
        }
        var app = AppRules(appIDs: appIDs, rules: [])
        if let components = details.components {
            let (appFlags, appPattern) = Self.split(details.defaults)
            app.defaults = appFlags
            app.rules = components.map { Self.inherit($0, from: appPattern, then: entry.domainPattern) }
            if details.paths != nil && details.appID != nil {
                // iOS 12 reads these paths; iOS 13+ the components. Keep both exactly.
                if let appID = details.appID, details.appIDs != nil, details.appIDs != [appID] {
                    findings.add(
                        .warning, .legacyAppIDs,
                        "legacy \"paths\" applied only to appID '\(appID)'; the import applies them to every app of the entry",
                        path.key("paths"))
                }
                let derived = AssociationGenerator.derivedLegacyPaths(for: app, links: links).paths
                if derived != details.paths { app.legacyPaths = details.paths }
            } else if entry.hasLegacy {
                app.legacyPaths = []
            }
            if components.isEmpty {
                findings.add(
                    .warning, .emptyComponents,
                    "\"components\" is empty, so iOS 13+ ignores this entry's paths (spec §2.7)",
                    path.key("components"))
                if let paths = details.paths, !paths.isEmpty {
                    // No modern rule can express "nothing but legacy paths"; refuse rather than change meaning.
                    findings.add(
                        .error, .emptyComponents,
                        "cannot import an entry whose empty \"components\" hides its \"paths\" on iOS 13+",
                        path.key("components"),
                        hint: "remove \"components\": [] so the paths apply, or remove the paths")
                }
                return nil
            }
        } else if let paths = details.paths {
            app.rules = paths.map(Self.rule(fromLegacyPath:))
            // iOS 12 reads paths only through `appID`; without one it saw nothing here.
            if details.appID == nil && entry.hasLegacy { app.legacyPaths = [] }
        } else {
            findings.add(
                .warning, .noRules, "details entry has neither \"components\" nor \"paths\"; it opens no URL", path)
            return nil
        }
        guard !app.rules.isEmpty else {
            findings.add(.warning, .noRules, "details entry has no rules; it opens no URL, so it is not imported", path)
            return nil
        }
        return app
    }

    /// A legacy path as a rule: `NOT /x` excludes `/x` (spec §1.3).
    static func rule(fromLegacyPath path: String) -> ComponentPattern {
        if path.hasPrefix("NOT ") {
            return ComponentPattern(path: String(path.dropFirst(4)), exclude: true)
        }
        return ComponentPattern(path: path)
    }

    /// Splits Apple `defaults` into what our `defaults` holds (flags) and component keys to copy into rules.
    static func split(_ defaults: ComponentPattern?) -> (MatchingDefaults?, ComponentPattern?) {
        guard let defaults else { return (nil, nil) }
        let flags =
            defaults.caseSensitive == nil && defaults.percentEncoded == nil
            ? nil : MatchingDefaults(caseSensitive: defaults.caseSensitive, percentEncoded: defaults.percentEncoded)
        let pattern =
            defaults.path == nil && defaults.query == nil && defaults.fragment == nil && defaults.exclude == nil
            ? nil
            : ComponentPattern(
                path: defaults.path, query: defaults.query, fragment: defaults.fragment, exclude: defaults.exclude)
        return (flags, pattern)
    }

    /// `rule` with `/`, `?`, `#` and `exclude` taken from the nearest level that sets them, `nearer` before
    /// `farther` (spec §1.7, observed).
    static func inherit(_ rule: ComponentPattern, from nearer: ComponentPattern?, then farther: ComponentPattern?)
        -> ComponentPattern
    {
        var result = rule
        func take(_ level: ComponentPattern?) {
            guard let level else { return }
            if result.path == nil { result.path = level.path }
            if result.query == nil { result.query = level.query }
            if result.fragment == nil { result.fragment = level.fragment }
            if result.exclude == nil { result.exclude = level.exclude }
        }
        take(nearer)
        take(farther)
        return result
    }
}

extension Rule {
    /// Reported by `AssociationImporter`.
    public static let legacyAppIDs = Rule(
        "legacy-app-ids", .warning,
        "`import` of an Apple file whose entry has `appID` with legacy `paths` beside `appIDs`: the paths, which iOS 12 applies to `appID` only, are imported for every app of the entry."
    )
}
