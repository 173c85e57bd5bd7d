import AASACore
import AASAPostgres

/// The writes of many rows in one transaction (what `store push` sends): every row has its own `changes` row and
/// announcement, as a single write has, and the rows go in multi-row statements of at most
/// ``parametersPerStatement`` parameters and about ``batchBytes`` of bytes each.
extension Store {
    /// The most parameters one statement binds (PostgreSQL takes at most 65,535).
    static let parametersPerStatement = 30_000

    /// A domain to write whole, with the summary of its history entry.
    public struct DomainWrite: Sendable {
        /// The domain, its site.json and exactly its files.
        public var domain: StoredDomain
        /// The history entry's summary.
        public var summary: String
        /// The stamp of the folder the domain was read from (``FolderStamp``), kept with the row, or `nil` for none.
        var stamp: String?

        /// A write of `domain` summarised by `summary`.
        public init(_ domain: StoredDomain, summary: String) {
            self.domain = domain
            self.summary = summary
        }
    }

    /// Writes each domain of `writes` whole (its site.json and exactly its files), each with its change and its
    /// history entry by ``pushActor``, all in one transaction; returns the change ids in the order of `writes`.
    ///
    /// - Precondition: no two writes name the same domain.
    @discardableResult
    public func put(_ writes: [DomainWrite]) throws -> [Int64] {
        let names = writes.map(\.domain.name)
        return try recordChanges(.domain, names) { changes in
            try insertRows(
                "INSERT INTO domains (name, site_json, change_id, shard_hash)",
                casts: ["", "", "::bigint", "::bigint"],
                rows: zip(writes, changes).map { write, change in
                    let name = write.domain.name
                    return [.text(name), .bytes(write.domain.siteJSON), .integer(change), .integer(Shard.hash(name))]
                },
                tail: " ON CONFLICT (name) DO UPDATE SET site_json = excluded.site_json, change_id = excluded.change_id"
            )
            try insertStamps(
                .domains,
                zip(writes, changes).compactMap { write, change in
                    write.stamp.map { NewStamp(name: write.domain.name, stamp: $0, seen: change) }
                })
            try execute("DELETE FROM domain_files WHERE domain = ANY($1::text[])", forNamesIn: names)
            try insertRows(
                "INSERT INTO domain_files (domain, path, bytes)", casts: ["", "", ""],
                rows: writes.flatMap { write in
                    write.domain.files.sorted { $0.key < $1.key }.map { path, bytes in
                        [.text(write.domain.name), .text(path), .bytes(bytes)]
                    }
                })
            try recordRevisions(
                zip(writes, changes).map { write, change in
                    Revision(
                        name: write.domain.name, change: change, summary: write.summary,
                        siteJSON: write.domain.siteJSON)
                }, actor: Self.pushActor)
        }
    }

    /// Deletes the domains `names` and their files, each with its change and its history entry, in one transaction;
    /// returns the change ids in the order of `names`.
    @discardableResult
    public func deleteDomains(_ names: [String]) throws -> [Int64] {
        try recordChanges(.domainRemoved, names) { changes in
            try execute("DELETE FROM domains WHERE name = ANY($1::text[])", forNamesIn: names)
            try recordRevisions(
                zip(names, changes).map { Revision(name: $0, change: $1, summary: "removed", siteJSON: nil) },
                actor: Self.pushActor)
        }
    }

    /// Writes each certificate of `certificates` whole (a file it lacks is `NULL`), each with its change, in one
    /// transaction; their private keys must already be sealed. Returns the change ids in the order given.
    @discardableResult
    public func put(_ certificates: [StoredCertificate]) throws -> [Int64] {
        try put(certificates, stamps: [:])
    }

    /// ``put(_:)-([StoredCertificate])``, each certificate named in `stamps` with the stamp of the folder it was read
    /// from (``FolderStamp``).
    @discardableResult
    func put(_ certificates: [StoredCertificate], stamps: [String: String]) throws -> [Int64] {
        try recordChanges(.certificate, certificates.map(\.name)) { changes in
            try insertRows(
                "INSERT INTO certificates (name, fullchain, privkey_sealed, ocsp, acme_json, change_id, shard_hash)",
                casts: ["", "", "", "", "", "::bigint", "::bigint"],
                rows: zip(certificates, changes).map { certificate, change in
                    [.text(certificate.name)]
                        + Self.columns.map { file, _ in certificate.files[file].map(PostgresValue.bytes) }
                        + [.integer(change), .integer(Shard.hash(certificate.name))]
                },
                tail: """
                     ON CONFLICT (name) DO UPDATE SET fullchain = excluded.fullchain,
                        privkey_sealed = excluded.privkey_sealed, ocsp = excluded.ocsp, acme_json = excluded.acme_json,
                        change_id = excluded.change_id
                    """)
            try insertStamps(
                .certificates,
                zip(certificates, changes).compactMap { certificate, change in
                    stamps[certificate.name].map { NewStamp(name: certificate.name, stamp: $0, seen: change) }
                })
        }
    }

    /// Deletes the certificates `names`, each with its change, in one transaction; returns the change ids in the
    /// order of `names`.
    @discardableResult
    public func deleteCertificates(_ names: [String]) throws -> [Int64] {
        try recordChanges(.certificateRemoved, names) { _ in
            try execute("DELETE FROM certificates WHERE name = ANY($1::text[])", forNamesIn: names)
        }
    }

    /// Runs `write` in one transaction that takes ``StoreSchema/changeLockKey``, appends a `changes` row of `kind` for
    /// each of `names` (their ids, in the order of `names`, handed to `write`) and ends by announcing each id on
    /// ``StoreSchema/channel``; returns the ids. Nothing is done for no names.
    func recordChanges(_ kind: ChangeKind, _ names: [String], _ write: ([Int64]) throws -> Void) throws -> [Int64] {
        guard !names.isEmpty else { return [] }
        return try connection.transaction {
            try connection.execute("SELECT pg_advisory_xact_lock($1::bigint)", [.integer(StoreSchema.changeLockKey)])
            var changes: [Int64] = []
            changes.reserveCapacity(names.count)
            for batch in Self.batches(names) {
                // The ids follow the order of the names: each row takes the sequence's next value as it is inserted.
                let result = try connection.execute(
                    """
                    INSERT INTO changes (kind, name)
                    SELECT $1, name FROM unnest($2::text[]) WITH ORDINALITY AS given(name, position) ORDER BY position
                    RETURNING id
                    """, [.text(kind.rawValue), .text(Self.textArray(batch))])
                let ids = (0..<result.rowCount).compactMap { result.text($0, 0).flatMap(Int64.init) }.sorted()
                guard ids.count == batch.count else {
                    throw StoreError(
                        "the store at \(connection.server) returned \(ids.count) change ids for \(batch.count)")
                }
                changes += ids
            }
            try write(changes)
            for batch in Self.batches(changes) {
                try connection.notify(StoreSchema.channel, payloads: batch.map { String($0) })
            }
            return changes
        }
    }

    /// Runs `sql` once for each statement's worth of `names`, `$1` the batch as a text array.
    func execute(_ sql: String, forNamesIn names: [String]) throws {
        for batch in Self.batches(names) { try connection.execute(sql, [.text(Self.textArray(batch))]) }
    }

    /// Runs `head VALUES (…), (…) tail` for `rows` (each a row of parameters, `casts` appended to each parameter of
    /// its column), as many statements as ``parametersPerStatement`` and ``batchBytes`` make.
    func insertRows(_ head: String, casts: [String], rows: [[PostgresValue?]], tail: String = "") throws {
        let perStatement = max(1, Self.parametersPerStatement / max(1, casts.count))
        for batch in Self.batches(rows, maximumCount: perStatement, size: Self.byteCount) {
            var sql = head + " VALUES "
            var parameters: [PostgresValue?] = []
            parameters.reserveCapacity(batch.count * casts.count)
            for (index, row) in batch.enumerated() {
                let first = parameters.count
                sql +=
                    (index == 0 ? "(" : ", (")
                    + casts.enumerated().map { "$\(first + $0.offset + 1)\($0.element)" }.joined(separator: ", ") + ")"
                parameters += row
            }
            try connection.execute(sql + tail, parameters)
        }
    }

    /// The bytes a row of parameters sends.
    private static func byteCount(_ row: [PostgresValue?]) -> Int {
        row.reduce(0) { total, value in
            switch value {
            case .text(let text): total + text.utf8.count
            case .bytes(let bytes): total + bytes.count
            case nil: total
            }
        }
    }
}
