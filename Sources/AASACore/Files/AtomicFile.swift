#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The one way the tools write a file (`import`, `sign --out`, `certs dev`, key material): whole or not at all.
///
/// The bytes go to a new temporary file beside the target, created with `O_EXCL | O_NOFOLLOW` under an
/// unpredictable name (so nobody can plant a file or a link there first), with its mode set by `fchmod` (the umask
/// cannot widen a key's 0600), synced, renamed over the target, and the folder synced, so after a crash the target
/// holds the old bytes or the new ones. On any failure the temporary file is removed: nothing is left behind.
public enum AtomicFile {
    /// Why a file could not be written: what failed, on which path, and the system's reason.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// The step that failed ("create", "write", "sync", "rename", "sync the folder of").
        public var step: String
        /// The path it failed on.
        public var path: String
        /// The system's reason (`strerror`).
        public var reason: String

        /// `could not <step> '<path>': <reason>`.
        public var description: String { "could not \(step) '\(path)': \(reason)" }
    }

    /// Replaces `path` with `bytes`, with permission bits `mode`.
    public static func write(_ bytes: [UInt8], to path: String, mode: Int = 0o644) throws(Failure) {
        let mode = mode_t(mode)
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        var temporary = ""
        var descriptor: Int32 = -1
        for _ in 0..<8 where descriptor < 0 {
            let suffix = String(UInt64.random(in: .min ... .max), radix: 16)
            temporary = (folder == "/" ? "" : folder) + "/." + name + ".tmp-" + suffix
            descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode)
            if descriptor < 0 && errno != EEXIST { break }
        }
        guard descriptor >= 0 else { throw failure("create", temporary) }
        var isOpen = true
        defer { if isOpen { close(descriptor) } }
        func abandon(_ step: String, _ at: String) -> Failure {
            let error = failure(step, at)
            if isOpen { close(descriptor) }
            isOpen = false
            unlink(temporary)
            return error
        }
        guard fchmod(descriptor, mode) == 0 else { throw abandon("set the mode of", temporary) }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { systemWrite(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { throw abandon("write", temporary) }
            offset += written
        }
        guard fsync(descriptor) == 0 else { throw abandon("sync", temporary) }
        isOpen = false
        guard close(descriptor) == 0 else {
            let error = failure("close", temporary)
            unlink(temporary)
            throw error
        }
        guard rename(temporary, path) == 0 else {
            let error = failure("move into place", path)
            unlink(temporary)
            throw error
        }
        let directory = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else { throw failure("sync the folder of", path) }
        defer { close(directory) }
        guard fsync(directory) == 0 else { throw failure("sync the folder of", path) }
    }

    private static func failure(_ step: String, _ path: String) -> Failure {
        Failure(step: step, path: path, reason: String(cString: strerror(errno)))
    }
}

/// `write(2)`, named apart from ``AtomicFile/write(_:to:mode:)``.
private func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, buffer, count)
}
