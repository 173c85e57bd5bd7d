import AASACore

/// The fuzz targets: what the server and the CLI do with the bytes of a file someone else wrote, and what a
/// replica does with the bytes it reads back.
///
/// Each one runs the same library calls as the real entry point, then checks properties that must hold
/// for every input (throwing ``InvariantViolation``); a crash, a sanitizer report or a hang is a bug too.
/// The libFuzzer executables in `Fuzz/` and the regression tests both call ``run(_:)``.
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// A `site.json` as ``AASACore/SiteConfigLoader`` loads it: parse, read, validate, generate, lint.
    case siteConfig = "site-config"
    /// An Apple association file as `aasa-server check --aasa` lints it and `aasa-server import` imports it.
    case association
    /// An `assetlinks.json` as `aasa-server import` imports it.
    case assetLinks = "assetlinks"
    /// Patterns and URLs (a ``MatchScript``) through ``AASACore/URLMatcher``, compared with a reference.
    case matcher
    /// Two versions of a `site.json` (split at a NUL byte) compared as a reload compares them.
    case reloadComparison = "reload-comparison"
    /// What a replica reads back: a record of the store snapshot, ACME's state files, the text cells of store rows.
    case replicaRead = "replica-read"

    /// Runs one input through the target.
    public func run(_ bytes: [UInt8]) throws(InvariantViolation) {
        // Each input starts from an empty table of shared patterns: a reproducer then runs alone as it ran in the
        // fuzzer, and no compiled pattern outlives its input, where LeakSanitizer, which does not follow the tagged
        // pointers of an enum's payload, would report it as lost.
        defer { SharedPatterns.shared.removeAll() }
        switch self {
        case .siteConfig: try SiteConfigHarness.run(bytes)
        case .association: try AssociationHarness.run(bytes)
        case .assetLinks: try AssetLinksHarness.run(bytes)
        case .matcher: try MatcherHarness.run(bytes)
        case .reloadComparison: try ReloadComparisonHarness.run(bytes)
        case .replicaRead: try ReplicaReadHarness.run(bytes)
        }
    }
}
