/// Turns a ``SiteConfig`` into Apple's file: always the modern form, plus the legacy form in the same
/// file when `legacyFormat` is on (spec §1.3, §1.4, §2.7).
public struct AssociationGenerator: Sendable {
    /// Apple's device downloader stops at 131,072 bytes (spec §3.5: `0x20000`).
    public static let sizeLimit = 131_072
    /// Above this we warn: one more app or a few rules away from the limit.
    public static let sizeWarning = 100 * 1024

    /// The generated file and what was noticed while making it.
    public struct Output: Sendable {
        /// The document.
        public var file: AssociationFile {
            get { fileStorage.value }
            set { fileStorage = OutOfLine(newValue) }
        }
        /// Out of line: a server keeps an output per domain without its document (``withoutDocument()``), and the
        /// document inline would be 144 bytes of each.
        private var fileStorage: OutOfLine<AssociationFile>
        /// The compact bytes served.
        public var bytes: [UInt8]
        /// Warnings (rules left out of the legacy form, size) and errors (size over the limit).
        public var diagnostics: [Diagnostic]
        /// For each `applinks.details` entry, the `universalLinks.apps` index it was made from, or `nil`
        /// for a trailing legacy entry that repeats another (so findings are reported once, at the source).
        public var detailsSource: [Int?] = []

        /// An output of `file`, served as `bytes`.
        public init(file: AssociationFile, bytes: [UInt8], diagnostics: [Diagnostic], detailsSource: [Int?] = []) {
            fileStorage = OutOfLine(file)
            self.bytes = bytes
            self.diagnostics = diagnostics
            self.detailsSource = detailsSource
        }

        /// This output with an empty document (one shared by all), for what a server keeps between loads.
        public func withoutDocument() -> Output {
            var output = self
            output.fileStorage = Self.noDocument
            return output
        }

        private static let noDocument = OutOfLine(AssociationFile())
    }

    /// Creates a generator.
    public init() {}

    /// Generates the file for `site`. Errors in `diagnostics` mean the file must not be published.
    public func generate(_ site: SiteContext) -> Output {
        let config = site.configStorage.value
        var diagnostics: [Diagnostic] = []
        var file = AssociationFile()
        var detailsSource: [Int?] = []
        if let links = config.universalLinks {
            var applinks = AppLinks()
            if config.legacyFormat { applinks.apps = [] }  // spec §1.3: legacy readers require "apps": []
            applinks.defaults = links.defaults.map(\.component)
            applinks.substitutionVariables = links.variables
            // Spec §2.7: iOS 13+ ignores `paths` in an entry that has `components`, and iOS 12 ignores
            // `appIDs` and `components`. So each app entry carries its legacy form in the same dictionary
            // (`appID` = its first app, plus `paths`), and every further app of the entry gets a trailing
            // entry that repeats the components: a modern client never reads any legacy path.
            var trailing: [AppLinkDetails] = []
            for (index, app) in links.apps.enumerated() where !app.rules.isEmpty && !app.appIDs.isEmpty {
                var entry = AppLinkDetails(
                    appIDs: app.appIDs, components: app.rules, defaults: app.defaults.map(\.component))
                if config.legacyFormat {
                    var paths = app.legacyPaths ?? []
                    if app.legacyPaths == nil {
                        let derived = Self.derivedLegacyPaths(for: app, links: links)
                        paths = derived.paths
                        diagnostics += derived.leftOut.map { ruleIndex, reason in
                            site.diagnostic(
                                .warning, rule: .legacyInexpressible,
                                "rule left out of the iOS 9–12 paths: \(reason)",
                                at: .root.key("universalLinks").key("apps").index(index).key("rules").index(ruleIndex),
                                hint:
                                    "iOS 13+ still applies it; set \"legacyFormat\": false if you do not support iOS 12"
                            )
                        }
                    }
                    if !paths.isEmpty {
                        entry.appID = app.appIDs[0]
                        entry.paths = paths
                        trailing += app.appIDs.dropFirst().map { appID in
                            AppLinkDetails(
                                appID: appID, appIDs: [appID], components: app.rules, paths: paths,
                                defaults: app.defaults.map(\.component))
                        }
                    }
                }
                applinks.details.append(entry)
                detailsSource.append(index)
            }
            applinks.details += trailing
            detailsSource += trailing.map { _ in nil }
            file.applinks = applinks
        }
        if !config.webCredentials.isEmpty { file.webCredentials = config.webCredentials }
        if !config.appClips.isEmpty { file.appClips = config.appClips }
        if !config.handoff.isEmpty { file.activityContinuation = config.handoff }
        if !config.authsrv.isEmpty { file.authSrv = config.authsrv }

        let bytes = file.compactBytes
        if bytes.count > Self.sizeLimit {
            diagnostics.append(
                site.diagnostic(
                    .error, rule: .fileSize,
                    "the generated file is \(bytes.count) bytes; Apple stops reading at \(Self.sizeLimit) (spec §3.5)",
                    at: .root,
                    hint: "use fewer rules with wildcards or substitution variables, or turn legacyFormat off"))
        } else if bytes.count > Self.sizeWarning {
            diagnostics.append(
                site.diagnostic(
                    .warning, rule: .fileSize,
                    "the generated file is \(bytes.count) bytes, close to Apple's limit of \(Self.sizeLimit)",
                    at: .root, hint: "merge rules with wildcards before adding more"))
        }
        return Output(
            file: file, bytes: bytes, diagnostics: diagnostics, detailsSource: Self.shared(detailsSource))
    }

    /// The `detailsSource` of up to 8 apps each made into one details entry, in order (`[0, 1, …]`), nearly every
    /// domain's: one array each, shared by every domain, rather than an allocation of each domain's own.
    private static let identities: [[Int?]] = (0...8).map { count in (0..<count).map { $0 } }

    /// `sources`, or the identical shared array (``identities``).
    private static func shared(_ sources: [Int?]) -> [Int?] {
        guard sources.count < identities.count, sources.enumerated().allSatisfy({ $0.element == $0.offset }) else {
            return sources
        }
        return identities[sources.count]
    }

    /// The legacy `paths` for one app entry: each rule the legacy form can express, in order, with
    /// `exclude` as `NOT ` (spec §1.3, §2.7), and the rules left out with the reason.
    public static func derivedLegacyPaths(
        for app: AppRules, links: UniversalLinks
    ) -> (paths: [String], leftOut: [(ruleIndex: Int, reason: String)]) {
        var paths: [String] = []
        var leftOut: [(Int, String)] = []
        for (ruleIndex, rule) in app.rules.enumerated() {
            if let reason = legacyProblem(rule, app: app, links: links) {
                leftOut.append((ruleIndex, reason))
                continue
            }
            let pattern = rule.path ?? "*"
            paths.append(rule.exclude == true ? "NOT " + pattern : pattern)
        }
        return (paths, leftOut)
    }

    /// Why `rule` cannot be written as a legacy path, or `nil` when it can.
    static func legacyProblem(_ rule: ComponentPattern, app: AppRules, links: UniversalLinks) -> String? {
        switch rule.query {
        case .whole(let pattern) where pattern != "*": return "it has a query condition"
        case .items(let items) where items.contains(where: { $0.pattern != "*" }): return "it has a query condition"
        default: break
        }
        if let fragment = rule.fragment, fragment != "*" { return "it has a fragment condition" }
        if let path = rule.path, path.contains("$(") { return "it uses a substitution variable" }
        let caseSensitive = rule.caseSensitive ?? app.defaults?.caseSensitive ?? links.defaults?.caseSensitive ?? true
        if !caseSensitive { return "it is case-insensitive" }
        let percentEncoded =
            rule.percentEncoded ?? app.defaults?.percentEncoded ?? links.defaults?.percentEncoded ?? true
        if !percentEncoded { return "it matches decoded (percentEncoded false) paths" }
        return nil
    }
}

extension Rule {
    /// Reported by `AssociationGenerator`.
    public static let legacyInexpressible = Rule(
        "legacy-inexpressible", .warning, "A rule left out of the iOS 9–12 paths.")

    /// Reported by `AssociationGenerator`; also by `AssociationChecker`, `AssociationSigner`, `FileSigning`.
    public static let fileSize = Rule("file-size", .warning, "The generated file is over 100 KiB / over 131,072 bytes.")

    /// The rules of generating the Apple file (stage 4), in the order of the docs table: their part of `Rule.all`.
    package static let generationRules: [Rule] = [
        .legacyInexpressible,
        .fileSize,
    ]
}
