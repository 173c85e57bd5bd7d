import AASATestSupport
import Testing

/// One ``PostgresCluster`` per suite: `@Suite(.postgresCluster)` starts it before the suite's first test and stops
/// and removes it after the last, whether the tests passed, failed or threw; tests reach it as `try
/// SharedCluster.current()`.
struct SharedCluster: SuiteTrait, TestScoping {
    @TaskLocal static var cluster: PostgresCluster?

    /// Once for the whole suite, not around each test.
    var isRecursive: Bool { false }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        try await Self.$cluster.withValue(cluster) { try await function() }
    }

    /// The suite's cluster.
    static func current() throws -> PostgresCluster {
        try #require(cluster, "the suite needs the .postgresCluster trait")
    }
}

extension Trait where Self == SharedCluster {
    /// A throwaway PostgreSQL cluster for the suite.
    static var postgresCluster: Self { SharedCluster() }
}
