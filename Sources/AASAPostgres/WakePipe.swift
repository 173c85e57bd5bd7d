#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A self-pipe: ``wake()`` from any thread makes the read end readable, so a thread blocked in `poll` on it returns at
/// once. Both ends are non-blocking; the descriptors live as long as the value.
final class WakePipe: Sendable {
    /// The end a waiter polls.
    let readEnd: Int32
    private let writeEnd: Int32

    /// Creates the pipe, or returns `nil` (with `errno` set) when the process has no descriptors left.
    init?() {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return nil }
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        readEnd = ends[0]
        writeEnd = ends[1]
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    /// Makes the read end readable (a full pipe is already readable, so a failed write loses nothing).
    func wake() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// Empties the pipe and says whether it held a wake.
    func drain() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 64)
        var woken = false
        while read(readEnd, &buffer, buffer.count) > 0 { woken = true }
        return woken
    }
}
