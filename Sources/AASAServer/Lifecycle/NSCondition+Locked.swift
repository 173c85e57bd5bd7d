import Foundation

extension NSCondition {
    /// Runs `body` holding the lock: the ACME workers and the CDN check guard their schedules with a condition
    /// they also wait on.
    func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}
