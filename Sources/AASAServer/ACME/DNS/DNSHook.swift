import AASACore
import AASADNS
import Foundation
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// The operator's program for a DNS provider the server does not speak to itself (`--acme-dns-hook`), run as
/// `PATH present FQDN VALUE` before the CA looks and `PATH cleanup FQDN VALUE` after, as lego's `exec` provider and
/// certbot's manual hooks run theirs; FQDN ends with a dot.
///
/// It runs in a process group of its own, with no input, the signals the server blocks unblocked, and its output
/// read into a bounded buffer; past its time limit the whole group (the programs it started too) gets SIGTERM, then
/// SIGKILL two seconds later. The server reaps it itself, whatever its own signal handling.
struct DNSHook: Sendable {
    let path: String
    let timeout: Duration
    let logger: Logger

    /// The most output kept from one run; more is read and dropped.
    static let outputLimit = 16 * 1024

    /// Runs `action` for `name` and `value`; a failure names the command, its status or the time limit, and its
    /// last output. Its output is logged line by line.
    func run(_ action: String, name: String, value: String) throws(ACMEFailure) {
        let fqdn = DNSName.absolute(name)
        let command = "\(path) \(action) \(fqdn) \(value)"
        let run: Run
        do {
            run = try Self.spawn([path, action, fqdn, value], timeout: timeout)
        } catch {
            throw ACMEFailure(
                .dns, "the DNS hook \(path) cannot be run: \(error.description)",
                hint: "give --acme-dns-hook an executable file (chmod +x) the server's user may run")
        }
        let text = String(decoding: run.output, as: UTF8.self)
        let lines = text.split(whereSeparator: \.isNewline)
        for line in lines.suffix(50) {
            logger.info(
                "ACME: DNS hook output",
                metadata: ["action": "\(action)", "name": "\(fqdn)", "line": "\(LogEscaping.escape(String(line)))"])
        }
        let last = lines.suffix(3).joined(separator: " / ")
        if run.timedOut {
            throw ACMEFailure(
                .dns, "the DNS hook did not finish within \(timeout): \(command)",
                hint: "make the hook end sooner, or raise --acme-dns-hook-timeout")
        }
        guard run.status == 0 else {
            throw ACMEFailure(
                .dns, "the DNS hook failed (\(run.statusText)): " + command + (last.isEmpty ? "" : ": \(last)"),
                hint: "see the hook's output in the log; run the same command by hand to try it")
        }
    }

    /// How a run ended.
    struct Run {
        var output: [UInt8] = []
        /// The exit status; `nil` when a signal ended it.
        var status: Int32?
        var signal: Int32?
        var timedOut = false

        var statusText: String {
            if let status { return "exit status \(status)" }
            return "signal \(signal ?? 0)"
        }
    }

    /// Why a program could not be started.
    struct SpawnError: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs `arguments` (the program first) and returns once it has ended, or once it was stopped at `timeout`.
    static func spawn(_ arguments: [String], timeout: Duration) throws(SpawnError) -> Run {
        var pipe: [Int32] = [-1, -1]
        guard Glibc.pipe(&pipe) == 0 else {
            throw SpawnError(description: "no pipe: \(String(cString: strerror(errno)))")
        }
        // Neither end goes to other programs the server starts; the hook gets the write end as 1 and 2 only.
        for end in pipe { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, pipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, pipe[1], 2)
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = SpawnAttributes.with { posix_spawn(&pid, arguments[0], &actions, $0, argv, environ) }
        close(pipe[1])
        defer { close(pipe[0]) }
        guard spawned == 0 else { throw SpawnError(description: String(cString: strerror(spawned))) }

        var run = Run()
        let deadline = ContinuousClock.now + timeout
        var ended: Int32?
        var endedAt: ContinuousClock.Instant?
        var killedAt: ContinuousClock.Instant?
        var buffer = [UInt8](repeating: 0, count: 4096)
        var open = true
        while true {
            if ended == nil {
                var status: Int32 = 0
                let reaped = waitpid(pid, &status, WNOHANG)
                if reaped == pid || (reaped < 0 && errno == ECHILD) {
                    ended = reaped == pid ? status : 0
                    endedAt = .now
                }
            }
            // Once it ended, what it wrote is read for a moment more: a program it left running may hold the pipe.
            if let endedAt, !open || ContinuousClock.now - endedAt > .seconds(1) { break }
            let now = ContinuousClock.now
            if ended == nil, now >= deadline {
                if killedAt == nil {
                    run.timedOut = true
                    kill(-pid, SIGTERM)
                    killedAt = now
                } else if now - killedAt! > .seconds(2) {
                    kill(-pid, SIGKILL)
                }
            }
            guard open else {
                usleep(20_000)
                continue
            }
            var poller = pollfd(fd: pipe[0], events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 50) > 0 else { continue }
            let count = read(pipe[0], &buffer, buffer.count)
            if count <= 0 {
                if count == 0 || (errno != EINTR && errno != EAGAIN) { open = false }
                continue
            }
            run.output.append(contentsOf: buffer[0..<min(count, max(0, outputLimit - run.output.count))])
        }
        // The group's other programs go with it.
        kill(-pid, SIGKILL)
        if let status = ended {
            if status & 0x7F == 0 {
                run.status = (status >> 8) & 0xFF
            } else {
                run.signal = status & 0x7F
            }
        }
        return run
    }
}
