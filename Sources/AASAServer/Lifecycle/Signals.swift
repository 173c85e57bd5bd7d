#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The one place that handles process signals: they are blocked before any listener thread
/// starts, so every thread inherits the mask and only ``wait()`` on the main thread receives them.
public enum Signals {
    /// What arrived.
    public enum Event: Sendable {
        /// SIGHUP: reload configuration and certificates.
        case reload
        /// SIGINT or SIGTERM: shut down gracefully.
        case stop
    }

    private static let handled: [Int32] = [SIGINT, SIGTERM, SIGHUP]

    /// Blocks SIGINT, SIGTERM and SIGHUP for this thread and every thread started after it; ignores SIGPIPE.
    public static func block() {
        signal(SIGPIPE, SIG_IGN)
        var set = sigset_t()
        sigemptyset(&set)
        for number in handled { sigaddset(&set, number) }
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// Waits up to `timeout` for a handled signal; `nil` when none came. For a start that waits for something
    /// (the store) and must still stop on SIGTERM.
    public static func wait(timeout: Duration) -> Event? {
        var set = sigset_t()
        sigemptyset(&set)
        for number in handled { sigaddset(&set, number) }
        let (seconds, attoseconds) = timeout.components
        var time = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        let received = sigtimedwait(&set, nil, &time)
        guard received > 0 else { return nil }
        return received == SIGHUP ? .reload : .stop
    }

    /// Waits for the next handled signal.
    public static func wait() -> Event {
        var set = sigset_t()
        sigemptyset(&set)
        for number in handled { sigaddset(&set, number) }
        var received: Int32 = 0
        while sigwait(&set, &received) != 0 {}
        return received == SIGHUP ? .reload : .stop
    }
}
