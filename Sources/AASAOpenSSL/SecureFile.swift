import AASACore

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

    /// Writes `bytes` to `path` with permission `mode`, through the project's one atomic writer (``AtomicFile``).
    static func writeAtomically(_ bytes: [UInt8], to path: String, mode: mode_t) throws {
        do {
            try AtomicFile.write(bytes, to: path, mode: Int(mode))
        } catch {
            throw OpenSSLError(.fileSystem, error.description)
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
