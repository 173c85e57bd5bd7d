import AASACore
public import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A program a test starts and waits for, with nothing of the test process but the descriptors it is given.
///
/// Not Foundation's `Process`: on Linux it learns of a child's exit through a socket the child inherits, so a child
/// that leaves a program of its own running (a daemon, a shell's background job) is never seen to exit, and its
/// `waitUntilExit()` waits for ever; and every pipe the test process has open at that moment, another test's among
/// them, reaches the child unless closed. Here the child gets its standard descriptors and nothing else (glibc's
/// `closefrom` action), is reaped by `waitpid` without a signal handler, and runs in a process group of its own, so
/// a signal stops whatever it started too.
public final class ChildProcess: @unchecked Sendable {
    /// A program that could not be started.
    public struct Failure: Error, CustomStringConvertible {
        /// What failed, and why.
        public let description: String
    }

    /// The child's process identifier, and its process group's.
    public let processIdentifier: pid_t
    private let lock = NSLock()
    private var waitStatus: Int32?

    /// Starts `executable` (a path, or a name looked up on the `PATH` of its environment) with `arguments`, in
    /// `currentDirectory` when given, with `environment` (the test process's when `nil`); its standard input, output
    /// and error are the descriptors given, which stay open here.
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        currentDirectory: String? = nil, standardInput: Int32, standardOutput: Int32, standardError: Int32
    ) throws {
        guard let closeFrom = Self.closeFrom, let changeDirectory = Self.changeDirectory else {
            throw Failure(description: "the C library has no posix_spawn closefrom and chdir actions (glibc 2.34)")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // Each source is dup2'ed onto its number first, so a source that is itself 0, 1 or 2 is not closed early.
        for (source, target) in [(standardInput, 0), (standardOutput, 1), (standardError, 2)] {
            posix_spawn_file_actions_adddup2(&actions, source, Int32(target))
        }
        _ = closeFrom(&actions, 3)
        if let currentDirectory { _ = changeDirectory(&actions, currentDirectory) }
        // A bare name is found by env(1) on the PATH of the environment the program gets, as Foundation did.
        let argv = (executable.hasPrefix("/") ? [executable] : ["/usr/bin/env", executable]) + arguments
        let cArguments = argv.map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        let cEnvironment = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer { cEnvironment?.forEach { free($0) } }
        var pid: pid_t = 0
        // The test process ignores SIGPIPE and may block signals on its threads: the program starts as a shell
        // would start it, in a process group of its own.
        let spawned = SpawnAttributes.with { attributes in
            if let cEnvironment { return posix_spawn(&pid, argv[0], &actions, attributes, cArguments, cEnvironment) }
            return posix_spawn(&pid, argv[0], &actions, attributes, cArguments, environ)
        }
        guard spawned == 0 else {
            throw Failure(description: "could not run \(argv[0]): \(String(cString: strerror(spawned)))")
        }
        processIdentifier = pid
    }

    /// Starts a program whose output and errors go to `logFile` (made when missing, at its end or, with `emptied`,
    /// from its start; `nil`: nowhere), with no input: a daemon a test keeps running.
    ///
    /// The file is opened, never replaced: a path that is a device (`/dev/null`) stays one.
    public convenience init(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        currentDirectory: String? = nil, logFile: String?, emptied: Bool = false
    ) throws {
        let logPath = logFile ?? "/dev/null"
        let log = open(logPath, O_WRONLY | O_CREAT | O_CLOEXEC | (emptied ? O_TRUNC : O_APPEND), 0o644)
        guard log >= 0 else {
            throw Failure(description: "could not open \(logPath): \(String(cString: strerror(errno)))")
        }
        defer { close(log) }
        let nothing = open("/dev/null", O_RDONLY | O_CLOEXEC)
        guard nothing >= 0 else {
            throw Failure(description: "could not open /dev/null: \(String(cString: strerror(errno)))")
        }
        defer { close(nothing) }
        try self.init(
            executable, arguments, environment: environment, currentDirectory: currentDirectory,
            standardInput: nothing, standardOutput: log, standardError: log)
    }

    /// The exit status once the program has ended (its exit code, or the number of the signal that ended it, as
    /// `Process.terminationStatus` gives it); `nil` while it runs.
    public var status: Int32? {
        lock.withLock {
            if waitStatus == nil {
                var status: Int32 = 0
                if waitpid(processIdentifier, &status, WNOHANG) == processIdentifier { waitStatus = status }
            }
            return waitStatus.map { $0 & 0x7f == 0 ? ($0 >> 8) & 0xff : $0 & 0x7f }
        }
    }

    /// Whether the program is still running.
    public var isRunning: Bool { status == nil }

    /// The exit status of a program that has ended (see ``status``).
    public var terminationStatus: Int32 {
        guard let status else { preconditionFailure("terminationStatus of a program that is still running") }
        return status
    }

    /// Asks the program and what it started to end (SIGTERM), without waiting.
    public func terminate() { signal(SIGTERM) }

    /// Waits until the program has ended.
    public func waitUntilExit() { wait(until: .distantFuture) }

    /// Sends `signal` to the program and every process it started in its group.
    public func signal(_ signal: Int32) {
        guard isRunning else { return }
        kill(-processIdentifier, signal)
    }

    /// Waits until the program has ended or `deadline` has passed; its status, or `nil` if it still runs.
    @discardableResult
    public func wait(until deadline: Date) -> Int32? {
        while isRunning && Date() < deadline { usleep(10_000) }
        return status
    }

    /// Asks the program to end (SIGTERM to its group), then ends it (SIGKILL) if it has not within `grace` seconds
    /// of a fast machine (scaled by ``TestTime``); returns its status.
    @discardableResult
    public func stop(grace: Double = 5) -> Int32 {
        signal(SIGTERM)
        if let status = wait(until: TestTime.deadline(grace)) { return status }
        signal(SIGKILL)
        var raw: Int32 = 0
        lock.withLock {
            if waitStatus == nil, waitpid(processIdentifier, &raw, 0) == processIdentifier { waitStatus = raw }
        }
        return status ?? SIGKILL
    }

    deinit {
        if isRunning { stop(grace: 1) }
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34), which the Glibc module does not export.
    static let closeFrom = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np").map {
        unsafeBitCast($0, to: CloseFrom.self)
    }
    typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    /// glibc's `posix_spawn_file_actions_addchdir_np` (2.29).
    private static let changeDirectory = dlsym(nil, "posix_spawn_file_actions_addchdir_np").map {
        unsafeBitCast($0, to: ChangeDirectory.self)
    }
    private typealias ChangeDirectory =
        @convention(c) (
            UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>
        ) -> Int32
}
