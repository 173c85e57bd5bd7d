import AASAPostgres
import AASATestSupport
import Foundation
import Synchronization
import Testing

/// A real PostgreSQL cluster, shared by the suite: parameters, transactions, advisory locks, LISTEN/NOTIFY.
@Suite(.storeCluster)
struct PostgresConnectionTests {
    static let parameterCases: [(name: String, value: PostgresValue?, cast: String)] = [
        ("plain text", .text("shop.example"), "text"),
        ("quotes and an injection attempt", .text(#"it's "quoted" '; DROP TABLE items; --"#), "text"),
        ("backslashes and unicode", .text(#"C:\path \x00 é 日本 🙂"#), "text"),
        ("empty text", .text(""), "text"),
        ("every byte 0x00...0xFF", .bytes(Array(0...255)), "bytea"),
        ("empty bytes", .bytes([]), "bytea"),
        ("NUL bytes only", .bytes([0, 0, 0]), "bytea"),
        ("NULL text", nil, "text"),
        ("NULL bytea", nil, "bytea"),
    ]

    @Test(arguments: parameterCases)
    func aParameterIsStoredAndReadBackUnchanged(_ example: (name: String, value: PostgresValue?, cast: String))
        throws
    {
        let connection = try PostgresConnection(uri: StoreCluster.current().uri)
        defer { connection.close() }
        try connection.execute("CREATE TEMP TABLE items (id integer, value \(example.cast))")
        let inserted = try connection.execute("INSERT INTO items VALUES (1, $1)", [example.value])
        #expect(inserted.affectedRows == 1)
        let read = try connection.execute("SELECT value, value IS NULL FROM items WHERE id = $1", [1])
        #expect(read.rowCount == 1)
        #expect(read.columns == ["value", "?column?"])
        switch example.value {
        case .text(let text)?: #expect(read.text(0, 0) == text)
        case .bytes(let bytes)?: #expect(read.bytes(0, 0) == bytes)
        case nil: #expect(read.bytes(0, 0) == nil)
        }
        #expect(read.text(0, 1) == (example.value == nil ? "t" : "f"))
        // The table the injection attempt names is still there, and so is the row.
        #expect(try connection.execute("SELECT count(*) FROM items").text(0, 0) == "1")
    }

    @Test func textWithANulByteIsRefusedBeforeAnythingIsSent() throws {
        let connection = try PostgresConnection(uri: StoreCluster.current().uri)
        defer { connection.close() }
        #expect(throws: PostgresError(.invalidParameter, server: "", message: "")) {
            try connection.execute("SELECT $1::text", [.text("a\u{0}b")])
        }
        #expect(try connection.execute("SELECT 1").text(0, 0) == "1")
    }

    static let refusedStatements: [(sql: String, parameters: [PostgresValue?], sqlState: String)] = [
        ("SELECT 1 / 0\n-- second line", [], "22012"),
        ("SELEC 1", [], "42601"),
        ("SELECT $1::integer", [.text("secret-value-42")], "22P02"),
        ("SELECT * FROM no_such_table", [], "42P01"),
    ]

    @Test(arguments: refusedStatements)
    func aRefusedStatementNamesItsSQLStateAndFirstLineButNoValue(
        _ example: (sql: String, parameters: [PostgresValue?], sqlState: String)
    ) throws {
        let cluster = try StoreCluster.current()
        let connection = try PostgresConnection(uri: cluster.uri)
        defer { connection.close() }
        let error = try #require(throws: PostgresError.self) { try connection.execute(example.sql, example.parameters) }
        #expect(error.code == .statement)
        #expect(error.sqlState == example.sqlState)
        #expect(error.statement == example.sql.split(separator: "\n").first.map(String.init))
        #expect(error.description.contains("127.0.0.1:\(cluster.port)/aasa"))
        #expect(error.description.contains("SQLSTATE \(example.sqlState)"))
        #expect(!error.description.contains("secret-value-42"))
        #expect(!error.description.contains("second line"))
        // The connection is usable after a refused statement.
        #expect(try connection.execute("SELECT 2").text(0, 0) == "2")
    }

    @Test func aTransactionThatThrowsLeavesNothingAndOneThatReturnsCommits() throws {
        let connection = try PostgresConnection(uri: StoreCluster.current().uri)
        defer { connection.close() }
        try connection.execute("CREATE TABLE transaction_rows (name text)")
        struct Abort: Error {}
        #expect(throws: Abort.self) {
            try connection.transaction {
                try connection.execute("INSERT INTO transaction_rows VALUES ($1)", ["dropped"])
                throw Abort()
            }
        }
        let kept = try connection.transaction {
            try connection.execute("INSERT INTO transaction_rows VALUES ($1)", ["kept"]).affectedRows
        }
        #expect(kept == 1)
        let other = try PostgresConnection(uri: StoreCluster.current().uri)
        defer { other.close() }
        let rows = try other.execute("SELECT name FROM transaction_rows ORDER BY name")
        #expect((0..<rows.rowCount).map { rows.text($0, 0) } == ["kept"])
    }

    @Test func aTransactionWhoseStatementFailedIsReportedRolledBackAtCommit() throws {
        let connection = try PostgresConnection(uri: StoreCluster.current().uri)
        defer { connection.close() }
        try connection.execute("CREATE TEMP TABLE swallowed (name text)")
        let error = try #require(throws: PostgresError.self) {
            try connection.transaction {
                try connection.execute("INSERT INTO swallowed VALUES ($1)", ["lost"])
                _ = try? connection.execute("SELECT 1 / 0")
            }
        }
        #expect(error.message.contains("rolled back"))
        #expect(try connection.execute("SELECT count(*) FROM swallowed").text(0, 0) == "0")
    }

    @Test func theSecondHolderOfAnAdvisoryLockWaitsUntilTheFirstReleasesIt() throws {
        let uri = try StoreCluster.current().uri
        let first = try PostgresConnection(uri: uri)
        let second = try PostgresConnection(uri: uri)
        defer {
            first.close()
            second.close()
        }
        let key: Int64 = 0x6161_7361_0001
        let firstReleasing = Atomic<Bool>(false)
        let secondSawFirstReleasing = Atomic<Bool>(false)
        let secondEntered = Atomic<Bool>(false)
        let secondDone = DispatchSemaphore(value: 0)
        try first.withAdvisoryLock(key) {
            Thread.detachNewThread {
                _ = try? second.withAdvisoryLock(key) {
                    secondSawFirstReleasing.store(
                        firstReleasing.load(ordering: .sequentiallyConsistent), ordering: .sequentiallyConsistent)
                    secondEntered.store(true, ordering: .sequentiallyConsistent)
                }
                secondDone.signal()
            }
            // Long enough for the second connection to reach the server and block on the lock.
            Thread.sleep(forTimeInterval: 0.5)
            let enteredEarly = secondEntered.load(ordering: .sequentiallyConsistent)
            #expect(!enteredEarly)
            firstReleasing.store(true, ordering: .sequentiallyConsistent)
        }
        let released = Date()
        #expect(secondDone.wait(timeout: .now() + 30) == .success)
        // Expected within milliseconds of the release; 10 s is the noisy machine's margin.
        #expect(Date().timeIntervalSince(released) < 10)
        let entered = secondEntered.load(ordering: .sequentiallyConsistent)
        let enteredAfterRelease = secondSawFirstReleasing.load(ordering: .sequentiallyConsistent)
        #expect(entered)
        #expect(enteredAfterRelease)
    }

    @Test func closingAConnectionFromAnotherThreadCancelsItsStatementWaitingForALock() throws {
        let uri = try StoreCluster.current().uri
        let holder = try PostgresConnection(uri: uri)
        let waiter = try PostgresConnection(uri: uri)
        defer { holder.close() }
        let key: Int64 = 0x6161_7361_0002
        let outcome = Mutex<PostgresError?>(nil)
        let waiterDone = DispatchSemaphore(value: 0)
        var waited: Duration = .zero
        try holder.withAdvisoryLock(key) {
            Thread.detachNewThread {
                do {
                    try waiter.execute("SELECT pg_advisory_lock($1::bigint)", [.integer(key)])
                } catch {
                    outcome.withLock { $0 = error as? PostgresError }
                }
                waiterDone.signal()
            }
            // Long enough for the waiter to block on the lock.
            Thread.sleep(forTimeInterval: 0.5)
            let start = ContinuousClock.now
            waiter.close()
            // The lock is held until this wait ends: without the cancel, the waiter would wait the full 30 s.
            _ = waiterDone.wait(timeout: .now() + 30)
            waited = ContinuousClock.now - start
        }
        // Cancelled within milliseconds; 10 s is the margin.
        #expect(waited < .seconds(10))
        let error = outcome.withLock { $0 }
        #expect(error?.code == .closed)
        #expect(error?.sqlState == "57014")
        #expect(!waiter.isAlive)
    }

    @Test func aNotificationReachesAListeningConnectionPromptly() throws {
        try Self.withListener(on: "domain_changes") { listener, sender in
            let payload = #"shop.example 'quoted' "and" ; NOTIFY x"#
            let start = ContinuousClock.now
            try sender.notify("domain_changes", payload: payload)
            let notification = try listener.waitForNotification(timeout: .seconds(30))
            // Expected within milliseconds; 5 s is the margin, the timeout 30 s.
            #expect(ContinuousClock.now - start < .seconds(5))
            #expect(notification?.channel == "domain_changes")
            #expect(notification?.payload == payload)
            // Nothing else was sent: the next wait times out.
            #expect(try listener.waitForNotification(timeout: .milliseconds(200)) == nil)
        }
    }

    @Test func aNotificationSentInATransactionArrivesAtCommit() throws {
        try Self.withListener(on: "committed_changes") { listener, sender in
            try sender.transaction {
                try sender.notify("committed_changes", payload: "one")
                #expect(try listener.waitForNotification(timeout: .milliseconds(300)) == nil)
            }
            #expect(try listener.waitForNotification(timeout: .seconds(30))?.payload == "one")
        }
    }

    /// Runs `body` with a connection listening on `channel` and another to send with, both closed after.
    static func withListener(
        on channel: String, _ body: (_ listener: PostgresConnection, _ sender: PostgresConnection) throws -> Void
    ) throws {
        let uri = try StoreCluster.current().uri
        let listener = try PostgresConnection(uri: uri)
        let sender = try PostgresConnection(uri: uri)
        defer {
            listener.close()
            sender.close()
        }
        try listener.listen(channel)
        try body(listener, sender)
    }

    /// Many payloads sent in one statement arrive as many notifications, in their order, byte for byte (quotes,
    /// backslashes, braces and commas are array syntax in the statement, not in the payloads).
    @Test func manyPayloadsSentAtOnceArriveEachInTheirOrder() throws {
        try Self.withListener(on: "batched_changes") { listener, sender in
            let payloads = (0..<1_500).map(String.init) + [#"a "quoted", {braced} \ back\"slash"#, "", "NULL"]
            try sender.transaction { try sender.notify("batched_changes", payloads: payloads) }
            var received: [String] = []
            while received.count < payloads.count,
                let notification = try listener.waitForNotification(timeout: .seconds(30))
            {
                received.append(notification.payload)
            }
            #expect(received == payloads)
            #expect(try listener.waitForNotification(timeout: .milliseconds(200)) == nil)
            try sender.notify("batched_changes", payloads: [])
            #expect(try listener.waitForNotification(timeout: .milliseconds(200)) == nil, "no payloads send nothing")
            let oversized = String(repeating: "x", count: PostgresConnection.maximumPayloadBytes + 1)
            #expect(throws: PostgresError.self) { try sender.notify("batched_changes", payloads: ["fine", oversized]) }
            #expect(try listener.waitForNotification(timeout: .milliseconds(200)) == nil, "nothing of a refused batch")
        }
    }

    static let wakers: [(name: String, act: @Sendable (PostgresConnection) -> Void)] = [
        ("wake", { $0.wake() }),
        ("close", { $0.close() }),
    ]

    @Test(arguments: wakers)
    func aWaitingConnectionIsEndedPromptlyFromAnotherThread(
        _ waker: (name: String, act: @Sendable (PostgresConnection) -> Void)
    ) throws {
        let listener = try PostgresConnection(uri: StoreCluster.current().uri)
        defer { listener.close() }
        try listener.listen("never_sent")
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: 0.3)
            waker.act(listener)
        }
        let start = ContinuousClock.now
        let notification = try listener.waitForNotification(timeout: .seconds(60))
        // Woken after about 0.3 s; 10 s is the margin, the timeout 60 s.
        #expect(ContinuousClock.now - start < .seconds(10))
        #expect(notification == nil)
        if waker.name == "close" {
            #expect(!listener.isAlive)
            #expect(throws: PostgresError(.closed, server: "", message: "")) { try listener.execute("SELECT 1") }
        } else {
            #expect(listener.isAlive)
            #expect(try listener.execute("SELECT 1").text(0, 0) == "1")
        }
    }

    static let invalidChannels = [
        "changes; DROP TABLE items", "Changes", "1changes", "", "chan-ges", "chän", String(repeating: "a", count: 64),
        "\"quoted\"",
    ]

    @Test(arguments: invalidChannels)
    func aChannelThatIsNotAPlainIdentifierIsRefused(_ channel: String) throws {
        let connection = try PostgresConnection(uri: StoreCluster.current().uri)
        defer { connection.close() }
        #expect(throws: PostgresError(.invalidIdentifier, server: "", message: "")) { try connection.listen(channel) }
        #expect(throws: PostgresError(.invalidIdentifier, server: "", message: "")) {
            try connection.notify(channel, payload: "x")
        }
        #expect(connection.isAlive)
    }
}
