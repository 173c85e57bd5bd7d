import Foundation

extension NSCondition {
    /// Runs `body` holding the lock: the due queue (ACME's workers, the CDN check) and the change comparer guard
    /// their items with a condition they also wait on.
    func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}
