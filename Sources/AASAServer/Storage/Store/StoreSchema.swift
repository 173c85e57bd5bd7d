import AASACore
public import AASAPostgres

/// The store's tables, owned by the server: created and upgraded by versioned migrations (docs/store.md).
///
/// ``migrate(_:)`` takes a fixed advisory lock, so that replicas (or `store init`s) starting together upgrade one at a
/// time, and applies every missing migration in one transaction: a database is at one version or the next, never
/// between.
public enum StoreSchema {
    /// The advisory lock every migration runs under: "aasaschm" as a big-endian 64-bit integer.
    public static let lockKey: Int64 = 0x6161_7361_7363_686D

    /// The transaction lock every write takes before it appends its change: "aasachng". Writes then commit in the
    /// order of their change ids, so a replica that has applied change n has seen every change before it.
    public static let changeLockKey: Int64 = 0x6161_7361_6368_6E67

    /// The channel each write announces its change id on (`NOTIFY aasa_changes, '<id>'`).
    public static let channel = "aasa_changes"

    /// Each version's statements; version n is `migrations[n - 1]`. A released migration is never edited: a change
    /// of the schema is a new version.
    static let migrations: [[String]] = [
        [
            """
            CREATE TABLE changes (
                id bigserial PRIMARY KEY,
                kind text NOT NULL,
                name text NOT NULL,
                at timestamptz NOT NULL DEFAULT now()
            )
            """,
            """
            CREATE TABLE domains (
                name text PRIMARY KEY,
                site_json bytea NOT NULL,
                change_id bigint NOT NULL REFERENCES changes (id)
            )
            """,
            """
            CREATE TABLE domain_files (
                domain text NOT NULL REFERENCES domains (name) ON DELETE CASCADE,
                path text NOT NULL,
                bytes bytea NOT NULL,
                PRIMARY KEY (domain, path)
            )
            """,
            """
            CREATE TABLE certificates (
                name text PRIMARY KEY,
                fullchain bytea,
                privkey_sealed bytea,
                ocsp bytea,
                acme_json bytea,
                change_id bigint NOT NULL REFERENCES changes (id)
            )
            """,
        ],
        [
            // The shard of a row (``Shard/hash(_:)`` of its name), so a replica of one shard selects its rows in SQL.
            "ALTER TABLE domains ADD COLUMN shard_hash bigint",
            "ALTER TABLE certificates ADD COLUMN shard_hash bigint",
        ],
        [
            // ACME for the fleet (``StoreACMEStorage``): one account, one bucket of new orders, each name's failures.
            "CREATE TABLE acme_account (id integer PRIMARY KEY CHECK (id = 1), key_sealed bytea NOT NULL)",
            "CREATE TABLE acme_registrations (directory text PRIMARY KEY, url text NOT NULL)",
            """
            CREATE TABLE acme_pacing (
                id integer PRIMARY KEY CHECK (id = 1),
                tokens double precision NOT NULL,
                refilled_at double precision NOT NULL,
                paused_until double precision,
                pause_reason text
            )
            """,
            "CREATE TABLE acme_orders (name text PRIMARY KEY, history bytea NOT NULL)",
        ],
        [
            // The tenant API's history of each domain (``StoreDomainRepository``): kept after the domain is removed,
            // so no reference to `domains`; `site_json` is NULL for a removal.
            """
            CREATE TABLE domain_revisions (
                domain text NOT NULL,
                revision bigint NOT NULL,
                at timestamptz NOT NULL DEFAULT now(),
                actor text NOT NULL,
                summary text NOT NULL,
                site_json bytea,
                PRIMARY KEY (domain, revision)
            )
            """
        ],
        [
            // The change that last wrote one of the domain's files through the tenant API (``StoreDomainRepository``):
            // `change_id` stays the site.json's revision, and a replica loads the domain at the greater of the two.
            "ALTER TABLE domains ADD COLUMN files_change_id bigint"
        ],
        [
            // Every number a replica reads is one it can use (``CheckedNumber``): a time from year 1 to 9999, the
            // bucket's tokens from 0 to the most an order rate allows. A row already out of range is repaired first,
            // so the upgrade never fails on it: a change or history entry is dated at the upgrade, and an
            // `acme_pacing` row is deleted (as before the first order: the bucket starts full, without a pause).
            // PostgreSQL sorts `NaN` above every number and `Infinity`, so the ranges leave both out.
            """
            UPDATE changes SET at = now()
            WHERE NOT (at >= '0001-01-01 00:00:00+00' AND at <= '9999-12-31 23:59:59+00')
            """,
            """
            ALTER TABLE changes ADD CONSTRAINT changes_at_range
                CHECK (at >= '0001-01-01 00:00:00+00' AND at <= '9999-12-31 23:59:59+00')
            """,
            """
            UPDATE domain_revisions SET at = now()
            WHERE NOT (at >= '0001-01-01 00:00:00+00' AND at <= '9999-12-31 23:59:59+00')
            """,
            """
            ALTER TABLE domain_revisions ADD CONSTRAINT domain_revisions_at_range
                CHECK (at >= '0001-01-01 00:00:00+00' AND at <= '9999-12-31 23:59:59+00')
            """,
            """
            DELETE FROM acme_pacing
            WHERE NOT (tokens BETWEEN 0 AND 1000000 AND refilled_at BETWEEN -62135596800 AND 253402300799
                AND coalesce(paused_until BETWEEN -62135596800 AND 253402300799, true))
            """,
            """
            ALTER TABLE acme_pacing ADD CONSTRAINT acme_pacing_finite
                CHECK (tokens BETWEEN 0 AND 1000000 AND refilled_at BETWEEN -62135596800 AND 253402300799
                    AND (paused_until IS NULL OR paused_until BETWEEN -62135596800 AND 253402300799))
            """,
        ],
        [
            // The bytes the tenant API's history counts (``HistoryPolicy``: each entry's site.json and 3,072 bytes
            // for the entry), kept by every write of an entry, so the total is checked without reading the table.
            "CREATE TABLE history_usage (id integer PRIMARY KEY CHECK (id = 1), bytes bigint NOT NULL)",
            """
            INSERT INTO history_usage (id, bytes)
            SELECT 1, coalesce(sum(coalesce(octet_length(site_json), 0) + 3072), 0) FROM domain_revisions
            """,
            // The oldest entries of all domains go first; a removed domain's history goes after a retention.
            "CREATE INDEX domain_revisions_revision ON domain_revisions (revision)",
            "CREATE INDEX domain_revisions_removals ON domain_revisions (at) WHERE site_json IS NULL",
            // The newest change id `changes` was pruned through: a replica that applied less reads everything.
            "CREATE TABLE changes_pruned (id integer PRIMARY KEY CHECK (id = 1), through bigint NOT NULL)",
            "INSERT INTO changes_pruned (id, through) VALUES (1, 0)",
            "CREATE INDEX changes_at ON changes (at)",
        ],
        [
            // Each file's SHA-256, computed by the database whichever server writes the row (a push, the tenant API,
            // an older replica during a rolling upgrade): a replica fetches only the files whose digest moved
            // (``StoredFiles``).
            "ALTER TABLE domain_files ADD COLUMN digest bytea GENERATED ALWAYS AS (sha256(bytes)) STORED"
        ],
        [
            // What `store push` saw of the folder it last compared a row with (``FolderStamp``), and the change the
            // row was at then: the stamp holds only while that change is the row's, so any other write (the tenant
            // API, an ACME renewal, a server of an older version) voids it. Tables of their own, so that keeping a
            // stamp rewrites a narrow row, not the domain's or the certificate's.
            """
            CREATE TABLE domain_push_stamps (
                name text PRIMARY KEY REFERENCES domains (name) ON DELETE CASCADE,
                stamp text NOT NULL,
                change_id bigint NOT NULL
            )
            """,
            """
            CREATE TABLE certificate_push_stamps (
                name text PRIMARY KEY REFERENCES certificates (name) ON DELETE CASCADE,
                stamp text NOT NULL,
                change_id bigint NOT NULL
            )
            """,
        ],
    ]

    /// What a version needs done beside its statements, with the server's code: the hashes of rows written before
    /// version 2 (a migration of SQL alone cannot compute nginx's hash), then the column made required.
    static func backfill(_ connection: PostgresConnection, reaching version: Int) throws {
        guard version == 2 else { return }
        for table in ["domains", "certificates"] {
            let rows = try connection.execute(
                table == "domains"
                    ? "SELECT name FROM domains WHERE shard_hash IS NULL"
                    : "SELECT name FROM certificates WHERE shard_hash IS NULL")
            for index in 0..<rows.rowCount {
                guard let name = rows.text(index, 0) else { continue }
                try connection.execute(
                    table == "domains"
                        ? "UPDATE domains SET shard_hash = $2::bigint WHERE name = $1"
                        : "UPDATE certificates SET shard_hash = $2::bigint WHERE name = $1",
                    [.text(name), .integer(Shard.hash(name))])
            }
        }
        try connection.execute("ALTER TABLE domains ALTER COLUMN shard_hash SET NOT NULL")
        try connection.execute("ALTER TABLE certificates ALTER COLUMN shard_hash SET NOT NULL")
        try connection.execute("CREATE INDEX domains_shard_hash ON domains (shard_hash)")
    }

    /// The version this server's migrations reach.
    public static var currentVersion: Int { migrations.count }

    /// Creates or upgrades the schema on `connection` to ``currentVersion`` and returns the version it found.
    ///
    /// - Throws: ``PostgresError`` when a statement fails (nothing of the upgrade is kept), ``StoreError`` when the
    ///   database is at a version newer than this server knows.
    @discardableResult
    public static func migrate(_ connection: PostgresConnection) throws -> Int {
        try connection.withAdvisoryLock(lockKey) {
            try connection.transaction {
                try connection.execute("CREATE TABLE IF NOT EXISTS schema_version (version integer NOT NULL)")
                let found = try version(connection)
                guard found <= currentVersion else {
                    throw StoreError(
                        "the store at \(connection.server) is at schema version \(found), newer than this server's "
                            + "\(currentVersion); fix: run a newer aasa-server")
                }
                for (offset, statements) in migrations.enumerated().dropFirst(found) {
                    for statement in statements { try connection.execute(statement) }
                    try backfill(connection, reaching: offset + 1)
                }
                if found < currentVersion {
                    try connection.execute("DELETE FROM schema_version")
                    try connection.execute(
                        "INSERT INTO schema_version (version) VALUES ($1::integer)", [.integer(currentVersion)])
                }
                return found
            }
        }
    }

    /// The schema version of the database (0 when the version table is empty).
    public static func version(_ connection: PostgresConnection) throws -> Int {
        let result = try connection.execute("SELECT coalesce(max(version), 0) FROM schema_version")
        return Int(result.text(0, 0) ?? "0") ?? 0
    }
}
