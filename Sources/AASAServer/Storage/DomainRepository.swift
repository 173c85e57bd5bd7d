public import AASACore
public import Foundation

/// Where the tenant API reads and writes each domain's site.json and its history: the config folder
/// (``FolderDomainRepository``) or the store (``StoreDomainRepository``).
///
/// A revision is an opaque string (the API's ETag is `"<revision>"`). A write or a removal compares and swaps on it
/// atomically: of writers expecting the same revision, exactly one succeeds and the others get
/// ``DomainRepositoryError/Code/conflict`` with the revision now current.
public protocol DomainRepository: Sendable {
    /// Up to `limit` domains whose names sort after `after` (all with `nil`) and satisfy `matching`, sorted by name,
    /// with their revisions.
    func list(after: String?, limit: Int, matching: (String) -> Bool) throws -> [DomainListing]
    /// The site.json of `name` as stored and its revision, or `nil` when there is no such domain.
    func read(_ name: String) throws -> DomainDocument?
    /// Writes `siteJSON` as the site.json of `name` when its current revision is what `expecting` says, records the
    /// new revision in the history with `actor` and `summary`, and returns it.
    func write(_ name: String, siteJSON: [UInt8], expecting: DomainExpectation, actor: String, summary: String)
        throws -> String
    /// Removes `name` when its current revision is what `expecting` says, recording the removal in its history.
    func delete(_ name: String, expecting: DomainExpectation, actor: String) throws
    /// Up to `limit` revisions of `name` older than the entry `cursor` names (from the newest with `nil`), newest
    /// first (removals included), kept after the domain is removed as long as ``HistoryPolicy`` keeps them.
    func history(_ name: String, after cursor: HistoryCursor?, limit: Int) throws -> [DomainRevision]
    /// The site.json of revision `revision` of `name`, or `nil` when the history has none (or it is a removal).
    func siteJSON(_ name: String, revision: String) throws -> [UInt8]?
    /// The revision a write of `siteJSON` would get, when the repository can tell before writing.
    func prospectiveRevision(of siteJSON: [UInt8]) -> String?
    /// What `load` makes of a new site.json of `name` beside the domain's stored files (`pages/`, templates), as
    /// `check` and a server's load read them: `load` gets the tree of those files (the domain's folder, or its rows
    /// in memory: nothing is written to read them; `nil`: the domain has none beside site.json), so every finding
    /// names the domain's own files.
    func checking(_ name: String, _ load: (_ files: (any FileTree)?) -> LoadedDomain) throws -> LoadedDomain

    /// The files of the `pages/` of `name`, sorted by path, at most `limit` of them; `nil` when there is no such
    /// domain (no site.json).
    func pages(_ name: String, limit: Int) throws -> [DomainPage]?
    /// The file `path` of the `pages/` of `name` (`about/index.html`) and its revision, or `nil` when there is none.
    func page(_ name: String, path: String) throws -> PageDocument?
    /// What tells the bytes of the file `path` of the `pages/` of `name` apart from any other bytes it held, found
    /// without reading them (a folder: the file's identity, size and times; the store: the change that last wrote
    /// the domain's files, and the size), or `nil` when there is no such file. ``SharedPageReads`` reads the page
    /// again only when it moves.
    func pageValidator(_ name: String, path: String) throws -> String?
    /// Writes `bytes` as the file `path` of the `pages/` of `name` when the file's own revision is what `expecting`
    /// says (`nil`: whatever it is), after checking `limits` with the new file in place of the old one, all under
    /// the lock the domain's writes take; with `dryRun`, everything but the write. The site.json's revision does not
    /// change.
    ///
    /// - Throws: ``DomainRepositoryError`` with ``DomainRepositoryError/Code/noDomain`` (no site.json),
    ///   ``DomainRepositoryError/Code/conflict(current:)`` (the page's current revision), or
    ///   ``DomainRepositoryError/Code/limit`` (a cap of `limits`, named in the description).
    func writePage(
        _ name: String, path: String, bytes: [UInt8], expecting: DomainExpectation?, limits: PageLimits, dryRun: Bool
    ) throws -> PageWrite
    /// Deletes the file `path` of the `pages/` of `name` when its revision is `expecting`; with `dryRun`, only
    /// compares.
    func deletePage(_ name: String, path: String, expecting: String, dryRun: Bool) throws
}

extension DomainRepository {
    /// The newest `limit` revisions of `name`, newest first.
    public func history(_ name: String, limit: Int) throws -> [DomainRevision] {
        try history(name, after: nil, limit: limit)
    }
}

/// The revisions a history keeps per domain by default (``HistoryPolicy/revisions``); older ones are dropped as new
/// ones are written.
public let domainHistoryCapacity = 1_000

/// Where a page of history ends: the time and revision of its last entry. The next page holds the entries older
/// than it, even when that entry has been pruned since.
public struct HistoryCursor: Sendable, Equatable {
    /// The entry's time, in milliseconds since 1970 (as the history keeps it).
    public var milliseconds: Int64
    /// The entry's revision.
    public var revision: String

    /// The cursor after `entry`.
    public init(after entry: DomainRevision) {
        milliseconds = Self.milliseconds(entry.time)
        revision = entry.revision
    }

    /// A cursor read back from its text (``text``): `<milliseconds>.<revision>`, the milliseconds 1 to 15 digits with
    /// an optional `-`; `nil` when `text` is no cursor.
    public init?(text: String) {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let digits = parts.first.map { $0.hasPrefix("-") ? $0.dropFirst() : $0 } ?? ""
        guard parts.count == 2, (1...15).contains(digits.utf8.count),
            digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let milliseconds = Int64(parts[0]),
            APIDomainName.isRevision(String(parts[1]))
        else {
            return nil
        }
        self.milliseconds = milliseconds
        revision = String(parts[1])
    }

    /// `<milliseconds>.<revision>`.
    public var text: String { "\(milliseconds).\(revision)" }

    static func milliseconds(_ time: Date) -> Int64 { Int64((time.timeIntervalSince1970 * 1000).rounded()) }

    /// The index of the first entry of `entries` (newest first) after the one the cursor names; when that one is
    /// gone, of the first one older than its time.
    func position(in entries: [DomainRevision]) -> Int {
        if let index = entries.firstIndex(where: {
            Self.milliseconds($0.time) == milliseconds && $0.revision == revision
        }) {
            return index + 1
        }
        return entries.firstIndex(where: { Self.milliseconds($0.time) < milliseconds }) ?? entries.count
    }
}

/// One domain as a listing finds it.
public struct DomainListing: Sendable, Equatable {
    /// The host name.
    public var name: String
    /// Its current revision.
    public var revision: String

    /// A listing entry.
    public init(name: String, revision: String) {
        self.name = name
        self.revision = revision
    }
}

/// A domain's site.json as stored, with its revision.
public struct DomainDocument: Sendable, Equatable {
    /// The bytes as written.
    public var siteJSON: [UInt8]
    /// The revision of those bytes.
    public var revision: String

    /// A document.
    public init(siteJSON: [UInt8], revision: String) {
        self.siteJSON = siteJSON
        self.revision = revision
    }
}

/// What a write expects of the domain's current state.
public enum DomainExpectation: Sendable, Equatable {
    /// That the domain does not exist.
    case absent
    /// That its current revision is this one.
    case revision(String)
}

/// One entry of a domain's history.
public struct DomainRevision: Sendable, Equatable {
    /// The revision written (for a removal, the revision of the removal itself).
    public var revision: String
    /// When it was written.
    public var time: Date
    /// The name of the token that wrote it.
    public var actor: String
    /// What the write changed, in one line.
    public var summary: String
    /// Whether this entry removed the domain.
    public var removed: Bool

    /// An entry.
    public init(revision: String, time: Date, actor: String, summary: String, removed: Bool = false) {
        self.revision = revision
        self.time = time
        self.actor = actor
        self.summary = summary
        self.removed = removed
    }
}

/// Why a repository did not do what it was asked.
public struct DomainRepositoryError: Error, Sendable, CustomStringConvertible, Equatable {
    /// What went wrong.
    public enum Code: Sendable, Equatable {
        /// The domain's current revision is not the one expected: `current` (`nil`: the domain does not exist).
        case conflict(current: String?)
        /// The folder or the store failed.
        case failed
        /// The store is slow, locked or away: the call gave up after the API's store timeout, and may succeed later.
        case unavailable
        /// The domain has no site.json (a page needs its domain first).
        case noDomain
        /// A cap of a domain's files would be passed; the description names it.
        case limit
    }

    /// What went wrong.
    public var code: Code
    /// The reason, naming the domain and the file or store.
    public var description: String

    /// An error.
    public init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }
}
