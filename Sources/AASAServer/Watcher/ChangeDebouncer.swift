/// Turns a burst of file-system events into one reload: fires once the events have been quiet for
/// `quietPeriod`, but never later than `maximumDelay` after the first event of the burst.
///
/// Editors, `cp`, certbot and Kubernetes' atomic writer all produce several events per change (truncate,
/// write, close, rename, …); reloading on each would read half-written files and reload many times. The
/// maximum delay keeps a steady trickle of events (a log file in the folder, a slow copy) from postponing
/// the reload forever.
struct ChangeDebouncer: Sendable {
    /// How long events must stop before the reload.
    let quietPeriod: Duration
    /// The longest a reload waits after the first event of a burst.
    let maximumDelay: Duration

    private var firstEvent: ContinuousClock.Instant?
    private var lastEvent: ContinuousClock.Instant?

    init(quietPeriod: Duration, maximumDelay: Duration) {
        self.quietPeriod = quietPeriod
        self.maximumDelay = max(maximumDelay, quietPeriod)
    }

    /// Whether events are waiting for a reload.
    var isPending: Bool { firstEvent != nil }

    /// Notes an event seen at `instant`.
    mutating func record(at instant: ContinuousClock.Instant) {
        if firstEvent == nil { firstEvent = instant }
        lastEvent = instant
    }

    /// When the pending events are due for a reload, or `nil` when none are pending.
    var deadline: ContinuousClock.Instant? {
        guard let firstEvent, let lastEvent else { return nil }
        return min(lastEvent + quietPeriod, firstEvent + maximumDelay)
    }

    /// Whether a reload is due at `now`; when it is, the burst is over and the next event starts a new one.
    mutating func fire(at now: ContinuousClock.Instant) -> Bool {
        guard let deadline, deadline <= now else { return false }
        firstEvent = nil
        lastEvent = nil
        return true
    }
}
