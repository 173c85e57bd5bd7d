/// A details entry names at least one app; iOS ignores one that names none (spec §9).
public struct DetailsWithoutAppRule: AssociationRule {
    /// Creates the rule.
    public init() {}

    /// Reports entries without `appID` and `appIDs`.
    public func check(_ context: AssociationContext) -> [Diagnostic] {
        (context.file.applinks?.details ?? []).enumerated().compactMap { index, details in
            guard details.modernAppIDs.isEmpty else { return nil }
            return context.diagnostic(
                .error, rule: .noApp, "this details entry names no app, so iOS ignores it",
                at: .root.key("applinks").key("details").index(index), hint: "add \"appIDs\": [\"TEAMID.bundle.id\"]")
        }
    }
}

/// An empty `components` array makes iOS 13+ ignore the entry's `paths` (spec §2.7, §8 item 11).
public struct EmptyComponentsRule: AssociationRule {
    /// Creates the rule.
    public init() {}

    /// Reports `"components": []`.
    public func check(_ context: AssociationContext) -> [Diagnostic] {
        (context.file.applinks?.details ?? []).enumerated().compactMap { index, details in
            guard let components = details.components, components.isEmpty else { return nil }
            let path = KeyPath.applinksDetails.index(index).key("components")
            if let paths = details.paths, !paths.isEmpty {
                return context.diagnostic(
                    .error, rule: .emptyComponents,
                    "\"components\": [] hides this entry's \(paths.count) paths from iOS 13 and later",
                    at: path, hint: "remove \"components\" so the paths apply, or write the rules as components")
            }
            return context.diagnostic(
                .warning, rule: .emptyComponents, "\"components\" is empty, so this entry opens no URL", at: path,
                hint: "add rules or remove the entry")
        }
    }
}

/// `defaults` holding `/`, `?`, `#` or `exclude`: undocumented, but Apple applies them to every rule
/// below (observed with swcutil, spec §1.7 and §9), which surprises readers.
public struct DefaultsPatternRule: AssociationRule {
    /// Creates the rule.
    public init() {}

    /// Warns about each pattern key in a `defaults` dictionary.
    public func check(_ context: AssociationContext) -> [Diagnostic] {
        // The levels that have defaults: the file's (no details entry) and each entry's; a path only for a finding.
        var levels: [(entry: Int?, defaults: ComponentPattern)] = []
        if let defaults = context.file.applinks?.defaults { levels.append((nil, defaults)) }
        for (index, details) in (context.file.applinks?.details ?? []).enumerated() {
            if let defaults = details.defaults { levels.append((index, defaults)) }
        }
        return levels.compactMap { entry, defaults in
            let keys = [
                ("/", defaults.path != nil), ("?", defaults.query != nil), ("#", defaults.fragment != nil),
                ("exclude", defaults.exclude != nil),
            ].filter(\.1).map(\.0)
            guard !keys.isEmpty else { return nil }
            return context.diagnostic(
                .warning, rule: .defaultsPattern,
                "defaults sets \(keys.map { "\"\($0)\"" }.joined(separator: ", ")), which Apple applies to every rule that lacks it (undocumented)",
                at: entry.map { KeyPath.applinksDetails.index($0).key("defaults") }
                    ?? KeyPath.root.key("applinks").key("defaults"),
                hint: "write the key in each rule instead; only caseSensitive and percentEncoded are documented here")
        }
    }
}

extension Rule {
    /// Reported by `EmptyComponentsRule`; also by `AssociationImporter`.
    public static let emptyComponents = Rule(
        "empty-components", .error,
        "`\"components\": []` hides an entry's `paths` from iOS 13+ (error), or an entry's components are empty so it opens no URL (warning)."
    )

    /// Reported by `DefaultsPatternRule`.
    public static let defaultsPattern = Rule(
        "defaults-pattern", .warning,
        "`defaults` sets a pattern key, which Apple applies to every rule that lacks it (undocumented behaviour).")
}
