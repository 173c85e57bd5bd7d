public import AASACore
import AASAPostgres
import Foundation
import Synchronization

/// The domains of the store: the `domains` rows read and written through ``Store``'s connection, and their history
/// in `domain_revisions` (schema version 4).
///
/// A revision is the id of the change that wrote the row (`domains.change_id`), so a `store push` of a domain makes
/// a new revision too. A write or a removal runs in one transaction that takes ``StoreSchema/changeLockKey`` (as
/// every write of the store does), locks the domain's row (`SELECT … FOR UPDATE`), compares its revision, appends
/// the change, writes the row (keeping the domain's files: pages are written apart) and its history entry (held to
/// ``policy``, with the sweeps across domains at most every ``HistoryPolicy/sweepInterval``), and announces the change
/// on ``StoreSchema/channel``: every replica loads it as it loads a push. Each call runs on a connection of its own
/// (``StoreConnections``), so a read never waits behind another caller's write, and every statement and lock wait is
/// bounded by the API's store timeout: a locked table or a slow database answers the caller
/// ``DomainRepositoryError/Code/unavailable`` in seconds.
///
/// A domain's pages are its `domain_files` rows whose path starts with `pages/` (as `store push` writes them). A
/// page's revision is the first 16 hex digits of the SHA-256 of its bytes, as in a folder. A page write or removal
/// runs in one transaction that takes the change lock, locks the domain's row, compares the page's revision and the
/// caps, appends a `domain` change, writes the file row and sets `domains.files_change_id` to that change (schema
/// version 5), and announces it. It never moves `domains.change_id`: that stays the site.json's revision (the ETag
/// of `GET /api/v1/domains/{name}`), moved only by a site.json write, a removal or a push. A replica loads the
/// domain at the later of the two changes, so it reloads the domain after a page write as after any other.
public final class StoreDomainRepository: DomainRepository, @unchecked Sendable {
    /// The connections calls run on: made when first needed and again after one broke (a database restarted, a
    /// failover), so the API answers again once the store does.
    private let connections: StoreConnections
    /// The connection of the call in progress on this thread, bound by ``using(_:)``.
    @TaskLocal private static var bound: Store?
    /// The connection of the call in progress; only inside ``using(_:)``.
    private var opened: Store? { Self.bound }

    /// What the history keeps.
    public let policy: HistoryPolicy
    /// The files the server's replica read, when it has one: a check takes a file from there when its digest has not
    /// moved, and fetches only the others.
    let files: StoredFiles?
    /// When the sweeps across domains last ran (``Store/sweepHistory(_:)``).
    private let swept = Mutex<Date?>(nil)

    /// The domains of `store`, their history held to `policy`: calls take turns on its one connection.
    public init(
        store: Store, policy: HistoryPolicy = HistoryPolicy(),
        timeout: Duration = StoreDomainRepository.defaultTimeout
    ) {
        connections = StoreConnections(store: store, timeout: timeout)
        files = nil
        self.policy = policy
    }

    /// The domains of `store`, keeping `historyCapacity` revisions of each (and the other bounds' defaults).
    public convenience init(store: Store, historyCapacity: Int) {
        self.init(store: store, policy: HistoryPolicy(revisions: historyCapacity))
    }

    /// The domains of the store at `uri` (whose schema is this server's), their history held to `policy`, on at most
    /// `connections` connections of the repository's own, each statement and lock wait bounded by `timeout`.
    public init(
        uri: String, policy: HistoryPolicy = HistoryPolicy(),
        connections: Int = 4, timeout: Duration = StoreDomainRepository.defaultTimeout, files: StoredFiles? = nil
    ) {
        self.files = files
        self.connections = StoreConnections(uri: uri, maximum: connections, timeout: timeout)
        self.policy = policy
    }

    /// The bound of each API statement and lock wait unless one is given (`--api-store-timeout`).
    public static let defaultTimeout: Duration = .seconds(5)

    /// The connection; only inside ``using(_:)``, which made it.
    private var connection: PostgresConnection { opened!.connection }

    public func prospectiveRevision(of siteJSON: [UInt8]) -> String? { nil }

    /// The domain's `domain_files` rows (within the caps of a domain folder, ``Store/domain(_:known:)``) in memory,
    /// read as a replica reads them: nothing is written to disk, and only the files the replica has not read at the
    /// same digest are fetched.
    public func checking(_ name: String, _ load: (_ files: (any FileTree)?) -> LoadedDomain) throws -> LoadedDomain {
        guard let stored = try using({ try opened!.domain(name, known: files) }), !stored.files.isEmpty else {
            return load(nil)
        }
        return load(stored.tree(modified: Date()))
    }

    public func list(after: String?, limit: Int, matching: (String) -> Bool) throws -> [DomainListing] {
        try using {
            var listed: [DomainListing] = []
            var after = after ?? ""
            // Pages of names until `limit` match: the filter is the caller's (a state the server knows, not the store).
            while listed.count < limit {
                let result = try connection.execute(
                    "SELECT name, change_id FROM domains WHERE name > $1 ORDER BY name LIMIT $2::integer",
                    [.text(after), .integer(Self.listingPage)])
                for row in 0..<result.rowCount {
                    guard let name = result.text(row, 0), let revision = result.text(row, 1) else { continue }
                    after = name
                    if listed.count < limit && matching(name) {
                        listed.append(DomainListing(name: name, revision: revision))
                    }
                }
                if result.rowCount < Self.listingPage { break }
            }
            return listed
        }
    }

    /// Names read per statement of a listing.
    static let listingPage = 1_000

    public func read(_ name: String) throws -> DomainDocument? {
        try using { try current(name, locking: false) }
    }

    public func write(_ name: String, siteJSON: [UInt8], expecting: DomainExpectation, actor: String, summary: String)
        throws -> String
    {
        try changing(.domain, name, expecting) { change in
            try connection.execute(
                """
                INSERT INTO domains (name, site_json, change_id, shard_hash) VALUES ($1, $2, $3::bigint, $4::bigint)
                ON CONFLICT (name) DO UPDATE SET site_json = excluded.site_json, change_id = excluded.change_id
                """, [.text(name), .bytes(siteJSON), .integer(change), .integer(Shard.hash(name))])
            try record(name, change, actor: actor, summary: summary, siteJSON: siteJSON)
        }
    }

    public func delete(_ name: String, expecting: DomainExpectation, actor: String) throws {
        _ = try changing(.domainRemoved, name, expecting) { change in
            try connection.execute("DELETE FROM domains WHERE name = $1", [.text(name)])
            try record(name, change, actor: actor, summary: "removed", siteJSON: nil)
        }
    }

    public func history(_ name: String, after cursor: HistoryCursor?, limit: Int) throws -> [DomainRevision] {
        // A revision is a change id: the entries after the cursor's are those of smaller ids.
        let before = cursor.flatMap { Int64($0.revision) } ?? Int64.max
        return try using {
            let result = try connection.execute(
                """
                SELECT revision, extract(epoch FROM at)::float8, actor, summary, site_json IS NULL
                FROM domain_revisions WHERE domain = $1 AND revision < $3::bigint ORDER BY revision DESC
                LIMIT $2::integer
                """, [.text(name), .integer(limit), .integer(before)])
            return try (0..<result.rowCount).compactMap { row in
                guard let revision = result.text(row, 0) else { return nil }
                let time: Date
                do {
                    time = try CheckedNumber.date(
                        secondsSince1970: result.text(row, 1), field: "domain_revisions.at of revision \(revision)")
                } catch {
                    throw DomainRepositoryError(
                        .failed,
                        "the history of \(name) in the store at \(connection.server) is not read: \(error); fix: "
                            + "give the entry a time (UPDATE domain_revisions SET at = now() WHERE domain = … AND "
                            + "revision = \(revision); schema version 6 refuses such a time)")
                }
                return DomainRevision(
                    revision: revision, time: time, actor: result.text(row, 2) ?? "",
                    summary: result.text(row, 3) ?? "", removed: result.text(row, 4) == "t")
            }
        }
    }

    public func siteJSON(_ name: String, revision: String) throws -> [UInt8]? {
        guard let number = Int64(revision), number > 0 else { return nil }
        return try using {
            let result = try connection.execute(
                """
                SELECT CASE WHEN octet_length(site_json) <= $3::integer THEN site_json END, octet_length(site_json)
                FROM domain_revisions WHERE domain = $1 AND revision = $2::bigint AND site_json IS NOT NULL
                """, [.text(name), .integer(number), .integer(SiteConfigLoader.maximumConfigBytes)])
            guard result.rowCount == 1 else {
                // The current revision is readable even without a history entry (a row written by a server that
                // kept none).
                let now = try current(name, locking: false)
                return now?.revision == revision ? now?.siteJSON : nil
            }
            guard let bytes = result.bytes(0, 0) else { throw oversized(name, result.text(0, 1)) }
            return bytes
        }
    }

    // MARK: Pages

    /// The prefix of a page's path in `domain_files`.
    static let pagesPrefix = PageLoader.folderName + "/"

    public func pages(_ name: String, limit: Int) throws -> [DomainPage]? {
        try using {
            guard try connection.execute("SELECT 1 FROM domains WHERE name = $1", [.text(name)]).rowCount == 1 else {
                return nil
            }
            return try listing(name, limit: limit)
        }
    }

    public func page(_ name: String, path: String) throws -> PageDocument? {
        try using { try currentPage(name, path) }
    }

    public func pageValidator(_ name: String, path: String) throws -> String? {
        try using {
            // Every write of a domain's files moves one of the two changes (`store push`: change_id; the API:
            // files_change_id); octet_length of a stored value is read from its header, not its bytes.
            let result = try connection.execute(
                """
                SELECT greatest(d.change_id, d.files_change_id)::text || ':' || octet_length(f.bytes)
                FROM domains d JOIN domain_files f ON f.domain = d.name WHERE d.name = $1 AND f.path = $2
                """, [.text(name), .text(Self.pagesPrefix + path)])
            return result.rowCount == 1 ? result.text(0, 0) : nil
        }
    }

    public func writePage(
        _ name: String, path: String, bytes: [UInt8], expecting: DomainExpectation?, limits: PageLimits, dryRun: Bool
    ) throws -> PageWrite {
        try changingPage(name, path, expecting, dryRun: dryRun) { current in
            if let problem = limits.problem(
                name, path: path, size: bytes.count, current: try listing(name, limit: Int(Int32.max), hashing: false))
            {
                throw problem
            }
            return PageWrite(revision: DomainPage.revision(of: bytes), created: current == nil)
        } write: { change in
            try connection.execute(
                """
                INSERT INTO domain_files (domain, path, bytes) VALUES ($1, $2, $3)
                ON CONFLICT (domain, path) DO UPDATE SET bytes = excluded.bytes
                """, [.text(name), .text(Self.pagesPrefix + path), .bytes(bytes)])
        }
    }

    public func deletePage(_ name: String, path: String, expecting: String, dryRun: Bool) throws {
        // The revision compared is one the page has, so a missing page is a conflict there.
        _ = try changingPage(name, path, .revision(expecting), dryRun: dryRun) { _ in
            PageWrite(revision: "", created: false)
        } write: { _ in
            try connection.execute(
                "DELETE FROM domain_files WHERE domain = $1 AND path = $2",
                [.text(name), .text(Self.pagesPrefix + path)])
        }
    }

    /// The pages of `name`, sorted by path, at most `limit`: sizes and (when `hashing`; the caps need none)
    /// revisions computed by the database, no bytes fetched.
    private func listing(_ name: String, limit: Int, hashing: Bool = true) throws -> [DomainPage] {
        let result = try connection.execute(
            hashing
                ? """
                SELECT substr(path, $2::integer), octet_length(bytes), substr(encode(sha256(bytes), 'hex'), 1, 16)
                FROM domain_files WHERE domain = $1 AND starts_with(path, $3) ORDER BY path COLLATE "C"
                LIMIT $4::integer
                """
                : """
                SELECT substr(path, $2::integer), octet_length(bytes), ''
                FROM domain_files WHERE domain = $1 AND starts_with(path, $3) ORDER BY path COLLATE "C"
                LIMIT $4::integer
                """,
            [.text(name), .integer(Self.pagesPrefix.count + 1), .text(Self.pagesPrefix), .integer(Int64(limit))])
        return (0..<result.rowCount).compactMap { row in
            guard let path = result.text(row, 0), let size = result.text(row, 1).flatMap(Int.init),
                let revision = result.text(row, 2)
            else { return nil }
            return DomainPage(path: path, bytes: size, revision: revision)
        }
    }

    /// The page `path` of `name`; one over the page cap is refused on the size the database reports.
    private func currentPage(_ name: String, _ path: String) throws -> PageDocument? {
        let result = try connection.execute(
            """
            SELECT CASE WHEN octet_length(bytes) <= $3::integer THEN bytes END, octet_length(bytes)
            FROM domain_files WHERE domain = $1 AND path = $2
            """,
            [.text(name), .text(Self.pagesPrefix + path), .integer(Int64(PageLoader().maximumFileBytes))])
        guard result.rowCount == 1 else { return nil }
        guard let bytes = result.bytes(0, 0) else {
            throw DomainRepositoryError(
                .failed,
                "the store at \(connection.server) holds \(result.text(0, 1) ?? "?") bytes for page '\(path)' of "
                    + "\(name), over the \(PageLoader().maximumFileBytes) a page may have; nothing of it is read; fix: "
                    + "write the page again")
        }
        return PageDocument(bytes: bytes, revision: DomainPage.revision(of: bytes))
    }

    /// The revision of page `path` of `name`, from the digest the database keeps of it: no byte of the page is
    /// fetched or hashed.
    private func currentRevision(_ name: String, _ path: String) throws -> String? {
        let result = try connection.execute(
            "SELECT substr(encode(digest, 'hex'), 1, 16) FROM domain_files WHERE domain = $1 AND path = $2",
            [.text(name), .text(Self.pagesPrefix + path)])
        return result.rowCount == 1 ? result.text(0, 0) : nil
    }

    /// One page transaction: the change lock, the domain's row locked, the page's revision (`nil`: no page)
    /// compared with `expecting` and `check`ed, no byte of it fetched; then, unless `dryRun`, a `domain` change appended, `write` run with its id, the domain's
    /// `files_change_id` set to it and the change announced.
    private func changingPage(
        _ name: String, _ path: String, _ expecting: DomainExpectation?, dryRun: Bool,
        check: (String?) throws -> PageWrite, write: (Int64) throws -> Void
    ) throws -> PageWrite {
        try using {
            try connection.transaction {
                try connection.execute(
                    "SELECT pg_advisory_xact_lock($1::bigint)", [.integer(StoreSchema.changeLockKey)])
                guard
                    try connection.execute("SELECT 1 FROM domains WHERE name = $1 FOR UPDATE", [.text(name)]).rowCount
                        == 1
                else { throw DomainRepositoryError(.noDomain, "the store has no domain \(name)") }
                let current = try currentRevision(name, path)
                switch expecting {
                case .absent? where current != nil, .revision? where current != expecting?.revisionValue:
                    throw DomainRepositoryError(
                        .conflict(current: current),
                        "page '\(path)' of \(name) in the store at \(connection.server) is at revision "
                            + "\(current ?? "none")")
                default: break
                }
                let result = try check(current)
                if dryRun { return result }
                let change = try connection.execute(
                    "INSERT INTO changes (kind, name) VALUES ($1, $2) RETURNING id",
                    [.text(Store.ChangeKind.domain.rawValue), .text(name)])
                guard let id = change.text(0, 0).flatMap(Int64.init) else {
                    throw DomainRepositoryError(.failed, "the store at \(connection.server) returned no change id")
                }
                try write(id)
                try connection.execute(
                    "UPDATE domains SET files_change_id = $2::bigint WHERE name = $1", [.text(name), .integer(id)])
                try connection.notify(StoreSchema.channel, payload: String(id))
                return result
            }
        }
    }

    // MARK: Parts

    /// Runs `body` alone on the connection, its store errors made repository errors.
    /// Runs `body` on a connection of its own (``opened`` and ``connection`` inside it); a store that is slow, locked or
    /// away is ``DomainRepositoryError/Code/unavailable``, any other failure ``DomainRepositoryError/Code/failed``.
    private func using<Value>(_ body: () throws -> Value) throws -> Value {
        do {
            return try connections.using { store in try Self.$bound.withValue(store) { try body() } }
        } catch let error as DomainRepositoryError {
            throw error
        } catch {
            if let reason = connections.unavailable(error) { throw DomainRepositoryError(.unavailable, reason) }
            throw DomainRepositoryError(.failed, "\(error)")
        }
    }

    /// The domain's row, locked until the transaction ends when `locking`; a site.json over
    /// ``SiteConfigLoader/maximumConfigBytes`` is refused on the size the database reports, before it is read.
    private func current(_ name: String, locking: Bool) throws -> DomainDocument? {
        let result = try connection.execute(
            locking
                ? """
                SELECT change_id, octet_length(site_json),
                    CASE WHEN octet_length(site_json) <= $2::integer THEN site_json END
                FROM domains WHERE name = $1 FOR UPDATE
                """
                : """
                SELECT change_id, octet_length(site_json),
                    CASE WHEN octet_length(site_json) <= $2::integer THEN site_json END
                FROM domains WHERE name = $1
                """, [.text(name), .integer(SiteConfigLoader.maximumConfigBytes)])
        guard result.rowCount == 1, let revision = result.text(0, 0) else { return nil }
        guard let bytes = result.bytes(0, 2) else { throw oversized(name, result.text(0, 1)) }
        return DomainDocument(siteJSON: bytes, revision: revision)
    }

    private func oversized(_ name: String, _ size: String?) -> DomainRepositoryError {
        DomainRepositoryError(
            .failed,
            "the store at \(connection.server) holds \(size ?? "?") bytes of site.json for domain \(name), over the "
                + "\(SiteConfigLoader.maximumConfigBytes) a site.json may have; nothing of it is read; fix: write "
                + "the domain again")
    }

    /// One compare-and-swap transaction: the change lock, the row locked and compared, a `changes` row appended
    /// (its id handed to `write`), old history entries dropped, the change announced. Returns the change id.
    private func changing(
        _ kind: Store.ChangeKind, _ name: String, _ expecting: DomainExpectation, _ write: (Int64) throws -> Void
    ) throws -> String {
        try using {
            try connection.transaction {
                try connection.execute(
                    "SELECT pg_advisory_xact_lock($1::bigint)", [.integer(StoreSchema.changeLockKey)])
                let now = try current(name, locking: true)?.revision
                switch expecting {
                case .absent where now != nil, .revision where now != expecting.revisionValue:
                    throw DomainRepositoryError(
                        .conflict(current: now),
                        "domain \(name) in the store at \(connection.server) is at revision \(now ?? "none")")
                default: break
                }
                if kind == .domainRemoved && now == nil {
                    throw DomainRepositoryError(.conflict(current: nil), "the store has no domain \(name)")
                }
                let result = try connection.execute(
                    "INSERT INTO changes (kind, name) VALUES ($1, $2) RETURNING id",
                    [.text(kind.rawValue), .text(name)]
                )
                guard let change = result.text(0, 0).flatMap(Int64.init) else {
                    throw DomainRepositoryError(.failed, "the store at \(connection.server) returned no change id")
                }
                try write(change)
                try connection.notify(StoreSchema.channel, payload: String(change))
                return String(change)
            }
        }
    }

    /// Appends the history entry of `change`, drops the entries of `name` beyond ``policy``, and runs the sweeps
    /// across domains when they are due; all in the write's transaction, so the write and its entry succeed or fail
    /// together.
    private func record(_ name: String, _ change: Int64, actor: String, summary: String, siteJSON: [UInt8]?) throws {
        try opened!.recordRevision(name, change, actor: actor, summary: summary, siteJSON: siteJSON, policy: policy)
        try opened!.pruneHistoryTotal(policy)
        let now = Date()
        let due = swept.withLock { last in
            guard last.map({ now.timeIntervalSince($0) >= policy.sweepInterval }) ?? true else { return false }
            last = now
            return true
        }
        if due { try opened!.sweepHistory(policy) }
    }
}
