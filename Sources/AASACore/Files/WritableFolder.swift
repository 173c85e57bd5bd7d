#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A folder the server writes into and deletes from on its own (the store cache, ACME's state, the history), made
/// when missing and checked before it is used: it must be a real folder, not a symbolic link, owned by the server's
/// user and writable by nobody else. Another user who could write into it, or a link that points it elsewhere, could
/// make the server write, or delete, files it never meant to touch: such a folder is refused with what to fix.
///
/// Inside a checked folder, no other user can replace an entry, so the server's own writes (a new file renamed over
/// its place, ``AtomicFile``) and deletions (`unlink`, which removes a link, never what it points to) stay inside it.
public enum WritableFolder {
    /// Why a folder is refused: its path, what is wrong and the fix.
    public struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        /// The folder.
        public var path: String
        /// What is wrong with it.
        public var problem: String
        /// What to do.
        public var fix: String

        public var description: String { "\(path): error: \(problem); fix: \(fix)" }
    }

    /// Makes `path` with `mode` when it is missing (the folders above it too, as `mkdir -p`), then ``check(_:)``s it.
    ///
    /// - Throws: ``Refusal`` when it cannot be made or is refused.
    public static func prepare(_ path: String, mode: Int = 0o700) throws(Refusal) {
        var status = stat()
        if lstat(path, &status) != 0 {
            guard errno == ENOENT else { throw refusal(path, "cannot be read (\(reason()))") }
            try make(path, mode: mode_t(mode))
        }
        try check(path)
    }

    /// Refuses `path` unless it is a folder (not a symbolic link to one), owned by the effective user, and not
    /// writable by group or others.
    ///
    /// - Throws: ``Refusal`` naming what is wrong and the fix.
    public static func check(_ path: String) throws(Refusal) {
        var status = stat()
        guard lstat(path, &status) == 0 else { throw refusal(path, "cannot be read (\(reason()))") }
        let kind = status.st_mode & S_IFMT
        if kind == S_IFLNK {
            throw Refusal(
                path: path, problem: "is a symbolic link; the server writes and deletes files only in a real folder",
                fix: "give the folder the link points to, or replace the link with a folder")
        }
        guard kind == S_IFDIR else {
            throw Refusal(path: path, problem: "is not a folder", fix: "remove it, or give another path")
        }
        let user = geteuid()
        if status.st_uid != user {
            throw Refusal(
                path: path, problem: "is owned by uid \(status.st_uid), not by the server's user (uid \(user))",
                fix: "chown \(user) '\(path)', or give a folder of the server's user")
        }
        if status.st_mode & 0o022 != 0 {
            let mode = String(status.st_mode & 0o7777, radix: 8)
            throw Refusal(
                path: path, problem: "is writable by group or others (mode \(mode))",
                fix: "chmod go-w '\(path)' (the server makes its folders 0700)")
        }
    }

    /// Makes `path` and the missing folders above it, each with `mode`.
    private static func make(_ path: String, mode: mode_t) throws(Refusal) {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += "/" + component
            if mkdir(prefix, mode) != 0 && errno != EEXIST {
                throw refusal(path, "cannot be created (\(reason()) at '\(prefix)')")
            }
        }
    }

    private static func refusal(_ path: String, _ problem: String) -> Refusal {
        Refusal(path: path, problem: problem, fix: "give a folder the server's user can create and write")
    }

    private static func reason() -> String { String(cString: strerror(errno)) }
}
