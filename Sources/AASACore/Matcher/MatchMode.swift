/// Which client generation's rules to apply (spec §1.3, §1.4, §2.7).
public enum MatchMode: String, Sendable, Hashable, CaseIterable {
    /// iOS 13+ / macOS 10.15+: `appIDs`/`appID`, `components` (or `paths` when an entry has no `components`),
    /// `defaults`, `substitutionVariables`.
    case modern
    /// iOS 12 and earlier: only entries with `appID`, only their `paths`, path-only, no `defaults` or
    /// variables.
    case legacy
}
