import AASACore
public import Foundation

/// How much history the tenant API keeps (`serve --history-revisions`, `--history-bytes`, `--history-total-bytes`,
/// `--history-retention`, `--changes-retention`; docs/operations.md "History and changes").
///
/// Each entry counts the bytes of the site.json it keeps (none for a removal) and ``entryBytes`` for itself, the most
/// one entry takes whatever was written: its summary is cut to ``maximumSummaryBytes`` and escaped, its actor is a
/// token name. A domain keeps its newest entries within ``revisions`` and ``bytesPerDomain``; all domains together
/// keep theirs within ``totalBytes``, the oldest going first; a removed domain's entries go ``retention`` after its
/// removal; a store's `changes` rows older than ``changesRetention`` go (a replica behind them reads everything).
public struct HistoryPolicy: Sendable, Equatable {
    /// The entries kept per domain.
    public var revisions: Int
    /// The bytes kept per domain (site.json versions and entries); at least the largest site.json and its entry.
    public var bytesPerDomain: Int
    /// The bytes kept for all domains together; at least ``bytesPerDomain``.
    public var totalBytes: Int
    /// How long the history of a removed domain is kept after its removal.
    public var retention: TimeInterval
    /// How long a store's `changes` row is kept when no row of `domains` or `certificates` names it.
    public var changesRetention: TimeInterval

    /// The default policy: 1,000 entries and 16 MiB per domain, 1 GiB in all, 30 days after a removal, 7 days of
    /// changes.
    public init(
        revisions: Int = domainHistoryCapacity, bytesPerDomain: Int = 16 << 20, totalBytes: Int = 1 << 30,
        retention: TimeInterval = 30 * 86_400, changesRetention: TimeInterval = 7 * 86_400
    ) {
        self.revisions = max(1, revisions)
        self.bytesPerDomain = max(Self.minimumBytesPerDomain, bytesPerDomain)
        self.totalBytes = max(self.bytesPerDomain, totalBytes)
        self.retention = max(0, retention)
        self.changesRetention = max(0, changesRetention)
    }

    /// The least ``bytesPerDomain``: the largest site.json and its entry, so a write always fits.
    public static let minimumBytesPerDomain = SiteConfigLoader.maximumConfigBytes + entryBytes

    /// The most UTF-8 bytes of an entry's summary.
    public static let maximumSummaryBytes = 1_000
    /// The most bytes one entry takes in a history answer or a folder's `log.json`, besides its site.json: its
    /// summary's 1,000 bytes (each byte written as at most two in JSON, its controls escaped), a token name of at
    /// most 64 bytes, the revision, time and keys.
    public static let entryBytes = 3_072

    /// What the bytes of an entry of `siteJSON` bytes (`nil` for a removal) count.
    public static func cost(siteJSON bytes: Int?) -> Int { (bytes ?? 0) + entryBytes }

    /// `summary` as an entry keeps it: one line (each control character a space), cut to ``maximumSummaryBytes``
    /// UTF-8 bytes at a scalar boundary (``UTF8Bound``). Bounding a bounded summary changes nothing.
    public static func bounded(summary: String) -> String { line(summary, bytes: maximumSummaryBytes) }

    /// `actor` as an entry keeps it (a token name has at most 64 bytes; `store push` is the push's).
    public static func bounded(actor: String) -> String { line(actor, bytes: 128) }

    private static func line(_ text: String, bytes: Int) -> String {
        let head = UTF8Bound.prefix(text, bytes: bytes + 1)
        let flat = String(
            String.UnicodeScalarView(
                head.unicodeScalars.map { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) ? " " : $0 }))
        return UTF8Bound.cut(flat, bytes: bytes)
    }

    /// How often a repository runs the sweeps across domains (total bytes, removed domains, changes) with a write:
    /// at most once a minute, or once per the shorter retention when it is shorter.
    var sweepInterval: TimeInterval { min(60, max(1, min(retention, changesRetention))) }
}
