public import Testing

/// One ``PostgresCluster`` per suite (the PostgreSQL wrapper's tests and the store's): `@Suite(.storeCluster)` starts it before the suite's first test and stops and
/// removes it after the last; tests reach it as `try StoreCluster.current()`.
public struct StoreCluster: SuiteTrait, TestScoping {
    @TaskLocal public static var cluster: PostgresCluster?

    /// Once for the whole suite, not around each test.
    public var isRecursive: Bool { false }

    public init() {}

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        try await Self.$cluster.withValue(cluster) { try await function() }
    }

    /// The suite's cluster.
    public static func current() throws -> PostgresCluster {
        try #require(cluster, "the suite needs the .storeCluster trait")
    }

    /// A new, empty database on the suite's cluster, and its URI: each test has its own.
    public static func database(_ name: String) throws -> String {
        let cluster = try current()
        let made = try cluster.run("createdb", ["-h", "127.0.0.1", "-p", String(cluster.port), "-U", "postgres", name])
        #expect(made.status == 0, "createdb \(name): \(made.output)")
        return "postgresql://postgres@127.0.0.1:\(cluster.port)/\(name)"
    }
}

extension Trait where Self == StoreCluster {
    /// A throwaway PostgreSQL cluster for the suite.
    public static var storeCluster: Self { StoreCluster() }
}
