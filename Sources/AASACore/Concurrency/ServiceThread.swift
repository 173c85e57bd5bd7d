import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A thread of the server's background work that is joined, not abandoned: ``join()`` returns once its body has
/// returned and the thread is gone.
///
/// Foundation's `Thread` is detached: nothing can wait for it to end, so a service stopped with it may still run
/// (and call back into what stopped it) after its `stop` returned. This one is a joinable POSIX thread, named for
/// `top -H`, `ps -L` and debuggers. Every service (the file watcher, ACME's workers, the CDN check, the change
/// comparer, the lingering-close reader of each listener) runs on it.
public final class ServiceThread: Sendable {
    /// The name the thread carries (at most 15 bytes are kept by the kernel).
    public let name: String
    /// The running thread, until it is joined.
    private let handle: Mutex<pthread_t?>
    /// The thread's `pthread_t`, never cleared: a join from the thread itself is told apart without the lock a
    /// join from elsewhere holds while it waits.
    private let identity = Atomic<UInt>(0)
    /// The kernel's id of the thread while its body runs, 0 before and after.
    private let kernelID = Atomic<Int32>(0)
    /// Whether the body has returned.
    private let ended = Atomic<Bool>(false)
    /// Who releases the thread's resources: ``undecided``, a joiner (``joined``), or the thread itself
    /// (``detached``), when it joined itself.
    private let fate = Atomic<Int>(ServiceThread.undecided)
    private static let undecided = 0
    private static let joined = 1
    private static let detached = 2

    /// What the thread runs, handed over as its one retained context.
    private final class Start: Sendable {
        let thread: ServiceThread
        let body: @Sendable () -> Void

        init(thread: ServiceThread, body: @escaping @Sendable () -> Void) {
            self.thread = thread
            self.body = body
        }
    }

    /// Starts `body` on a new thread named `name`.
    ///
    /// - Throws: ``StartFailure`` with `pthread_create`'s error (e.g. `EAGAIN` at the process's thread limit).
    public init(name: String, _ body: @escaping @Sendable () -> Void) throws(StartFailure) {
        self.name = name
        handle = Mutex(nil)
        let context = Unmanaged.passRetained(Start(thread: self, body: body)).toOpaque()
        // The lock is held until the handle is stored, so a join racing with the start sees it.
        let result = handle.withLock { handle -> Int32 in
            var thread = pthread_t()
            let result = pthread_create(
                &thread, nil,
                { context in
                    // The one release of the context retained by `init`.
                    let start = Unmanaged<Start>.fromOpaque(context!).takeRetainedValue()
                    start.thread.run(start.body)
                    return nil
                }, context)
            if result == 0 {
                handle = thread
                identity.store(UInt(thread), ordering: .releasing)
            }
            return result
        }
        guard result == 0 else {
            Unmanaged<Start>.fromOpaque(context).release()
            throw StartFailure(name: name, code: result)
        }
    }

    /// Why a thread did not start.
    public struct StartFailure: Error, CustomStringConvertible {
        /// The thread's name.
        public var name: String
        /// `pthread_create`'s error number.
        public var code: Int32

        public var description: String {
            "could not start thread '\(name)' (errno \(code)); raise the process's thread limit (ulimit -u)"
        }
    }

    /// The kernel's id of the thread while its body runs (`/proc/self/task/<id>`), 0 when it is not running.
    public var threadID: Int32 { kernelID.load(ordering: .acquiring) }

    /// Whether the caller is this thread.
    public var isCurrent: Bool { identity.load(ordering: .acquiring) == UInt(pthread_self()) }

    /// Waits until the thread has ended. Returns at once when it was joined before, and when called from the thread
    /// itself (a service stopped by its own callback: its loop ends when the callback returns), which detaches it so
    /// that its resources go when it ends. Several callers may wait at once: the first joins, the others wait for it.
    public func join() {
        if isCurrent {
            if fate.compareExchange(expected: Self.undecided, desired: Self.detached, ordering: .acquiringAndReleasing)
                .exchanged
            {
                pthread_detach(pthread_self())
            }
            return
        }
        handle.withLock { handle in
            // Also checked here: a body that joins before `init` stored the identity waits for the lock, then sees it.
            guard let thread = handle, pthread_equal(thread, pthread_self()) == 0 else { return }
            if fate.compareExchange(expected: Self.undecided, desired: Self.joined, ordering: .acquiringAndReleasing)
                .exchanged
            {
                pthread_join(thread, nil)
            } else {
                // Detached by itself: nothing to join, so wait for its body to return.
                while !ended.load(ordering: .acquiring) { usleep(1000) }
            }
            handle = nil
        }
    }

    private func run(_ body: @Sendable () -> Void) {
        Self.nameThisThread(name)
        kernelID.store(Self.currentThreadID(), ordering: .releasing)
        defer {
            kernelID.store(0, ordering: .releasing)
            ended.store(true, ordering: .releasing)
        }
        body()
    }

    /// Names the calling thread through procfs: Glibc's `pthread_setname_np` is a GNU extension Swift does not
    /// import.
    private static func nameThisThread(_ name: String) {
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBufferPointer { write(fd, $0.baseAddress, $0.count) }
    }

    /// The kernel's id of the calling thread, from `/proc/thread-self` (`<pid>/task/<tid>`); `gettid` is not
    /// imported either. 0 when procfs is not mounted.
    private static func currentThreadID() -> Int32 {
        var buffer = [CChar](repeating: 0, count: 64)
        let length = readlink("/proc/thread-self", &buffer, buffer.count - 1)
        guard length > 0 else { return 0 }
        let text = String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return text.split(separator: "/").last.flatMap { Int32($0) } ?? 0
    }
}
