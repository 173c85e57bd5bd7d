public import Foundation

extension NSCondition {
    /// Runs `body` holding the lock.
    public func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}
