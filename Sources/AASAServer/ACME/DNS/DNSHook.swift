import AASACore
import AASADNS
import Foundation
import Logging
import Synchronization

/// The operator's program for a DNS provider the server does not speak to itself (`--acme-dns-hook`), run as
/// `PATH present FQDN VALUE` before the CA looks and `PATH cleanup FQDN VALUE` after, as lego's `exec` provider and
/// certbot's manual hooks run theirs; FQDN ends with a dot.
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
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = [action, fqdn, value]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        let ended = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in ended.signal() }
        do {
            try process.run()
        } catch {
            throw ACMEFailure(
                .dns, "the DNS hook \(path) cannot be run: \(error.localizedDescription)",
                hint: "give --acme-dns-hook an executable file (chmod +x) the server's user may run")
        }
        let reader = pipe.fileHandleForReading
        let output = Mutex<[UInt8]>([])
        let drained = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            while true {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                output.withLock { kept in
                    kept.append(contentsOf: chunk.prefix(max(0, Self.outputLimit - kept.count)))
                }
            }
            drained.signal()
        }
        var timedOut = false
        if ended.wait(timeout: .now() + timeout.timeInterval) == .timedOut {
            timedOut = true
            process.terminate()
            if ended.wait(timeout: .now() + 2) == .timedOut {
                kill(process.processIdentifier, SIGKILL)
                ended.wait()
            }
        }
        // The hook's children may hold the pipe open: stop reading after a moment.
        _ = drained.wait(timeout: .now() + 1)
        let text = String(decoding: output.withLock { $0 }, as: UTF8.self)
        for line in text.split(whereSeparator: \.isNewline).suffix(50) {
            logger.info(
                "ACME: DNS hook output",
                metadata: ["action": "\(action)", "name": "\(fqdn)", "line": "\(LogEscaping.escape(String(line)))"])
        }
        let last = text.split(whereSeparator: \.isNewline).suffix(3).joined(separator: " / ")
        if timedOut {
            throw ACMEFailure(
                .dns, "the DNS hook did not finish within \(timeout): \(command)",
                hint: "make the hook end sooner, or raise --acme-dns-hook-timeout")
        }
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            throw ACMEFailure(
                .dns,
                "the DNS hook failed (\(process.terminationReason == .exit ? "exit status \(process.terminationStatus)" : "signal \(process.terminationStatus)")): "
                    + command + (last.isEmpty ? "" : ": \(last)"),
                hint: "see the hook's output in the log; run the same command by hand to try it")
        }
    }
}
