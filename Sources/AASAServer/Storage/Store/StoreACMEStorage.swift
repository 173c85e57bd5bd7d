import AASACore
import AASAOpenSSL
import AASAPostgres
import Foundation
import Logging
import Synchronization

/// ACME's state in the store, shared by every replica of a fleet (`serve --store --acme`): one account (its key
/// sealed with the store key), the certificates the fleet obtained (rows of `certificates` with their `acme_json`
/// record, so every replica's follower serves them within a second of the write), the pacing of new orders
/// (`acme_pacing`, read and written under `SELECT … FOR UPDATE`, so the fleet shares one bucket and one pause) and
/// each name's failures (`acme_orders`).
///
/// Ordering a certificate takes a session-level advisory lock for its name on a connection of its own: a replica
/// that dies mid-order loses its connection, and with it the lock, so another replica takes the order over.
///
/// A row of `acme_pacing` or `acme_orders` holding a value out of range (a store written past schema version 6's
/// constraints) is left out and logged once, naming the table, the row and the column (``ACMEStateProblems``): the
/// fleet goes on as if it were absent, and the row is written again at its next change.
final class StoreACMEStorage: ACMEStorage, @unchecked Sendable {
    /// The first key of every certificate's lock: "acme".
    static let lockClass: Int32 = 0x6163_6D65

    private let uri: String
    private let key: StoreKey
    /// `host:port/database`.
    let server: String
    private let replica: String
    /// The connection for reads and writes, and the one holding the locks; each used under its lock.
    private let work = NSLock()
    private var workStore: Store?
    private let locking = NSLock()
    private var lockConnection: PostgresConnection?
    /// Every certificate row's record (`nil`: the operator's), and the last change read into it.
    private let index = Mutex<(records: [String: CertificateRecord?], change: Int64)?>(nil)
    private let pacingSeen = Mutex<PacingState?>(nil)
    private let problems: ACMEStateProblems

    /// The state in the store at `uri`, private keys sealed with `key`; `replica` names the lock holder in
    /// `pg_stat_activity.application_name`. A row out of range is logged to `logger`.
    init(uri: String, key: StoreKey, replica: String, logger: Logger) {
        self.uri = uri
        self.key = key
        self.replica = replica
        server = PostgresConnection.server(of: uri)
        problems = ACMEStateProblems(logger: logger)
    }

    deinit {
        workStore?.connection.close()
        lockConnection?.close()
    }

    var location: String { server }

    func place(of domain: String) -> String { "certificate \(domain) of the store at \(server)" }

    // MARK: Connections

    /// Runs `body` on the work connection, connecting first when there is none; a failure drops the connection (the
    /// next call connects again) and becomes a storage failure naming the store and what was done.
    private func withStore<Value>(_ what: String, _ body: (Store) throws -> Value) throws(ACMEFailure) -> Value {
        work.lock()
        defer { work.unlock() }
        do {
            if workStore == nil {
                workStore = try Store(uri: uri, migrating: false, connectTimeout: .seconds(5))
                _ = try workStore?.connection.execute(
                    "SELECT set_config('application_name', $1, false)", [.text("aasa-acme " + replica)])
            }
            return try body(workStore!)
        } catch {
            if let store = workStore, !store.connection.isAlive {
                store.connection.close()
                workStore = nil
            }
            throw ACMEFailure(
                .storage, "the store could not \(what): \(error)", url: server,
                hint: "check that the database accepts connections; the server tries again")
        }
    }

    // MARK: Account

    /// The account's key as sealed in the store.
    static let accountContext = Array("acme/account.key".utf8)

    func account(email: String?, agreesToTerms: Bool) throws(ACMEFailure) -> ACMEAccount {
        let key = self.key
        let (accountKey, registrations) = try withStore("read the ACME account") { store in
            let connection = store.connection
            if try connection.execute("SELECT 1 FROM acme_account WHERE id = 1").rowCount == 0 {
                // Every replica starting together makes a key; the first insert wins and all read it back.
                let made = try PrivateKey.generate(.ecdsaP256)
                try connection.execute(
                    "INSERT INTO acme_account (id, key_sealed) VALUES (1, $1) ON CONFLICT (id) DO NOTHING",
                    [.bytes(try key.seal(Array(made.pemEncoded().utf8), context: Self.accountContext))])
            }
            let row = try connection.execute("SELECT key_sealed FROM acme_account WHERE id = 1")
            guard row.rowCount == 1, let sealed = row.bytes(0, 0) else { throw StoreError("acme_account has no key") }
            let pem = try key.open(sealed, context: Self.accountContext)
            let accountKey = try PrivateKey(pemEncoded: pem)
            let rows = try connection.execute("SELECT directory, url FROM acme_registrations")
            var registrations: [String: String] = [:]
            for index in 0..<rows.rowCount {
                if let directory = rows.text(index, 0), let url = rows.text(index, 1) { registrations[directory] = url }
            }
            return (accountKey, registrations)
        }
        return ACMEAccount(
            key: accountKey, email: email, agreesToTerms: agreesToTerms, registrations: registrations
        ) { [self] registrations throws(ACMEFailure) in
            try withStore("record the ACME account") { store in
                try store.connection.transaction {
                    try store.connection.execute("DELETE FROM acme_registrations")
                    for (directory, url) in registrations.sorted(by: { $0.key < $1.key }) {
                        try store.connection.execute(
                            "INSERT INTO acme_registrations (directory, url) VALUES ($1, $2)",
                            [.text(directory), .text(url)])
                    }
                }
            }
        }
    }

    // MARK: Certificates

    func refresh() {
        let known = index.withLock { $0?.change }
        let fresh = try? withStore("read the certificates' records") {
            store -> ([String: CertificateRecord?], [String], Int64) in
            let connection = store.connection
            let head = try store.lastChange()
            let rows = try connection.execute(
                """
                SELECT name, CASE WHEN octet_length(acme_json) <= $2::integer THEN acme_json END,
                    acme_json IS NULL
                FROM certificates WHERE change_id > $1::bigint
                """, [.integer(known ?? 0), .integer(CertificateDirectory.cap(of: .acmeRecord))])
            var records: [String: CertificateRecord?] = [:]
            for row in 0..<rows.rowCount {
                guard let name = rows.text(row, 0) else { continue }
                // No record is the operator's certificate; one over the record's cap (never read) or unreadable is
                // still the server's, as a folder's unreadable acme.json is.
                let operators = rows.text(row, 2) == "t"
                records[name] =
                    operators
                    ? .some(nil)
                    : rows.bytes(row, 1).flatMap { CertificateRecord(bytes: $0) }
                        ?? CertificateRecord(directoryURL: "", issued: .distantPast, names: [name])
            }
            var removed: [String] = []
            if let known {
                let gone = try connection.execute(
                    "SELECT name FROM changes WHERE id > $1::bigint AND kind = 'certificate-removed'",
                    [.integer(known)])
                removed = (0..<gone.rowCount).compactMap { gone.text($0, 0) }
            }
            return (records, removed, head)
        }
        guard let (records, removed, head) = fresh else { return }
        index.withLock { index in
            var current = index?.records ?? [:]
            for name in removed { current[name] = nil }
            for (name, record) in records { current[name] = record }
            index = (current, head)
        }
    }

    func record(of domain: String) -> CertificateRecord? {
        index.withLock { $0?.records[domain] ?? nil }
    }

    func hasOperatorCertificate(_ domain: String) -> Bool {
        index.withLock { index in
            guard let entry = index?.records[domain] else { return false }
            return entry == nil
        }
    }

    func leaf(of domain: String) -> X509Certificate? {
        let chain = try? withStore("read a certificate") { store in
            let row = try store.connection.execute(
                "SELECT fullchain FROM certificates WHERE name = $1", [.text(domain)])
            return row.rowCount == 1 ? row.bytes(0, 0) : nil
        }
        return chain.flatMap { $0 }.flatMap { try? X509Certificate(pemEncoded: $0) }
    }

    func save(chain: [UInt8], key: PrivateKey, domain: String, record: CertificateRecord) throws(ACMEFailure) {
        let storeKey = self.key
        try withStore("write the certificate of \(domain)") { store in
            let sealed = try storeKey.seal(Array(key.pemEncoded().utf8), context: Store.sealingContext(domain))
            try store.put(
                StoredCertificate(
                    name: domain, files: [.chain: chain, .privateKey: sealed, .acmeRecord: record.bytes]))
        }
        index.withLock { index in index?.records[domain] = .some(record) }
    }

    // MARK: Locks

    func lock(_ domain: String) throws(ACMEFailure) -> ACMELease? {
        let second = Self.lockKey(domain)
        locking.lock()
        defer { locking.unlock() }
        let taken: Bool
        do {
            if lockConnection.map({ !$0.isAlive }) ?? true {
                lockConnection?.close()
                let connection = try PostgresConnection(uri: uri, connectTimeout: .seconds(5))
                try connection.execute(
                    "SELECT set_config('application_name', $1, false)", [.text("aasa-acme-lock " + replica)])
                lockConnection = connection
            }
            let result = try lockConnection!.execute(
                "SELECT pg_try_advisory_lock($1::integer, $2::integer)",
                [.integer(Self.lockClass), .integer(second)])
            taken = result.text(0, 0) == "t"
        } catch {
            lockConnection?.close()
            lockConnection = nil
            throw ACMEFailure(
                .storage, "the store could not lock the order of \(domain): \(error)", url: server,
                hint: "check that the database accepts connections; the server tries again")
        }
        guard taken else { return nil }
        let connection = lockConnection
        return ACMELease { [self] in
            locking.lock()
            defer { locking.unlock() }
            // A connection replaced since lost its locks with it.
            guard let connection, connection === lockConnection else { return }
            _ = try? connection.execute(
                "SELECT pg_advisory_unlock($1::integer, $2::integer)", [.integer(Self.lockClass), .integer(second)])
        }
    }

    /// The second key of `domain`'s lock: its FNV-1a hash (a collision only makes two names wait for each other).
    static func lockKey(_ domain: String) -> Int32 {
        var hash: UInt32 = 0x811C_9DC5
        for byte in domain.utf8 { hash = (hash ^ UInt32(byte)) &* 0x0100_0193 }
        return Int32(bitPattern: hash)
    }

    // MARK: Pacing

    func pacing<Value>(_ body: (inout PacingState?) -> Value) throws(ACMEFailure) -> Value {
        var kept: PacingState?
        let value = try withStore("pace the orders") { store in
            try store.connection.transaction {
                let connection = store.connection
                let row = try connection.execute(
                    """
                    SELECT tokens, refilled_at, paused_until, pause_reason FROM acme_pacing WHERE id = 1 FOR UPDATE
                    """)
                var state: PacingState?
                if row.rowCount == 1 {
                    do {
                        state = try PacingState(
                            tokens: row.text(0, 0), refilledAt: row.text(0, 1), pausedUntil: row.text(0, 2),
                            pauseReason: row.text(0, 3))
                    } catch {
                        problems.report(
                            "acme_pacing (id 1) in the store at \(server)",
                            "\(error); it is left out: the bucket of new orders starts full, without a pause",
                            fix: "nothing to do: the server writes the row again at its next order")
                    }
                }
                let before = state
                let value = body(&state)
                if let state, state != before {
                    try connection.execute(
                        """
                        INSERT INTO acme_pacing (id, tokens, refilled_at, paused_until, pause_reason)
                        VALUES (1, $1::double precision, $2::double precision, $3::double precision, $4)
                        ON CONFLICT (id) DO UPDATE SET tokens = excluded.tokens, refilled_at = excluded.refilled_at,
                            paused_until = excluded.paused_until, pause_reason = excluded.pause_reason
                        """,
                        [
                            .text(String(state.tokens)), .text(String(state.refilledAt.timeIntervalSince1970)),
                            state.pausedUntil.map { .text(String($0.timeIntervalSince1970)) },
                            state.pauseReason.map(PostgresValue.text),
                        ])
                }
                kept = state
                return value
            }
        }
        pacingSeen.withLock { $0 = kept }
        return value
    }

    var lastPacing: PacingState? { pacingSeen.withLock { $0 } }

    // MARK: Failures

    func history(of domain: String) -> ACMEHistory? {
        let text = try? withStore("read the failures of \(domain)") { store in
            let row = try store.connection.execute(
                "SELECT history FROM acme_orders WHERE name = $1", [.text(domain)])
            return row.rowCount == 1 ? row.bytes(0, 0) : nil
        }
        guard let bytes = text.flatMap({ $0 }) else { return nil }
        let place = "acme_orders row \(domain.prefix(80)) in the store at \(server)"
        let fix = "nothing to do: the server writes the row again at the name's next order"
        guard let json = JSONValue.parse(bytes) else {
            problems.report(place, "history is not JSON; it is left out: the name's failures count from 0", fix: fix)
            return nil
        }
        do {
            return try ACMEHistory(json: json)
        } catch {
            problems.report(place, "history: \(error); it is left out: the name's failures count from 0", fix: fix)
            return nil
        }
    }

    func historiesWithChallengeRecords() -> [String: ACMEHistory] {
        // The compact JSON of a history with records holds this text; the histories without stay unread.
        let rows = try? withStore("read the dns-01 records left in the store") { store in
            let result = try store.connection.execute(
                "SELECT name FROM acme_orders WHERE position($1::bytea IN history) > 0",
                [.bytes(Array(#""challengeRecords":[{"#.utf8))])
            return (0..<result.rowCount).compactMap { result.text($0, 0) }
        }
        var found: [String: ACMEHistory] = [:]
        for name in rows ?? [] {
            if let history = history(of: name), !history.challengeRecords.isEmpty { found[name] = history }
        }
        return found
    }

    func save(history: ACMEHistory?, of domain: String) {
        _ = try? withStore("record the failures of \(domain)") { store in
            if let history {
                try store.connection.execute(
                    """
                    INSERT INTO acme_orders (name, history) VALUES ($1, $2)
                    ON CONFLICT (name) DO UPDATE SET history = excluded.history
                    """, [.text(domain), .bytes(JSONWriter(style: .compact).bytes(history.json))])
            } else {
                try store.connection.execute("DELETE FROM acme_orders WHERE name = $1", [.text(domain)])
            }
        }
    }
}
