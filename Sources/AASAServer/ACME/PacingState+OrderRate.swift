public import AASACore
public import Foundation

extension PacingState {
    /// A full bucket for `rate` at `now`.
    public init(rate: OrderRate?, now: Date) {
        self.init(tokens: Double(rate?.orders ?? 0), refilledAt: now, pausedUntil: nil, pauseReason: nil)
    }
}
