#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A folder held open for the length of one read of the paths below it, which are then opened from it: the kernel
/// walks only the components below the folder, not every component of an absolute path again.
///
/// A start opens five paths of every domain below two roots (the domain's folder and `site.json`, the certificate
/// folder and its two files), each several components deep: walked from `/`, those lookups were a twentieth of a
/// start's CPU at 100,000 domains (docs/benchmarks.md).
///
/// A path opened from the folder resolves as the same path would from `/`, links and `..` included, against the
/// folder as it was when this was made: a root replaced meanwhile (a symlink swapped to another folder) is read as
/// it was until the next read makes a new one, as its watch then reloads.
public final class OpenFolder: Sendable {
    /// The folder's path, as the paths opened from it start.
    public let path: String
    /// The open folder.
    private let descriptor: Int32

    /// Opens the folder at `path`; `nil` when it cannot be opened (paths are then opened from `/`, and fail or not as
    /// they would have).
    public init?(_ path: String) {
        let descriptor = systemOpen(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        self.path = path
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }

    /// Opens `path` with `flags`: from this folder when `path` is its path, a slash and more, as given otherwise.
    public func open(_ path: String, _ flags: Int32) -> Int32 {
        guard let below = Confinement.offset(of: path, below: self.path), below < path.utf8.count else {
            return systemOpen(path, flags)
        }
        return path.withCString { openat(descriptor, $0 + below, flags) }
    }

    /// Opens `path` with `flags`, from `folder` when there is one (``open(_:_:)``).
    public static func open(_ path: String, _ flags: Int32, from folder: OpenFolder?) -> Int32 {
        folder?.open(path, flags) ?? systemOpen(path, flags)
    }
}

/// The system's `open`, which ``OpenFolder``'s own methods hide.
private func systemOpen(_ path: String, _ flags: Int32) -> Int32 {
    open(path, flags)
}
