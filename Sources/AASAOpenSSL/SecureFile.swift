#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// File helpers for key material: explicit modes, atomic replacement, errno turned into ``OpenSSLError``.
enum SecureFile {
    /// Reads a whole file.
    static func readAll(_ path: String) throws -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw failure("could not open", path) }
        defer { close(fd) }
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure("could not read", path)
            }
            if count == 0 { return result }
            result.append(contentsOf: buffer[0..<count])
        }
    }

    /// Writes `bytes` to `path` with permission `mode`, atomically (temporary file in the same directory, then rename).
    ///
    /// The mode is applied with `fchmod` so the umask cannot widen or narrow it; key files get 0600.
    static func writeAtomically(_ bytes: [UInt8], to path: String, mode: mode_t) throws {
        let temporary = path + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode)
        guard fd >= 0 else { throw failure("could not create", temporary) }
        var closed = false
        defer {
            if !closed { close(fd) }
        }
        guard fchmod(fd, mode) == 0 else { throw failure("could not set the mode of", temporary) }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                unlink(temporary)
                throw failure("could not write", temporary)
            }
            offset += written
        }
        guard fsync(fd) == 0 else { throw failure("could not sync", temporary) }
        closed = true
        guard close(fd) == 0 else { throw failure("could not close", temporary) }
        guard rename(temporary, path) == 0 else {
            unlink(temporary)
            throw failure("could not move into place", path)
        }
    }

    /// Creates `path` and missing parents with `mode` (existing directories are left alone).
    static func createDirectory(_ path: String, mode: mode_t) throws {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, mode) != 0 && errno != EEXIST {
                throw failure("could not create directory", prefix)
            }
        }
    }

    /// Whether a file exists at `path`.
    static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    private static func failure(_ what: String, _ path: String) -> OpenSSLError {
        let reason = String(cString: strerror(errno))
        return OpenSSLError(.fileSystem, "\(what) '\(path)': \(reason)")
    }
}
