public import Foundation

extension Duration {
    /// This duration in seconds, for date arithmetic (`Date.addingTimeInterval`).
    public var timeInterval: TimeInterval {
        TimeInterval(components.seconds) + TimeInterval(components.attoseconds) / 1e18
    }
}
