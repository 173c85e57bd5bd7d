/// Apple's `apple-app-site-association` document, as Apple defines it (spec §1).
///
/// This mirrors the wire format, not our `site.json`: it is what the generator emits, what `import`
/// and `match --aasa` read, and what the ``URLMatcher`` evaluates. Optional properties are `nil` when
/// the key is absent, so "absent" and "empty" stay distinguishable (spec §2.7: an empty
/// `components` array hides `paths`).
public struct AssociationFile: Sendable, Hashable {
    /// The `applinks` service (universal links).
    public var applinks: AppLinks?
    /// `webcredentials.apps`: apps allowed to use this domain's shared web credentials.
    public var webCredentials: [String]?
    /// `appclips.apps`: App Clips associated with this domain.
    public var appClips: [String]?
    /// `activitycontinuation.apps`: apps that may continue (Handoff) web activities.
    public var activityContinuation: [String]?
    /// `authsrv.apps`: apps that authenticate against this domain with Platform SSO or an SSO extension (spec §9).
    public var authSrv: [String]?

    /// The services the file declares, as an entitlement names them (`applinks`, `webcredentials`, `appclips`,
    /// `activitycontinuation`, `authsrv`; spec §1, §9).
    public var services: [String] {
        [
            ("applinks", applinks != nil), ("webcredentials", webCredentials != nil), ("appclips", appClips != nil),
            ("activitycontinuation", activityContinuation != nil), ("authsrv", authSrv != nil),
        ].compactMap { $0.1 ? $0.0 : nil }
    }

    /// The `apps` lists of the services other than `applinks`, by key, in file order.
    public var appServices: [(key: String, apps: [String]?)] {
        [
            ("webcredentials", webCredentials), ("appclips", appClips), ("activitycontinuation", activityContinuation),
            ("authsrv", authSrv),
        ]
    }

    /// Whether the file has entries iOS 12 and earlier read (`appID` and `paths`, spec §1.3): a domain with
    /// `"legacyFormat": false` has none, on purpose.
    public var hasLegacyEntries: Bool {
        applinks?.details.contains { $0.appID != nil && $0.paths != nil } ?? false
    }

    /// Creates a file.
    public init(
        applinks: AppLinks? = nil, webCredentials: [String]? = nil, appClips: [String]? = nil,
        activityContinuation: [String]? = nil, authSrv: [String]? = nil
    ) {
        self.applinks = applinks
        self.webCredentials = webCredentials
        self.appClips = appClips
        self.activityContinuation = activityContinuation
        self.authSrv = authSrv
    }
}

/// The `applinks` dictionary (spec §1.3, §1.4).
public struct AppLinks: Sendable, Hashable {
    /// Legacy `apps` key; must be `[]` when present (spec §1.3).
    public var apps: [String]?
    /// `details` entries in array order, which is the order the system searches (spec §2.2).
    public var details: [AppLinkDetails]
    /// Domain-level `defaults` (spec §1.7).
    public var defaults: ComponentPattern?
    /// `substitutionVariables`, in file order (spec §1.8).
    public var substitutionVariables: [SubstitutionVariable]

    /// Creates an `applinks` dictionary.
    public init(
        apps: [String]? = nil, details: [AppLinkDetails] = [], defaults: ComponentPattern? = nil,
        substitutionVariables: [SubstitutionVariable] = []
    ) {
        self.apps = apps
        self.details = details
        self.defaults = defaults
        self.substitutionVariables = substitutionVariables
    }
}

/// One named list of strings usable as `$(name)` in patterns (spec §1.8).
public struct SubstitutionVariable: Sendable, Hashable {
    /// The name between `$(` and `)`; case-sensitive.
    public var name: String
    /// The strings the variable stands for; each may contain `*` and `?`.
    public var values: [String]

    /// Creates a variable.
    public init(name: String, values: [String]) {
        self.name = name
        self.values = values
    }
}

/// One `applinks.details[]` entry (spec §1.4).
public struct AppLinkDetails: Sendable, Hashable {
    /// Legacy single `appID` (the only key iOS 12 and earlier read).
    public var appID: String?
    /// Modern `appIDs`.
    public var appIDs: [String]?
    /// Modern `components`; when present (even empty) a modern client ignores `paths` (spec §2.7).
    public var components: [ComponentPattern]?
    /// Legacy `paths`, with `NOT ` exclusions (spec §1.3, §2.8).
    public var paths: [String]?
    /// App-level `defaults` (spec §1.7).
    public var defaults: ComponentPattern?

    /// Creates a details entry.
    public init(
        appID: String? = nil, appIDs: [String]? = nil, components: [ComponentPattern]? = nil,
        paths: [String]? = nil, defaults: ComponentPattern? = nil
    ) {
        self.appID = appID
        self.appIDs = appIDs
        self.components = components
        self.paths = paths
        self.defaults = defaults
    }

    /// The apps a modern client (iOS 13+) gives these URLs: `appIDs`, plus `appID` when set.
    public var modernAppIDs: [String] {
        var ids = appIDs ?? []
        if let appID, !ids.contains(appID) { ids.append(appID) }
        return ids
    }
}

/// A `components[]` dictionary, also used for `defaults` (spec §1.5, §1.7). Every key is optional.
public struct ComponentPattern: Sendable, Hashable {
    /// `/`: pattern for the URL path.
    public var path: String?
    /// `?`: pattern for the whole query, or per-item patterns.
    public var query: QueryPattern?
    /// `#`: pattern for the fragment.
    public var fragment: String?
    /// `exclude`: a match stops the search and the URL stays on the web.
    public var exclude: Bool?
    /// `comment`: ignored by the system.
    public var comment: String?
    /// `caseSensitive`.
    public var caseSensitive: Bool?
    /// `percentEncoded`.
    public var percentEncoded: Bool?
    /// A component a device cannot read (a known key with a type whose effect is not documented): it keeps its
    /// place, so rules keep the positions they have in the file, and never matches
    /// (``AssociationFile/readAsDevice(_:)``). Never set for files that are written or served.
    var isUnreadable = false

    /// Creates a component.
    public init(
        path: String? = nil, query: QueryPattern? = nil, fragment: String? = nil, exclude: Bool? = nil,
        comment: String? = nil, caseSensitive: Bool? = nil, percentEncoded: Bool? = nil
    ) {
        self.path = path
        self.query = query
        self.fragment = fragment
        self.exclude = exclude
        self.comment = comment
        self.caseSensitive = caseSensitive
        self.percentEncoded = percentEncoded
    }
}

/// The `?` key of a component: a pattern for the whole query string, or per-item patterns (spec §1.6).
public enum QueryPattern: Sendable, Hashable {
    /// Pattern matched against the whole query string (without `?`).
    case whole(String)
    /// Item name → value pattern, in file order; every item must match (spec §2.4).
    case items([QueryItemPattern])
}

/// One entry of a query dictionary.
public struct QueryItemPattern: Sendable, Hashable {
    /// Query item name, decoded form (as `URLQueryItem.name`).
    public var name: String
    /// Pattern for the item's decoded value; an absent or valueless item counts as `""`.
    public var pattern: String

    /// Creates an item pattern.
    public init(name: String, pattern: String) {
        self.name = name
        self.pattern = pattern
    }
}
