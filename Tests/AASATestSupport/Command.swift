public import Foundation

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

    /// Runs `executable` with `arguments` to completion (bounded by `timeout` seconds of a fast machine, scaled by
    /// ``TestTime``), feeding `input`.
    @discardableResult
    public static func run(
        _ executable: String, _ arguments: [String], input: [UInt8]? = nil, currentDirectory: String? = nil,
        environment: [String: String]? = nil, timeout: TimeInterval = 60
    ) throws -> Output {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable.hasPrefix("/") ? executable : "/usr/bin/env")
        process.arguments = executable.hasPrefix("/") ? arguments : [executable] + arguments
        if let currentDirectory { process.currentDirectoryURL = URL(fileURLWithPath: currentDirectory) }
        if let environment { process.environment = environment }
        let stdout = Pipe()
        let stderr = Pipe()
        let stdin = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = stdin
        try process.run()
        // Written beside the reads: a program that exits or writes much before reading all of it blocks nothing.
        ChildPipe.feed(input ?? [], to: stdin.fileHandleForWriting)
        // Read both pipes concurrently so a chatty program never blocks on a full pipe.
        let group = DispatchGroup()
        nonisolated(unsafe) var outData = Data()
        nonisolated(unsafe) var errData = Data()
        group.enter()
        DispatchQueue.global().async {
            outData = ChildPipe.readToEnd(stdout.fileHandleForReading); group.leave()
        }
        group.enter()
        DispatchQueue.global().async {
            errData = ChildPipe.readToEnd(stderr.fileHandleForReading); group.leave()
        }
        let deadline = TestTime.deadline(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        group.wait()
        process.waitUntilExit()
        return Output(
            status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self), stdoutBytes: [UInt8](outData))
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
