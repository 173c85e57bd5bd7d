import AASACore
import AASAOpenSSL
public import AASAPostgres

/// The store's rows, read and written through one connection: every write appends a row to `changes` and announces
/// its id on ``StoreSchema/channel`` in the same transaction, so a reader never sees a write without its change.
public final class Store: Sendable {
    /// The connection.
    public let connection: PostgresConnection

    /// Connects to `uri` and, when `migrating`, creates or upgrades the schema (``StoreSchema/migrate(_:)``);
    /// otherwise (a dry run, a pull: nothing is written) the schema must already be this server's version.
    ///
    /// - Throws: a ``PostgresError`` (naming `host:port/database`, never the password), or ``StoreError`` when the
    ///   schema is not at ``StoreSchema/currentVersion`` and may not be upgraded.
    public init(uri: String, migrating: Bool = true, connectTimeout: Duration = .seconds(10)) throws {
        connection = try PostgresConnection(uri: uri, connectTimeout: connectTimeout)
        if migrating {
            try StoreSchema.migrate(connection)
            return
        }
        let exists = try connection.execute("SELECT to_regclass('schema_version') IS NOT NULL")
        let version = exists.text(0, 0) == "t" ? try StoreSchema.version(connection) : 0
        guard version == StoreSchema.currentVersion else {
            throw StoreError(
                "the store at \(connection.server) is at schema version \(version), not \(StoreSchema.currentVersion); "
                    + "nothing is written by this command; fix: run aasa-server store init --store URI")
        }
    }

    /// The context a certificate's private key is sealed with: `<folder>/privkey.pem`, so a sealed key moved to
    /// another certificate's row does not open.
    public static func sealingContext(_ name: String) -> [UInt8] {
        Array((name + "/" + CertificateFile.privateKey.name).utf8)
    }

    // MARK: Domains

    /// The names of every stored domain, sorted.
    public func domainNames() throws -> [String] {
        let result = try connection.execute("SELECT name FROM domains ORDER BY name")
        return (0..<result.rowCount).compactMap { result.text($0, 0) }
    }

    /// The domain `name`, or `nil` when the store has none; the files `known` holds at their current digest are
    /// taken from it instead of fetched.
    ///
    /// - Throws: ``StoreError`` naming the row when it holds more than a domain folder may (the caps of
    ///   ``SiteConfigLoader`` and ``PageLoader``): checked on the sizes the database reports, before any byte is read.
    public func domain(_ name: String) throws -> StoredDomain? {
        try domain(name, known: nil)
    }

    func domain(_ name: String, known: StoredFiles?) throws -> StoredDomain? {
        let pages = PageLoader()
        let sizes = try connection.execute(
            """
            SELECT octet_length(site_json), (SELECT count(*) FROM domain_files WHERE domain = $1),
                (SELECT coalesce(max(octet_length(bytes)), 0) FROM domain_files WHERE domain = $1),
                (SELECT coalesce(sum(octet_length(bytes)), 0) FROM domain_files WHERE domain = $1)
            FROM domains WHERE name = $1
            """, [.text(name)])
        guard sizes.rowCount == 1 else { return nil }
        let figures = (0..<4).map { Int(sizes.text(0, $0) ?? "") ?? Int.max }
        let limits = [
            SiteConfigLoader.maximumConfigBytes, pages.maximumFiles + 1,
            max(pages.maximumFileBytes, pages.maximumTemplateBytes),
            pages.maximumTotalBytes + pages.maximumTemplateBytes,
        ]
        let what = ["bytes of site.json", "files", "bytes in one file", "bytes of files in all"]
        if let over = figures.indices.first(where: { figures[$0] > limits[$0] }) {
            throw StoreError(
                "the store at \(connection.server) holds \(figures[over]) \(what[over]) for domain \(name), over the "
                    + "\(limits[over]) a domain folder may hold; nothing of it is read; fix: push the domain again")
        }
        let row = try connection.execute("SELECT site_json FROM domains WHERE name = $1", [.text(name)])
        guard row.rowCount == 1, let site = row.bytes(0, 0) else { return nil }
        var stored = StoredDomain(name: name, siteJSON: site)
        var wanted: [String]?
        if let known {
            // The digests first: a file `known` holds at the same digest is not fetched.
            wanted = []
            let digests = try connection.execute(
                "SELECT path, digest FROM domain_files WHERE domain = $1", [.text(name)])
            for index in 0..<digests.rowCount {
                guard let path = digests.text(index, 0), let digest = digests.bytes(index, 1) else { continue }
                if let bytes = known.bytes(name, path, digest: digest) {
                    stored.files[path] = bytes
                } else {
                    wanted?.append(path)
                }
            }
            if wanted?.isEmpty == true { return stored }
        }
        let files = try connection.execute(
            "SELECT path, bytes FROM domain_files WHERE domain = $1 AND ($2::text[] IS NULL OR path = ANY($2::text[]))",
            [.text(name), wanted.map { .text(Self.textArray($0)) }])
        for index in 0..<files.rowCount {
            if let path = files.text(index, 0), let bytes = files.bytes(index, 1) { stored.files[path] = bytes }
        }
        return stored
    }

    /// The actor of the history entries `store push` writes.
    public static let pushActor = "store push"

    /// Writes `domain` whole (its site.json and exactly its files) in one transaction, with its history entry
    /// (``recordRevision(_:_:actor:summary:siteJSON:policy:)``, by ``pushActor``); returns the change id.
    @discardableResult
    public func put(_ domain: StoredDomain, summary: String = "pushed") throws -> Int64 {
        try recordChange(.domain, domain.name) { change in
            try connection.execute(
                """
                INSERT INTO domains (name, site_json, change_id, shard_hash) VALUES ($1, $2, $3::bigint, $4::bigint)
                ON CONFLICT (name) DO UPDATE SET site_json = excluded.site_json, change_id = excluded.change_id
                """, [.text(domain.name), .bytes(domain.siteJSON), .integer(change), .integer(Shard.hash(domain.name))])
            try connection.execute("DELETE FROM domain_files WHERE domain = $1", [.text(domain.name)])
            for (path, bytes) in domain.files.sorted(by: { $0.key < $1.key }) {
                try connection.execute(
                    "INSERT INTO domain_files (domain, path, bytes) VALUES ($1, $2, $3)",
                    [.text(domain.name), .text(path), .bytes(bytes)])
            }
            try recordRevision(
                domain.name, change, actor: Self.pushActor, summary: summary, siteJSON: domain.siteJSON)
        }
    }

    /// Deletes the domain `name` and its files in one transaction, with its history entry; returns the change id.
    @discardableResult
    public func deleteDomain(_ name: String) throws -> Int64 {
        try recordChange(.domainRemoved, name) { change in
            try connection.execute("DELETE FROM domains WHERE name = $1", [.text(name)])
            try recordRevision(name, change, actor: Self.pushActor, summary: "removed", siteJSON: nil)
        }
    }

    // MARK: Certificates

    /// The columns of `certificates` holding each file.
    static let columns: [(CertificateFile, String)] = [
        (.chain, "fullchain"), (.privateKey, "privkey_sealed"), (.staple, "ocsp"), (.acmeRecord, "acme_json"),
    ]

    /// The names of every stored certificate, sorted.
    public func certificateNames() throws -> [String] {
        let result = try connection.execute("SELECT name FROM certificates ORDER BY name")
        return (0..<result.rowCount).compactMap { result.text($0, 0) }
    }

    /// The names of the certificates the server obtained by ACME (a row with its `acme_json` record), sorted.
    public func obtainedCertificateNames() throws -> [String] {
        let result = try connection.execute("SELECT name FROM certificates WHERE acme_json IS NOT NULL ORDER BY name")
        return (0..<result.rowCount).compactMap { result.text($0, 0) }
    }

    /// The certificate `name` (its private key still sealed), or `nil` when the store has none.
    ///
    /// - Throws: ``StoreError`` naming the row when a file is over ``StorePush/maximumCertificateFileBytes``, checked
    ///   on the sizes the database reports before any byte is read.
    public func certificate(_ name: String) throws -> StoredCertificate? {
        let sizes = try connection.execute(
            """
            SELECT greatest(coalesce(octet_length(fullchain), 0), coalesce(octet_length(privkey_sealed), 0),
                coalesce(octet_length(ocsp), 0), coalesce(octet_length(acme_json), 0))
            FROM certificates WHERE name = $1
            """, [.text(name)])
        guard sizes.rowCount == 1 else { return nil }
        let largest = Int(sizes.text(0, 0) ?? "") ?? Int.max
        // A sealed key is the key plus the sealed format's header and tag.
        guard largest <= StorePush.maximumCertificateFileBytes + SealedFormat.overhead else {
            throw StoreError(
                "the store at \(connection.server) holds a file of \(largest) bytes for certificate \(name), over the "
                    + "\(StorePush.maximumCertificateFileBytes) a certificate file may have; nothing of it is read; fix: "
                    + "push the certificate again")
        }
        let row = try connection.execute(
            "SELECT fullchain, privkey_sealed, ocsp, acme_json FROM certificates WHERE name = $1", [.text(name)])
        guard row.rowCount == 1 else { return nil }
        var files: [CertificateFile: [UInt8]] = [:]
        for (index, (file, _)) in Self.columns.enumerated() { files[file] = row.bytes(0, index) }
        return StoredCertificate(name: name, files: files)
    }

    /// Writes `certificate` whole (a file it lacks is `NULL`) in one transaction; its private key must already be
    /// sealed. Returns the change id.
    @discardableResult
    public func put(_ certificate: StoredCertificate) throws -> Int64 {
        try recordChange(.certificate, certificate.name) { change in
            let values = Self.columns.map { file, _ in certificate.files[file].map(PostgresValue.bytes) }
            try connection.execute(
                """
                INSERT INTO certificates (name, fullchain, privkey_sealed, ocsp, acme_json, change_id, shard_hash)
                VALUES ($1, $2, $3, $4, $5, $6::bigint, $7::bigint)
                ON CONFLICT (name) DO UPDATE SET fullchain = excluded.fullchain,
                    privkey_sealed = excluded.privkey_sealed, ocsp = excluded.ocsp, acme_json = excluded.acme_json,
                    change_id = excluded.change_id
                """, [.text(certificate.name)] + values + [.integer(change), .integer(Shard.hash(certificate.name))])
        }
    }

    /// Deletes the certificate `name` in one transaction; returns the change id.
    @discardableResult
    public func deleteCertificate(_ name: String) throws -> Int64 {
        try recordChange(.certificateRemoved, name) { _ in
            try connection.execute("DELETE FROM certificates WHERE name = $1", [.text(name)])
        }
    }

    // MARK: Changes

    /// The highest change id (0 when there is none).
    public func lastChange() throws -> Int64 {
        let result = try connection.execute("SELECT coalesce(max(id), 0) FROM changes")
        return Int64(result.text(0, 0) ?? "0") ?? 0
    }

    /// What a row of `changes` says changed.
    enum ChangeKind: String, Sendable {
        case domain
        case domainRemoved = "domain-removed"
        case certificate
        case certificateRemoved = "certificate-removed"
    }

    /// Runs `write` in one transaction that takes ``StoreSchema/changeLockKey``, appends a `changes` row for `name`
    /// (its id is handed to `write`) and ends by announcing that id on ``StoreSchema/channel``; returns the id.
    private func recordChange(_ kind: ChangeKind, _ name: String, _ write: (Int64) throws -> Void) throws -> Int64 {
        try connection.transaction {
            try connection.execute("SELECT pg_advisory_xact_lock($1::bigint)", [.integer(StoreSchema.changeLockKey)])
            let result = try connection.execute(
                "INSERT INTO changes (kind, name) VALUES ($1, $2) RETURNING id", [.text(kind.rawValue), .text(name)])
            guard let change = result.text(0, 0).flatMap(Int64.init) else {
                throw StoreError("the store at \(connection.server) returned no change id")
            }
            try write(change)
            try connection.notify(StoreSchema.channel, payload: String(change))
            return change
        }
    }
}
