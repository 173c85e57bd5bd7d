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

    /// What the store holds of a domain, as a push compares a folder with it: no file's bytes.
    struct DomainDigests: Sendable, Equatable {
        /// Its site.json, or `nil` when it is over ``SiteConfigLoader/maximumConfigBytes`` (so not read).
        var siteJSON: [UInt8]?
        /// The SHA-256 digest of each of its files, by path.
        var files: [String: [UInt8]] = [:]
    }

    /// What the store holds of each of `names` it has, by name: each site.json and its files' digests, a statement's
    /// worth of names and at most ``batchBytes`` of site.json at a time.
    func domainDigests(_ names: [String]) throws -> [String: DomainDigests] {
        var found: [String: DomainDigests] = [:]
        for group in Self.batches(names) {
            let array = PostgresValue.text(Self.textArray(group))
            let sizes = try connection.execute(
                "SELECT name, octet_length(site_json) FROM domains WHERE name = ANY($1::text[])", [array])
            var readable: [(name: String, size: Int)] = []
            for row in 0..<sizes.rowCount {
                guard let name = sizes.text(row, 0) else { continue }
                found[name] = DomainDigests(siteJSON: nil)
                let size = Int(sizes.text(row, 1) ?? "") ?? Int.max
                if size <= SiteConfigLoader.maximumConfigBytes { readable.append((name, size)) }
            }
            for batch in Self.batches(readable, size: \.size) {
                let rows = try connection.execute(
                    "SELECT name, site_json FROM domains WHERE name = ANY($1::text[]) AND octet_length(site_json) <= $2",
                    [.text(Self.textArray(batch.map(\.name))), .integer(SiteConfigLoader.maximumConfigBytes)])
                for row in 0..<rows.rowCount {
                    if let name = rows.text(row, 0) { found[name]?.siteJSON = rows.bytes(row, 1) }
                }
            }
            let digests = try connection.execute(
                "SELECT domain, path, digest FROM domain_files WHERE domain = ANY($1::text[])", [array])
            for row in 0..<digests.rowCount {
                guard let name = digests.text(row, 0), let path = digests.text(row, 1),
                    let digest = digests.bytes(row, 2)
                else { continue }
                found[name]?.files[path] = digest
            }
        }
        return found
    }

    /// The actor of the history entries `store push` writes.
    public static let pushActor = "store push"

    /// Writes `domain` whole (its site.json and exactly its files) in one transaction, with its history entry
    /// (``recordRevision(_:_:actor:summary:siteJSON:policy:)``, by ``pushActor``); returns the change id.
    @discardableResult
    public func put(_ domain: StoredDomain, summary: String = "pushed") throws -> Int64 {
        try put([DomainWrite(domain, summary: summary)])[0]
    }

    /// Deletes the domain `name` and its files in one transaction, with its history entry; returns the change id.
    @discardableResult
    public func deleteDomain(_ name: String) throws -> Int64 {
        try deleteDomains([name])[0]
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
        try certificates([name])[name]
    }

    /// The certificates among `names` the store has (private keys still sealed), by name, fetched a statement's
    /// worth of names and at most ``batchBytes`` at a time.
    ///
    /// - Throws: ``StoreError`` naming the row when a file is over ``StorePush/maximumCertificateFileBytes``, checked
    ///   on the sizes the database reports before any byte is read.
    public func certificates(_ names: [String]) throws -> [String: StoredCertificate] {
        // A sealed key is the key plus the sealed format's header and tag.
        let cap = StorePush.maximumCertificateFileBytes + SealedFormat.overhead
        var found: [String: StoredCertificate] = [:]
        for group in Self.batches(names) {
            let sizes = try connection.execute(
                """
                SELECT name, greatest(coalesce(octet_length(fullchain), 0), coalesce(octet_length(privkey_sealed), 0),
                    coalesce(octet_length(ocsp), 0), coalesce(octet_length(acme_json), 0)),
                    coalesce(octet_length(fullchain), 0) + coalesce(octet_length(privkey_sealed), 0)
                        + coalesce(octet_length(ocsp), 0) + coalesce(octet_length(acme_json), 0)
                FROM certificates WHERE name = ANY($1::text[])
                """, [.text(Self.textArray(group))])
            var rows: [(name: String, size: Int)] = []
            for row in 0..<sizes.rowCount {
                guard let name = sizes.text(row, 0) else { continue }
                let largest = Int(sizes.text(row, 1) ?? "") ?? Int.max
                guard largest <= cap else {
                    throw StoreError(
                        "the store at \(connection.server) holds a file of \(largest) bytes for certificate \(name), "
                            + "over the \(StorePush.maximumCertificateFileBytes) a certificate file may have; nothing "
                            + "of it is read; fix: push the certificate again")
                }
                rows.append((name, Int(sizes.text(row, 2) ?? "") ?? Int.max))
            }
            for batch in Self.batches(rows, size: \.size) {
                // The cap is checked again as the bytes are read: a row written since the sizes were read is not
                // fetched over it.
                let result = try connection.execute(
                    """
                    SELECT name, fullchain, privkey_sealed, ocsp, acme_json FROM certificates
                    WHERE name = ANY($1::text[]) AND greatest(coalesce(octet_length(fullchain), 0),
                        coalesce(octet_length(privkey_sealed), 0), coalesce(octet_length(ocsp), 0),
                        coalesce(octet_length(acme_json), 0)) <= $2::integer
                    """, [.text(Self.textArray(batch.map(\.name))), .integer(cap)])
                found.merge(Self.certificates(in: result)) { _, read in read }
            }
        }
        return found
    }

    /// Writes `certificate` whole (a file it lacks is `NULL`) in one transaction; its private key must already be
    /// sealed. Returns the change id.
    @discardableResult
    public func put(_ certificate: StoredCertificate) throws -> Int64 {
        try put([certificate])[0]
    }

    /// Deletes the certificate `name` in one transaction; returns the change id.
    @discardableResult
    public func deleteCertificate(_ name: String) throws -> Int64 {
        try deleteCertificates([name])[0]
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
}
