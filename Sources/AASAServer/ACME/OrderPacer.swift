public import AASACore
public import Foundation

/// The arithmetic of ``PacingState`` for one ``OrderRate`` (`nil`: no pacing, only pauses).
public struct OrderPacer: Sendable {
    /// The rate; `nil`: orders are not paced.
    public var rate: OrderRate?

    /// A pacer for `rate`.
    public init(rate: OrderRate?) {
        self.rate = rate
    }

    /// `state` with the tokens earned since it was counted, and an ended pause cleared.
    public func refilled(_ state: PacingState, now: Date) -> PacingState {
        var state = state
        if let until = state.pausedUntil, until <= now {
            state.pausedUntil = nil
            state.pauseReason = nil
        }
        guard let rate else { return state }
        let elapsed = max(0, now.timeIntervalSince(state.refilledAt))
        state.tokens = min(Double(rate.orders), state.tokens + elapsed * Double(rate.orders) / rate.seconds)
        state.refilledAt = max(now, state.refilledAt)
        return state
    }

    /// Takes a token for a new order at `now`: `nil` when taken, else the time to try again (the pause's end, or
    /// when the next token arrives).
    public func take(_ state: inout PacingState, now: Date) -> Date? {
        state = refilled(state, now: now)
        if let until = state.pausedUntil { return until }
        guard rate != nil else { return nil }
        guard state.tokens >= 1 else { return slot(1, state, now: now) }
        state.tokens -= 1
        return nil
    }

    /// When the `position`-th order from now (1: the next) can be placed: once the bucket has earned its token, and not
    /// before the pause ends.
    public func slot(_ position: Int, _ state: PacingState, now: Date) -> Date {
        let state = refilled(state, now: now)
        var time = now
        if let rate {
            let missing = Double(position) - state.tokens
            if missing > 0 { time = now.addingTimeInterval(missing * rate.seconds / Double(rate.orders)) }
        }
        // The bucket keeps filling while paused.
        return max(time, state.pausedUntil ?? time)
    }

    /// Pauses every new order until `until` (a later pause already set wins), for `reason`.
    public func pause(_ state: inout PacingState, until: Date, reason: String, now: Date) {
        state = refilled(state, now: now)
        guard until > (state.pausedUntil ?? now) else { return }
        state.pausedUntil = until
        state.pauseReason = reason
    }
}
