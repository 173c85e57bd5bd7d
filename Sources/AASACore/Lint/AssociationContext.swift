/// What an ``AssociationRule`` sees: an Apple-format file, and how to say where a finding is.
///
/// The same rules lint a file a user brings (`check --aasa`, located by its own JSON) and the file a
/// site.json generates (located back at the site.json key the Apple key came from), so every rule is
/// written once, against Apple's format.
public struct AssociationContext: Sendable {
    /// The file being linted.
    public let file: AssociationFile
    private let locate: @Sendable (KeyPath) -> Located?
    /// The file's rules as a modern client evaluates them (``EffectiveRule/all(in:)``), made once for every rule
    /// that reads them.
    let effectiveRules: [EffectiveRule]
    /// The file's app ID lists (``AssociationFile/appIDLists``), made once for every rule that reads them.
    let appIDLists: [AppIDList]

    /// Where an Apple key path ends up: a finding there, or nowhere (generated repeats are not reported twice).
    struct Located: Sendable {
        var path: KeyPath
        var diagnostic: @Sendable (Diagnostic.Severity, Rule, String, String?) -> Diagnostic
    }

    /// A context for a file read from `source`: findings point into that file.
    public static func file(_ file: AssociationFile, source: SourceText, root: JSONNode) -> AssociationContext {
        let locator = KeyPathLocator(source: source, root: root)
        return AssociationContext(file: file) { path in
            Located(path: path) { severity, rule, message, hint in
                locator.diagnostic(severity, rule: rule, message, at: path, hint: hint)
            }
        }
    }

    /// A context for the file `site` generates: Apple key paths are translated back to site.json keys.
    /// Keys of the trailing legacy entries (repeats of an app entry) are not reported.
    public static func generated(_ output: AssociationGenerator.Output, site: SiteContext) -> AssociationContext {
        let sources = output.detailsSource
        return AssociationContext(file: output.file) { path in
            guard let sitePath = SiteKeyMapping.sitePath(for: path, detailsSource: sources) else { return nil }
            return Located(path: sitePath) { severity, rule, message, hint in
                site.diagnostic(severity, rule: rule, message, at: sitePath, hint: hint)
            }
        }
    }

    private init(file: AssociationFile, locate: @escaping @Sendable (KeyPath) -> Located?) {
        self.file = file
        self.locate = locate
        effectiveRules = EffectiveRule.all(in: file)
        appIDLists = file.appIDLists
    }

    /// A finding at the Apple key `path`, or `nil` when that key is a generated repeat.
    public func diagnostic(
        _ severity: Diagnostic.Severity, rule: Rule, _ message: String, at path: KeyPath, hint: String? = nil
    ) -> Diagnostic? {
        locate(path)?.diagnostic(severity, rule, message, hint)
    }

    /// How the user knows the key at `path`: `universalLinks.apps[0].rules[2]` for a site, else the Apple path.
    public func name(of path: KeyPath) -> String {
        (locate(path)?.path ?? path).description
    }
}

/// Translates Apple key paths of a generated file to the site.json keys they came from.
enum SiteKeyMapping {
    static func sitePath(for path: KeyPath, detailsSource: [Int?]) -> KeyPath? {
        var components = path.components[...]
        var result = KeyPath.root
        func next() -> KeyPath.Component? { components.popFirst() }
        switch next() {
        case nil: return .root
        case .key("webcredentials"): result = result.key("webCredentials")
        case .key("appclips"): result = result.key("appClips")
        case .key("activitycontinuation"): result = result.key("handoff")
        case .key("authsrv"): result = result.key("authsrv")
        case .key("applinks"):
            result = result.key("universalLinks")
            switch next() {
            case nil: return result
            case .key("apps"): return .root.key("legacyFormat")
            case .key("defaults"): return result.key("defaults")
            case .key("substitutionVariables"):
                result = result.key("variables")
                if case .key(let name) = next() { result = result.key(name) }
                if case .index(let index) = next() { result = result.index(index) }
                return result
            case .key("details"):
                guard case .index(let entry) = next(), detailsSource.indices.contains(entry),
                    let app = detailsSource[entry]
                else { return nil }
                result = result.key("apps").index(app)
                switch next() {
                case .key("appIDs"):
                    result = result.key("appIDs")
                    if case .index(let index) = next() { result = result.index(index) }
                case .key("appID"): result = result.key("appIDs").index(0)
                case .key("defaults"): result = result.key("defaults")
                case .key("paths"): result = result.key("rules")
                case .key("components"):
                    result = result.key("rules")
                    if case .index(let rule) = next() { result = result.index(rule) }
                    switch next() {
                    case .key("/"): result = result.key("path")
                    case .key("?"): result = result.key("query")
                    case .key("#"): result = result.key("fragment")
                    case .key(let key): result = result.key(key)
                    default: break
                    }
                    if case .key(let item) = next() { result = result.key(item) }
                default: break
                }
                return result
            default: return result
            }
        default: return nil
        }
        // Service lists: apps[k] → list[k].
        if case .key("apps") = next(), case .index(let index) = next() { return result.index(index) }
        return result
    }
}

/// One semantic check of an Apple-format file. Adding a check is adding one type.
public protocol AssociationRule: Sendable {
    /// Checks the file and returns every finding.
    func check(_ context: AssociationContext) -> [Diagnostic]
}

/// Runs the association rules.
public struct AssociationLinter: Sendable {
    /// The rules run, in order.
    public var rules: [any AssociationRule]

    /// Every rule, for files users bring and files we generate alike.
    public static let standard = AssociationLinter(rules: [
        AppleAppIDRule(), DuplicateAppIDRule(), DetailsWithoutAppRule(), EmptyComponentsRule(), DefaultsPatternRule(),
        AppClipParentRule(), ExcludeQueryStarRule(), UnreachableRule(),
    ])

    /// Creates a linter.
    public init(rules: [any AssociationRule]) {
        self.rules = rules
    }

    /// Every finding of every rule.
    public func lint(_ context: AssociationContext) -> [Diagnostic] {
        rules.flatMap { $0.check(context) }
    }
}

/// One list of app IDs in an association file: where it is and its IDs. The key path of each ID is made only for
/// an ID a rule reports: the lint reads every list of every domain at every load.
struct AppIDList {
    /// The list's key path, or the single ID's (`applinks.details[i].appID`).
    var path: KeyPath
    var ids: [String]
    /// Whether ``path`` is an ID's own key (`appID`) rather than an array's.
    var isSingleID = false

    /// The key path of ID `index`.
    func path(of index: Int) -> KeyPath { isSingleID ? path : path.index(index) }
}

extension AssociationFile {
    /// Every list of app IDs in the file.
    var appIDLists: [AppIDList] {
        var lists: [AppIDList] = []
        func list(_ path: KeyPath, _ ids: [String]?) {
            if let ids { lists.append(AppIDList(path: path, ids: ids)) }
        }
        for (index, details) in (applinks?.details ?? []).enumerated() {
            let path = KeyPath.applinksDetails.index(index)
            // An entry listing its app in both forms (the dual iOS 12 / iOS 13 form) is reported once.
            if let appID = details.appID, details.appIDs?.contains(appID) != true {
                lists.append(AppIDList(path: path.key("appID"), ids: [appID], isSingleID: true))
            }
            list(path.key("appIDs"), details.appIDs)
        }
        for (path, ids) in zip(KeyPath.serviceAppLists, [webCredentials, appClips, activityContinuation, authSrv]) {
            list(path, ids)
        }
        return lists
    }
}
