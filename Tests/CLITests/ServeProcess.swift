import AASATestSupport
import Foundation
import Testing

/// `aasa-server serve` run as a real process on free ports, as a user or a container would run it.
final class ServeProcess {
    let process: ChildProcess
    let port: UInt16
    let admin: UInt16

    /// Starts `serve` in `directory` with `arguments` (the ports are added unless `environment` sets them: `ports`,
    /// else free ones); standard output and error go to `output` and `errorOutput`, else nowhere.
    init(
        in directory: String, arguments: [String], environment: [String: String] = [:], output: FileHandle? = nil,
        errorOutput: FileHandle? = nil, ports: (https: UInt16, admin: UInt16)? = nil
    ) throws {
        (port, admin) = ports ?? (freePort(), freePort())
        var arguments = ["serve"] + arguments
        if environment["AASA_SERVER_HTTPS_PORT"] == nil {
            arguments += ["--https-port", "\(port)", "--admin-port", "\(admin)"]
        }
        let nothing = open("/dev/null", O_RDWR | O_CLOEXEC)
        defer { close(nothing) }
        process = try ChildProcess(
            RepositoryPaths.executable, arguments,
            environment: ProcessInfo.processInfo.environment.merging(environment) { _, new in new },
            currentDirectory: directory, standardInput: nothing,
            standardOutput: output?.fileDescriptor ?? nothing, standardError: errorOutput?.fileDescriptor ?? nothing)
    }

    /// Starts `serve` in `directory` with `arguments`, its standard error written to the file `errorLog` (made
    /// empty first), for a test to read the log.
    convenience init(in directory: String, arguments: [String], errorLog: String) throws {
        guard FileManager.default.createFile(atPath: errorLog, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: errorLog])
        }
        try self.init(
            in: directory, arguments: arguments,
            errorOutput: try FileHandle(forWritingTo: URL(fileURLWithPath: errorLog)))
    }

    deinit { if process.isRunning { process.terminate() } }

    /// Waits (up to ten seconds of a fast machine, scaled by ``TestTime``) until the admin listener answers
    /// `/healthz`; one that runs out records what the probe saw last.
    func waitUntilHealthy(seconds: Double = 10, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        waitForProbe("/healthz", seconds: seconds, sourceLocation: sourceLocation)
    }

    /// Waits (up to `seconds` of a fast machine, scaled by ``TestTime``) until the admin listener answers `/readyz`
    /// with 200: the first load is served (a replica of a store answers `/healthz` while it waits for the store).
    func waitUntilReady(seconds: Double = 30, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        waitForProbe("/readyz", seconds: seconds, sourceLocation: sourceLocation)
    }

    /// Polls the admin listener's `path` until it answers 200, saying what it answered last (or that the process
    /// has exited) when time runs out.
    private func waitForProbe(_ path: String, seconds: Double, sourceLocation: SourceLocation) -> Bool {
        let url = "http://127.0.0.1:\(admin)\(path)"
        return Wait.until("\(url) to answer 200", seconds: seconds, sourceLocation: sourceLocation) {
            guard process.isRunning else { return "the server exited with status \(process.terminationStatus)" }
            do {
                let answer = try Curl.request(url)
                return answer.status == 200 ? nil : "\(answer.status) \(answer.text.prefix(200))"
            } catch {
                return "\(error)"
            }
        } != nil
    }

    /// Sends SIGHUP: reload the config and certificate folders.
    func reload() {
        kill(process.processIdentifier, SIGHUP)
    }

    /// Sends SIGTERM and returns the exit status, or `nil` if the process is still running after `seconds` (of a
    /// fast machine, scaled by ``TestTime``).
    func terminate(within seconds: TimeInterval = 5) -> Int32? {
        process.terminate()
        let deadline = TestTime.deadline(seconds)
        while process.isRunning && Date() < deadline { usleep(50_000) }
        return process.isRunning ? nil : process.terminationStatus
    }
}

extension ServeProcess {
    /// `serve` in `folder` of a copy of the repository's site-config/ with dev certificates and an admin token file
    /// holding `tokens` (lines `NAME read|write TOKEN`), its standard error in `serve.log`; started, not yet waited
    /// for.
    static func withTokens(_ tokens: String, in folder: TemporaryDirectory) throws -> ServeProcess {
        try folder.copy(RepositoryPaths.siteConfig, to: "site-config")
        let certificates = try Command.run(
            RepositoryPaths.executable, ["certs", "dev"], currentDirectory: folder.path, timeout: 60)
        #expect(certificates.status == 0, "\(certificates.stderr)")
        let file = try folder.write("tokens", tokens)
        #expect(chmod(file, 0o600) == 0)
        return try ServeProcess(
            in: folder.path,
            arguments: ["--config", "site-config", "--certs", "certs", "--admin-token-file", file],
            errorLog: folder.path + "/serve.log")
    }
}
