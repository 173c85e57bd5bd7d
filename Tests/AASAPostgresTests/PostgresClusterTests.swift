import AASAPostgres
import AASATestSupport
import Foundation
import Testing

/// The test clusters themselves: one left behind by a test process that died is stopped and removed by the next.
struct PostgresClusterTests {
    @Test func aClusterAbandonedByADeadTestProcessIsStoppedAndRemovedByTheNextOne() throws {
        let abandoned = try PostgresCluster()
        let connection = try PostgresConnection(uri: abandoned.uri)
        // A process id above any the kernel gives out: the owner is gone.
        try Data("2147483647".utf8).write(to: URL(fileURLWithPath: abandoned.directory.path + "/owner.pid"))

        let next = try PostgresCluster()
        // Stopping it wrote pg_ctl's output to /dev/null, which is still the device every program writes to.
        var device = stat()
        #expect(stat("/dev/null", &device) == 0 && device.st_mode & S_IFMT == S_IFCHR)
        #expect(!FileManager.default.fileExists(atPath: abandoned.directory.path))
        #expect(throws: PostgresError.self) { try connection.execute("SELECT 1") }
        #expect(throws: PostgresError.self) { try PostgresConnection(uri: abandoned.uri, connectTimeout: .seconds(5)) }
        let live = try PostgresConnection(uri: next.uri)
        defer { live.close() }
        #expect(try live.execute("SELECT 1").text(0, 0) == "1")
    }
}
