import AASACore
import AASAOpenSSL
import AASAPostgres
import Foundation

/// What a replica reads of the store: every row of a shard, or the rows named, with their revisions; the bytes in
/// batches of at most ``batchBytes``, after the sizes the database reports were checked against the caps a folder
/// has, so no row and no batch costs more memory than the caps allow.
extension Store {
    /// Rows listed per statement.
    static let listingPageRows = 5_000
    /// Names per statement that selects rows by name.
    static let namesPerStatement = 1_000
    /// The most bytes one statement fetches (a row over it is fetched alone, and is within a cap).
    static let batchBytes = 16 << 20

    /// A row as a listing found it: its revision, how many bytes fetching it reads, and why it is not read.
    struct Listed: Sendable {
        var name: String
        var changeID: Int64
        var changedAt: Date
        var size: Int
        var files = 0
        var refusal: StoreError?
    }

    /// The domains of `shard` (every one with `nil`), or those of `names` among them, as the listing finds them:
    /// revisions and sizes, no bytes; a row over a folder's caps carries its refusal. A domain's revision here is
    /// the later of the change that wrote its site.json (`change_id`) and the one that last wrote one of its files
    /// through the tenant API (`files_change_id`), so a page write reloads it on every replica.
    ///
    /// - Throws: ``PostgresError`` when the store fails.
    func listDomains(shard: Shard?, names: Set<String>? = nil) throws -> [Listed] {
        let pages = PageLoader()
        let caps = [
            SiteConfigLoader.maximumConfigBytes, pages.maximumFiles + 1,
            max(pages.maximumFileBytes, pages.maximumTemplateBytes),
            pages.maximumTotalBytes + pages.maximumTemplateBytes,
        ]
        let what = ["bytes of site.json", "files", "bytes in one file", "bytes of files in all"]
        var listed: [Listed] = []
        try list(
            shard: shard, names: names,
            sql: """
                SELECT d.name, c.id, extract(epoch FROM c.at)::float8, octet_length(d.site_json), count(f.path),
                    coalesce(max(octet_length(f.bytes)), 0), coalesce(sum(octet_length(f.bytes)), 0)
                FROM domains d JOIN changes c ON c.id = greatest(d.change_id, d.files_change_id)
                    LEFT JOIN domain_files f ON f.domain = d.name
                WHERE d.name > $1 AND d.shard_hash >= $2::bigint AND d.shard_hash < $3::bigint
                    AND ($5::text[] IS NULL OR d.name = ANY($5::text[]))
                GROUP BY d.name, c.id, c.at ORDER BY d.name LIMIT $4::integer
                """
        ) { name, revision, result, row in
            let figures = (3..<7).map { Int(result.text(row, $0) ?? "") ?? Int.max }
            var entry = Listed(
                name: name, revision: revision, changeIDText: result.text(row, 1), size: figures[0] &+ figures[3],
                files: figures[1],
                what: "domain", fix: "write the domain again")
            if entry.refusal == nil, let over = figures.indices.first(where: { figures[$0] > caps[$0] }) {
                entry.refusal = StoreError(
                    "\(name)/site.json: error: the store at \(connection.server) holds \(figures[over]) \(what[over]) "
                        + "for domain \(name), over the \(caps[over]) a domain folder may hold; nothing of it is read; "
                        + "fix: push the domain again")
            }
            listed.append(entry)
        }
        return listed
    }

    /// The bytes of the domains `batch` lists (one batch of ``batches(_:maximumCount:size:)``), by name; a row
    /// deleted since the listing is missing. A domain's files are listed with their digests first, and only those whose digest
    /// `known` does not hold are fetched; `known` then holds what the domains hold now (as far as its bound allows).
    func fetchDomains(_ batch: [Listed], known: StoredFiles) throws -> [String: StoredDomain] {
        var domains: [String: StoredDomain] = [:]
        let sites = try connection.execute(
            "SELECT name, site_json FROM domains WHERE name = ANY($1::text[])",
            [.text(Self.textArray(batch.map(\.name)))])
        for row in 0..<sites.rowCount {
            guard let name = sites.text(row, 0), let bytes = sites.bytes(row, 1) else { continue }
            domains[name] = StoredDomain(name: name, siteJSON: bytes)
        }
        let withFiles = batch.filter { $0.files > 0 }.map(\.name)
        known.forget(batch.filter { $0.files == 0 }.map(\.name))
        guard !withFiles.isEmpty else { return domains }
        var kept: [String: [String: StoredFiles.File]] = [:]
        var wanted: (domains: [String], paths: [String]) = ([], [])
        let digests = try connection.execute(
            "SELECT domain, path, digest FROM domain_files WHERE domain = ANY($1::text[])",
            [.text(Self.textArray(withFiles))])
        for row in 0..<digests.rowCount {
            guard let name = digests.text(row, 0), let path = digests.text(row, 1), let digest = digests.bytes(row, 2),
                domains[name] != nil
            else { continue }
            if let bytes = known.bytes(name, path, digest: digest) {
                domains[name]?.files[path] = bytes
                kept[name, default: [:]][path] = StoredFiles.File(digest: digest, bytes: bytes)
            } else {
                wanted.domains.append(name)
                wanted.paths.append(path)
            }
        }
        var fetched: [String: Int] = [:]
        if !wanted.paths.isEmpty {
            let files = try connection.execute(
                """
                SELECT domain, path, bytes, digest FROM domain_files
                WHERE (domain, path) IN (SELECT * FROM unnest($1::text[], $2::text[]))
                """, [.text(Self.textArray(wanted.domains)), .text(Self.textArray(wanted.paths))])
            for row in 0..<files.rowCount {
                guard let name = files.text(row, 0), let path = files.text(row, 1), let bytes = files.bytes(row, 2),
                    let digest = files.bytes(row, 3), domains[name] != nil
                else { continue }
                domains[name]?.files[path] = bytes
                kept[name, default: [:]][path] = StoredFiles.File(digest: digest, bytes: bytes)
                fetched[name, default: 0] += bytes.count
            }
        }
        for name in withFiles {
            known.keep(name, kept[name] ?? [:], fetchedBytes: fetched[name] ?? 0)
        }
        return domains
    }

    /// The certificates a replica of `shard` reads (every one with `nil`), or those of `names` among them, as the
    /// listing finds them: a certificate named after a domain is read by that domain's shard, any other (`default`,
    /// a wildcard's folder) by every shard.
    func listCertificates(shard: Shard?, names: Set<String>? = nil) throws -> [Listed] {
        let cap = StorePush.maximumCertificateFileBytes + SealedFormat.overhead
        var listed: [Listed] = []
        try list(
            shard: shard, names: names,
            sql: """
                SELECT r.name, r.change_id, extract(epoch FROM c.at)::float8,
                    greatest(coalesce(octet_length(r.fullchain), 0), coalesce(octet_length(r.privkey_sealed), 0),
                        coalesce(octet_length(r.ocsp), 0), coalesce(octet_length(r.acme_json), 0)),
                    coalesce(octet_length(r.fullchain), 0) + coalesce(octet_length(r.privkey_sealed), 0)
                        + coalesce(octet_length(r.ocsp), 0) + coalesce(octet_length(r.acme_json), 0)
                FROM certificates r JOIN changes c ON c.id = r.change_id
                WHERE r.name > $1 AND ($5::text[] IS NULL OR r.name = ANY($5::text[]))
                    AND ((r.shard_hash >= $2::bigint AND r.shard_hash < $3::bigint)
                        OR NOT EXISTS (SELECT 1 FROM domains d WHERE d.name = r.name))
                ORDER BY r.name LIMIT $4::integer
                """
        ) { name, revision, result, row in
            let largest = Int(result.text(row, 3) ?? "") ?? Int.max
            var entry = Listed(
                name: name, revision: revision, changeIDText: result.text(row, 1),
                size: Int(result.text(row, 4) ?? "") ?? Int.max,
                what: "certificate", fix: "push the certificate again")
            if entry.refusal == nil, largest > cap {
                entry.refusal = StoreError(
                    "certificate \(name): error: the store at \(connection.server) holds a file of \(largest) bytes for "
                        + "it, over the \(StorePush.maximumCertificateFileBytes) a certificate file may have; nothing "
                        + "of it is read; fix: push the certificate again")
            }
            listed.append(entry)
        }
        return listed
    }

    /// The bytes of the certificates `batch` lists, by name (private keys sealed).
    func fetchCertificates(_ batch: [Listed]) throws -> [String: StoredCertificate] {
        let result = try connection.execute(
            "SELECT name, fullchain, privkey_sealed, ocsp, acme_json FROM certificates WHERE name = ANY($1::text[])",
            [.text(Self.textArray(batch.map(\.name)))])
        return Self.certificates(in: result)
    }

    /// The certificates of `result`'s rows (columns: the name, then the files of ``columns`` in their order), by name.
    static func certificates(in result: PostgresResult) -> [String: StoredCertificate] {
        var certificates: [String: StoredCertificate] = [:]
        for row in 0..<result.rowCount {
            guard let name = result.text(row, 0) else { continue }
            var files: [CertificateFile: [UInt8]] = [:]
            for (index, (file, _)) in Self.columns.enumerated() { files[file] = result.bytes(row, index + 1) }
            certificates[name] = StoredCertificate(name: name, files: files)
        }
        return certificates
    }

    /// The changes after `id`, oldest first, at most `limit`.
    func changes(after id: Int64, limit: Int) throws -> [(id: Int64, kind: ChangeKind?, name: String)] {
        let result = try connection.execute(
            "SELECT id, kind, name FROM changes WHERE id > $1::bigint ORDER BY id LIMIT $2::integer",
            [.integer(id), .integer(limit)])
        return (0..<result.rowCount).compactMap { row in
            guard let id = result.text(row, 0).flatMap(Int64.init), let name = result.text(row, 2) else { return nil }
            return (id, result.text(row, 1).flatMap(ChangeKind.init(rawValue:)), name)
        }
    }

    /// Runs the listing `sql` page by page (parameters: the last name of the previous page, the shard's hash range,
    /// the page size, the names or `NULL`; columns: the name, the change id, its time, then the listing's own),
    /// handing each row to `take` with its name and revision, or why the revision is out of range
    /// (``StoredRevision/read(changeID:epochSeconds:)``). Names are selected a statement's worth at a time.
    private func list(
        shard: Shard?, names: Set<String>?, sql: String,
        take: (_ name: String, _ revision: Result<StoredRevision, CheckedNumber.Failure>, PostgresResult, Int) throws
            -> Void
    ) throws {
        let range = shard?.hashRange ?? 0..<(1 << 32)
        let groups: [[String]?] = names.map { Self.batches($0.sorted()) } ?? [nil]
        for group in groups {
            var after = ""
            while true {
                let page = try connection.execute(
                    sql,
                    [
                        .text(after), .integer(range.lowerBound), .integer(range.upperBound),
                        .integer(Self.listingPageRows), group.map { .text(Self.textArray($0)) },
                    ])
                for row in 0..<page.rowCount {
                    guard let name = page.text(row, 0) else { continue }
                    let revision = Result { () throws(CheckedNumber.Failure) in
                        try StoredRevision.read(changeID: page.text(row, 1), epochSeconds: page.text(row, 2))
                    }
                    try take(name, revision, page, row)
                }
                guard page.rowCount == Self.listingPageRows, let last = page.text(page.rowCount - 1, 0) else { break }
                after = last
            }
        }
    }

    /// `rows` in consecutive batches of at most ``batchBytes`` by `size` (a row over it is a batch of its own) and at
    /// most `maximumCount` rows.
    static func batches<Row>(_ rows: [Row], maximumCount: Int = namesPerStatement, size: (Row) -> Int = { _ in 0 })
        -> [[Row]]
    {
        var batches: [[Row]] = []
        var current: [Row] = []
        var bytes = 0
        for row in rows {
            let rowBytes = size(row)
            if !current.isEmpty && (bytes + rowBytes > batchBytes || current.count >= maximumCount) {
                batches.append(current)
                current = []
                bytes = 0
            }
            current.append(row)
            bytes += rowBytes
        }
        if !current.isEmpty { batches.append(current) }
        return batches
    }

    /// `names` as a PostgreSQL array literal of text (`{"a","b"}`), each element quoted and escaped: a parameter's
    /// value, never SQL.
    static func textArray(_ names: [String]) -> String { PostgresValue.arrayLiteral(names) }
}

extension Store.Listed {
    /// The listing of the `what` (`domain`, `certificate`) `name` at `revision`; a revision out of range is the row's
    /// refusal (``Rule/storedValue``), whose fix dates the change `changeIDText` and ends with `fix`.
    init(
        name: String, revision: Result<StoredRevision, CheckedNumber.Failure>, changeIDText: String?, size: Int,
        files: Int = 0, what: String, fix: String
    ) {
        switch revision {
        case .success(let revision):
            self.init(name: name, changeID: revision.changeID, changedAt: revision.changedAt, size: size, files: files)
        case .failure(let failure):
            self.init(name: name, changeID: 0, changedAt: .distantPast, size: size, files: files)
            refusal = StoreError(
                "the \(what) row \(name) is not read: \(failure)", rule: .storedValue,
                hint: "give the change a time (UPDATE changes SET at = now() WHERE id = \(changeIDText ?? "…"); "
                    + "schema version 6 refuses such a time), then \(fix) or restart the replicas")
        }
    }
}
