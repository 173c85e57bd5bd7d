import Foundation

/// CPU time, for hang guards in tests: unlike wall time, other tests running beside it and other builds on a
/// shared machine do not count.
public enum CPUTime {
    /// CPU time the calling thread has used so far (a test body without `await` stays on one thread).
    public static func ofThisThread() -> Duration {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return .seconds(now.tv_sec) + .nanoseconds(now.tv_nsec)
    }
}
