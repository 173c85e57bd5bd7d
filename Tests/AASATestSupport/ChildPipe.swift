public import Foundation

/// Writes to a child process's standard input and reads its output without ever trapping.
///
/// Foundation's `FileHandle.write(_:)`, `availableData` and `readDataToEndOfFile()` trap on an I/O error (a broken
/// pipe when the child has already exited), which would end the whole test process and every test running in it.
/// These answer the outcome instead, and SIGPIPE is ignored in the test process before the first write, so a write
/// to a child that is gone fails with `EPIPE` rather than killing the runner.
public enum ChildPipe {
    /// SIGPIPE ignored, once per process.
    private static let ignoringSIGPIPE: Void = { _ = signal(SIGPIPE, SIG_IGN) }()

    /// Ignores SIGPIPE in the test process (once), so a write to a child that is gone fails with `EPIPE`.
    public static func ignoreSIGPIPE() { ignoringSIGPIPE }

    /// Writes all of `bytes` to `handle`; `false` when the reader is gone (the child exited or closed its input).
    @discardableResult
    public static func write(_ bytes: some DataProtocol, to handle: FileHandle) -> Bool {
        ignoringSIGPIPE
        do {
            try handle.write(contentsOf: bytes)
            return true
        } catch {
            return false
        }
    }

    /// Writes `bytes` to `handle` on a thread of its own, then closes `handle`, so a child that writes a lot before it
    /// reads never blocks against a caller that has not started reading yet.
    public static func feed(_ bytes: [UInt8], to handle: FileHandle) {
        ignoringSIGPIPE
        Thread.detachNewThread {
            write(bytes, to: handle)
            try? handle.close()
        }
    }

    /// Everything `handle` yields until its end; what was read before an error when reading fails.
    public static func readToEnd(_ handle: FileHandle) -> Data {
        var data = Data()
        while case let chunk = readAvailable(handle), !chunk.isEmpty { data += chunk }
        return data
    }

    /// What `handle` has now, waiting for at least one byte; empty at its end or on an error.
    public static func readAvailable(_ handle: FileHandle) -> Data {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes {
                Foundation.read(handle.fileDescriptor, $0.baseAddress, $0.count)
            }
            if count >= 0 { return Data(buffer[..<count]) }
            if errno != EINTR { return Data() }
        }
    }
}
