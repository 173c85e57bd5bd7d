/// Every app ID is `TEAMID.bundle.id` (spec §1.2; spec §8 item 7: the most common real-world mistake).
public struct AppleAppIDRule: AssociationRule {
    /// Creates the rule.
    public init() {}

    /// Reports each malformed app ID with the fix.
    public func check(_ context: AssociationContext) -> [Diagnostic] {
        context.appIDLists.flatMap { list in
            list.ids.enumerated().compactMap { index, id in
                AppID.problem(id).flatMap { problem in
                    context.diagnostic(
                        .error, rule: .appIDFormat, problem.message, at: list.path(of: index), hint: problem.hint)
                }
            }
        }
    }
}

/// The same app is not listed twice in one list.
public struct DuplicateAppIDRule: AssociationRule {
    /// Creates the rule.
    public init() {}

    /// Reports each repeat, at the repeat.
    public func check(_ context: AssociationContext) -> [Diagnostic] {
        var found: [Diagnostic] = []
        for list in context.appIDLists where list.ids.count > 1 {
            var seen: Set<String> = []
            for (index, id) in list.ids.enumerated() where !seen.insert(id).inserted {
                if let diagnostic = context.diagnostic(
                    .error, rule: .duplicateApp, "'\(id)' is listed twice", at: list.path(of: index),
                    hint: "remove the second entry")
                {
                    found.append(diagnostic)
                }
            }
        }
        return found
    }
}

/// Each App Clip extends an app of the same team listed in the file: App Clip bundle IDs are the parent's
/// bundle ID plus a suffix such as `.Clip` (spec §1.2, §1.10).
public struct AppClipParentRule: AssociationRule {
    /// Creates the rule.
    public init() {}

    /// Reports App Clips that extend no listed app.
    public func check(_ context: AssociationContext) -> [Diagnostic] {
        let file = context.file
        guard let clips = file.appClips, !clips.isEmpty else { return [] }
        let parents = Set(
            (file.applinks?.details ?? []).flatMap(\.modernAppIDs) + (file.webCredentials ?? [])
                + (file.activityContinuation ?? []) + (file.authSrv ?? []))
        var found: [Diagnostic] = []
        for (index, clip) in clips.enumerated() {
            // Apps that detect App Clip Codes list the parent itself here (spec §1.10).
            guard !parents.contains(clip), AppID.problem(clip) == nil else { continue }
            if parents.contains(where: { clip.hasPrefix($0 + ".") }) { continue }
            let team = clip.prefix { $0 != "." }
            let sameTeam = parents.filter { $0.hasPrefix(team + ".") }.sorted()
            let path = KeyPath.root.key("appclips").key("apps").index(index)
            let diagnostic =
                sameTeam.isEmpty
                ? context.diagnostic(
                    .warning, rule: .appClipParent,
                    "App Clip '\(clip)' has no parent app in this file to check it against", at: path,
                    hint: "App Clip IDs are the parent app's ID plus a suffix, e.g. \(team).com.example.app.Clip")
                : context.diagnostic(
                    .error, rule: .appClipParent,
                    "App Clip '\(clip)' does not extend any app listed here (\(sameTeam.joined(separator: ", ")))",
                    at: path, hint: "an App Clip's ID is its parent's ID plus a suffix, e.g. \(sameTeam[0]).Clip")
            if let diagnostic { found.append(diagnostic) }
        }
        return found
    }
}

extension Rule {
    /// Reported by `AppleAppIDRule`; also by `TestAppIDRule`.
    public static let appIDFormat = Rule("app-id-format", .error, "Not `TEAMID.bundle.id` (see App IDs).")

    /// Reported by `DuplicateAppIDRule`.
    public static let duplicateApp = Rule("duplicate-app", .error, "The same app twice in one list.")

    /// Reported by `AppClipParentRule`.
    public static let appClipParent = Rule(
        "appclip-parent", .error,
        "An App Clip ID that does not extend any listed app of its team (error), or whose parent app is not listed at all (warning)."
    )
}
