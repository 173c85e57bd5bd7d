public import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Runs real programs (curl, openssl, the aasa-server binary) the way a user would.
public enum Command {
    /// What a finished program left behind.
    public struct Output: Sendable {
        /// Exit status.
        public var status: Int32
        /// Everything written to standard output.
        public var stdout: String
        /// Everything written to standard error.
        public var stderr: String
        /// Standard output as bytes.
        public var stdoutBytes: [UInt8]
    }

    /// Runs `executable` with `arguments` to completion, feeding it `input`, and returns what it printed.
    ///
    /// Bounded in every way a program can hang a test: at `timeout` seconds (of a fast machine, scaled by
    /// ``TestTime``) it is stopped (SIGTERM to it and what it started, SIGKILL five seconds later), and once it has
    /// ended its output is read only while more keeps coming, so a program it left running with the pipes open does
    /// not hold the test. Its pipes are close-on-exec here, so no other program a test starts meanwhile keeps them.
    @discardableResult
    public static func run(
        _ executable: String, _ arguments: [String], input: [UInt8]? = nil, currentDirectory: String? = nil,
        environment: [String: String]? = nil, timeout: TimeInterval = 60
    ) throws -> Output {
        let inputPipe = try ClosingPipe()
        let outputPipe = try ClosingPipe()
        let errorPipe = try ClosingPipe()
        let child = try ChildProcess(
            executable, arguments, environment: environment, currentDirectory: currentDirectory,
            standardInput: inputPipe.read, standardOutput: outputPipe.write, standardError: errorPipe.write)
        inputPipe.closeRead()
        outputPipe.closeWrite()
        errorPipe.closeWrite()
        var exchange = PipeExchange(input: inputPipe, feeding: input ?? [], outputs: [outputPipe, errorPipe])
        let deadline = TestTime.deadline(timeout)
        let killAt = deadline.addingTimeInterval(TestTime.seconds(5))
        var terminated = false
        var lastProgress = Date()
        var endedAt: Date?
        while true {
            // The pipes are served while the program is stopped too: one that prints as it ends never blocks.
            if exchange.step(waiting: 20) { lastProgress = Date() }
            let now = Date()
            if let status = child.status {
                // Its output to the end, or until nothing more has come for a second since it ended: what is left
                // holding the pipes is not this program.
                let ended = endedAt ?? now
                endedAt = ended
                guard exchange.isFinished || now.timeIntervalSince(max(lastProgress, ended)) > 1 else { continue }
                return Output(
                    status: status, stdout: String(decoding: exchange.received[0], as: UTF8.self),
                    stderr: String(decoding: exchange.received[1], as: UTF8.self), stdoutBytes: exchange.received[0])
            } else if now > killAt {
                child.signal(SIGKILL)
            } else if now > deadline, !terminated {
                child.signal(SIGTERM)
                terminated = true
            }
        }
    }
}

/// A pipe whose two descriptors are close-on-exec and closed when it is released.
final class ClosingPipe {
    private(set) var read: Int32
    private(set) var write: Int32

    init() throws {
        var ends: [Int32] = [-1, -1]
        // pipe2, not pipe and then fcntl: no other thread's child can inherit the pipe between the two.
        guard let makePipe = Self.makePipe, makePipe(&ends, O_CLOEXEC) == 0 else {
            throw ChildProcess.Failure(description: "pipe: \(String(cString: strerror(errno)))")
        }
        (read, write) = (ends[0], ends[1])
    }

    /// glibc's `pipe2`, which the Glibc module does not export.
    private static let makePipe = dlsym(nil, "pipe2").map { unsafeBitCast($0, to: MakePipe.self) }
    private typealias MakePipe = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32

    func closeRead() {
        if read >= 0 { close(read) }
        read = -1
    }

    func closeWrite() {
        if write >= 0 { close(write) }
        write = -1
    }

    deinit {
        closeRead()
        closeWrite()
    }
}

/// Feeds a child's standard input and reads its output pipes with `poll`, on the caller's thread: no pipe waits for
/// another, and no reader outlives the exchange.
struct PipeExchange {
    private let input: ClosingPipe
    private var pending: [UInt8]
    private var written = 0
    private let outputs: [ClosingPipe]
    /// What each output pipe gave, in the order given.
    private(set) var received: [[UInt8]]
    private var buffer = [UInt8](repeating: 0, count: 65_536)

    init(input: ClosingPipe, feeding bytes: [UInt8], outputs: [ClosingPipe]) {
        self.input = input
        pending = bytes
        self.outputs = outputs
        received = Array(repeating: [], count: outputs.count)
        ChildPipe.ignoreSIGPIPE()
        _ = fcntl(input.write, F_SETFL, fcntl(input.write, F_GETFL) | O_NONBLOCK)
        if pending.isEmpty { input.closeWrite() }
    }

    /// Whether every output pipe has reached its end.
    var isFinished: Bool { outputs.allSatisfy { $0.read < 0 } }

    /// Waits up to `milliseconds` for a pipe to be ready, then writes or reads what it can; whether anything moved.
    mutating func step(waiting milliseconds: Int32) -> Bool {
        var polled = outputs.map { pollfd(fd: $0.read, events: Int16(POLLIN), revents: 0) }
        polled.append(pollfd(fd: input.write, events: Int16(POLLOUT), revents: 0))
        guard poll(&polled, nfds_t(polled.count), milliseconds) > 0 else { return false }
        var progressed = false
        for (index, pipe) in outputs.enumerated() where polled[index].revents != 0 {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(pipe.read, $0.baseAddress, $0.count) }
            if count > 0 {
                received[index] += buffer[..<count]
                progressed = true
            } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                pipe.closeRead()
            }
        }
        if polled[outputs.count].revents != 0 {
            let count = pending[written...].withUnsafeBytes { Glibc.write(input.write, $0.baseAddress, $0.count) }
            if count > 0 {
                written += count
                progressed = true
            }
            // Written whole, or the reader is gone: the child sees the end of its input.
            if written == pending.count || (count < 0 && errno != EINTR && errno != EAGAIN) { input.closeWrite() }
        }
        return progressed
    }
}

/// What a command-line tool printed, for tests that read a tool's text output.
public struct ToolResult: Sendable {
    /// Exit status.
    public var status: Int32
    /// Standard output.
    public var output: String
    /// Standard error.
    public var error: String
}

/// Runs `arguments` (the tool looked up on PATH) with optional standard input.
public func runTool(_ arguments: [String], input: String? = nil) throws -> ToolResult {
    let result = try Command.run(arguments[0], Array(arguments.dropFirst()), input: input.map { Array($0.utf8) })
    return ToolResult(status: result.status, output: result.stdout, error: result.stderr)
}
