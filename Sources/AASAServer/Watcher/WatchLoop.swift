import AASACore
import Foundation
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The thread of a ``ConfigWatcher``: waits in `poll()` for inotify's events, notes what they changed in the
/// ``WatchTable``, and once a burst settles (``ChangeDebouncer``) renews the watches of what changed and calls
/// `onChange` with it, one call at a time.
///
/// ``stop()`` wakes it through a pipe and joins it; a reload in progress finishes first.
final class WatchLoop: Service {
    private let walk: FolderWalk
    /// A pipe that ``stop()`` writes to, so the thread leaves `poll()` at once: read end, write end.
    private let wakeup: (read: Int32, write: Int32)
    private let quietPeriod: Duration
    private let maximumDelay: Duration
    private let logger: Logger
    private let onChange: @Sendable (FolderChanges) -> Void
    /// The last path component of each root: the name an event of the folder holding it carries.
    private let rootNames: [String]
    private let loop = WorkerLoop()

    /// A loop over `walk`'s inotify instance; nothing runs until ``start()``.
    ///
    /// - Throws: a `POSIXError` when the wake-up pipe cannot be created.
    init(
        walk: FolderWalk, quietPeriod: Duration, maximumDelay: Duration, logger: Logger,
        onChange: @escaping @Sendable (FolderChanges) -> Void
    ) throws {
        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        for end in pipeEnds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        wakeup = (read: pipeEnds[0], write: pipeEnds[1])
        self.walk = walk
        self.quietPeriod = quietPeriod
        self.maximumDelay = maximumDelay
        self.logger = logger
        self.onChange = onChange
        rootNames = walk.roots.map { URL(fileURLWithPath: $0).lastPathComponent }
    }

    deinit {
        close(wakeup.read)
        close(wakeup.write)
    }

    /// Kernel thread id of the running thread (`/proc/self/task/<id>`), 0 when it is not running.
    var threadID: Int32 { loop.threadIDs.first ?? 0 }

    /// Starts the thread. Calling it again, or after ``stop()``, does nothing.
    func start() {
        // The thread holds the loop until it ends.
        guard !loop.isStopping, !loop.isRunning else { return }
        if let failure = loop.start("aasa-watch", { [self] in run() }) {
            logger.error("could not start the file watcher; reload with SIGHUP", metadata: ["reason": "\(failure)"])
        } else {
            logger.info("watching for changes", metadata: ["folders": "\(walk.roots.joined(separator: ","))"])
        }
    }

    /// Wakes the thread, waits until it has ended, and returns. Calling it again (or from several threads) returns
    /// once the thread is gone.
    func stop() {
        loop.stop(wake: {
            var byte: UInt8 = 1
            _ = write(wakeup.write, &byte, 1)
        })
    }

    private func run() {
        var debouncer = ChangeDebouncer(quietPeriod: quietPeriod, maximumDelay: maximumDelay)
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var descriptors = [
            pollfd(fd: walk.inotify.descriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakeup.read, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            // Without pending events, wake once a second anyway: stop() does not depend on the wake-up pipe alone.
            var timeout: Int32 = 1000
            if let deadline = debouncer.deadline {
                let remaining = ContinuousClock.now.duration(to: deadline)
                timeout = max(0, min(timeout, Int32(remaining / .milliseconds(1)) + 1))
            }
            let ready = poll(&descriptors, nfds_t(descriptors.count), timeout)
            if ready < 0 && errno != EINTR {
                logger.error("file watcher stopped; reload with SIGHUP", metadata: ["errno": "\(errno)"])
                return
            }
            if descriptors[1].revents != 0 || loop.isStopping { return }
            if ready > 0 && descriptors[0].revents & Int16(POLLIN) != 0 && drainEvents(into: &buffer) {
                debouncer.record(at: .now)
            }
            if debouncer.fire(at: .now) {
                let changes = walk.table.withLock { $0.takePending() }
                // Watch new folders before loading, so nothing written into them after this point is missed.
                walk.renew(for: changes)
                onChange(changes)
            }
        }
    }

    /// Reads every queued event into the pending changes; returns whether any of them can change what a load reads.
    private func drainEvents(into buffer: inout [UInt8]) -> Bool {
        var relevant = false
        walk.inotify.drain(into: &buffer) { events in
            walk.table.withLock { table in
                for event in events {
                    if event.overflowed {
                        table.pending.everything = true  // events were lost: anything may have changed
                        relevant = true
                    } else if event.ignored {
                        table.forget(event.watch)
                    } else if table.record(name: event.name, on: event.watch, rootNames: rootNames) {
                        relevant = true
                    }
                }
            }
        }
        return relevant
    }
}
