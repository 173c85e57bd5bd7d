import AASAPostgres
import AASATestSupport
import Foundation
import Testing

/// The database going away and coming back, on a cluster of the suite's own (stopping it would break other suites).
@Suite(.storeCluster, .serialized)
struct PostgresOutageTests {
    @Test func aStoppedServerIsAConnectErrorNamingTheServerNotThePasswordAndARestartedOneServesAgain() throws {
        let cluster = try StoreCluster.current()
        let password = "s3cret-Passw0rd"
        let uri = "postgresql://postgres:\(password)@127.0.0.1:\(cluster.port)/aasa"
        let before = try PostgresConnection(uri: uri, connectTimeout: .seconds(5))
        #expect(try before.execute("SELECT 1").text(0, 0) == "1")

        cluster.stop()
        defer { try? cluster.start() }
        let lost = try #require(throws: PostgresError.self) { try before.execute("SELECT 1") }
        #expect(lost.code == .connectionLost)
        #expect(!before.isAlive)
        #expect(!lost.description.contains(password))

        let start = ContinuousClock.now
        let refused = try #require(throws: PostgresError.self) {
            try PostgresConnection(uri: uri, connectTimeout: .seconds(5))
        }
        // A refused loopback connection fails at once; 5 s is the timeout, 20 s the margin above it.
        #expect(ContinuousClock.now - start < .seconds(20))
        #expect(refused.code == .connect)
        #expect(refused.server == "127.0.0.1:\(cluster.port)/aasa")
        #expect(refused.description.contains("127.0.0.1:\(cluster.port)/aasa"))
        #expect(!refused.description.contains(password))
        #expect(!refused.description.contains("\n"))

        try cluster.start()
        let after = try PostgresConnection(uri: uri, connectTimeout: .seconds(5))
        defer { after.close() }
        #expect(try after.execute("SELECT $1::text", ["back"]).text(0, 0) == "back")
        // The broken connection stays broken: a caller makes a new one.
        #expect(throws: PostgresError.self) { try before.execute("SELECT 1") }
    }

    @Test func aListenerLearnsThatTheServerWentAway() throws {
        let cluster = try StoreCluster.current()
        let listener = try PostgresConnection(uri: cluster.uri)
        defer { listener.close() }
        try listener.listen("domain_changes")
        cluster.stop()
        defer { try? cluster.start() }
        let start = ContinuousClock.now
        let error = try #require(throws: PostgresError.self) { try listener.waitForNotification(timeout: .seconds(60)) }
        // The server closes the socket as it stops; 10 s is the margin, the timeout 60 s.
        #expect(ContinuousClock.now - start < .seconds(10))
        #expect(error.code == .connectionLost)
        #expect(!listener.isAlive)
    }
}
