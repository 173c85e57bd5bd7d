#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where the files read for one domain may lie: below the domain folder's real location (symlinks resolved),
/// which itself lies below the config folder's, and never below an excluded folder (the certificate folder).
///
/// Every file a domain names (site.json, its pages, the landing template, touch icons, signing identities) is
/// read through ``ConfinedFile``, which checks the descriptor it opened against this: a tenant who can write one
/// domain folder cannot make the server read, serve or sign with a file of another domain or a private key.
public struct Confinement: Sendable, Hashable {
    /// The real path of the folder every file must lie below.
    public var folder: String
    /// Real paths of folders no file may lie below, even when they are inside ``folder``.
    public var excluded: [String]

    /// Creates a confinement to `folder` (a real path), excluding `excluded` (real paths).
    public init(folder: String, excluded: [String] = []) {
        self.folder = folder
        self.excluded = excluded
    }

    /// No confinement: for the operator's own files (the certificate folder, whose certbot `live/` links lead into
    /// `archive/`; files named on the command line), which are still read only when regular and within their cap.
    public static let anywhere = Confinement(folder: "/")

    /// The confinement narrowed to `subfolder`, a real path below ``folder`` (e.g. `pages/`).
    public func narrowed(to subfolder: String) -> Confinement {
        Confinement(folder: subfolder, excluded: excluded)
    }

    /// Why `realPath` may not be read, or `nil` when it lies below ``folder`` and below no excluded folder.
    public func refusal(of realPath: String) -> ConfinedFile.Refusal? {
        guard Self.path(realPath, isWithin: folder) else { return .outside(realPath, allowed: folder) }
        if let excluded = excluded.first(where: { Self.path(realPath, isWithin: $0) }) {
            return .excluded(realPath, folder: excluded)
        }
        return nil
    }

    /// Whether `path` is `folder` itself or lies below it (both real, absolute paths), byte for byte.
    public static func path(_ path: String, isWithin folder: String) -> Bool {
        folder == "/" || path.hasSameBytes(as: folder) || offset(of: path, below: folder) != nil
    }

    /// Where what follows `folder` and a slash in `path` starts, in UTF-8 bytes (possibly its end), when `path`
    /// starts so; `nil` otherwise. Compared byte for byte: a path names bytes, not text, so a folder named `é`
    /// composed is not one named `é` decomposed, which `hasPrefix` would take for the same.
    public static func offset(of path: String, below folder: String) -> Int? {
        func offset(_ path: UnsafeBufferPointer<UInt8>, _ folder: UnsafeBufferPointer<UInt8>) -> Int? {
            guard path.count > folder.count, path[folder.count] == 0x2F,
                folder.isEmpty || memcmp(path.baseAddress!, folder.baseAddress!, folder.count) == 0
            else { return nil }
            return folder.count + 1
        }
        // In place where both lend their bytes (`withUTF8`, being mutating, copied each); else from copies.
        func inPlace(_ path: UnsafeBufferPointer<UInt8>) -> Int?? {
            folder.utf8.withContiguousStorageIfAvailable { offset(path, $0) }
        }
        if case .some(.some(let answer)) = path.utf8.withContiguousStorageIfAvailable(inPlace) { return answer }
        return Array(path.utf8).withUnsafeBufferPointer { path in
            Array(folder.utf8).withUnsafeBufferPointer { offset(path, $0) }
        }
    }

    /// Whether `path` names a place below whatever folder it is taken from: relative, no empty, `.` or `..` segment,
    /// no NUL (a stored file's path, checked before it is read or written).
    public static func isRelativePathInside(_ path: String) -> Bool {
        !path.isEmpty && !path.hasPrefix("/") && !path.contains("\0")
            && path.split(separator: "/", omittingEmptySubsequences: false).allSatisfy {
                !$0.isEmpty && $0 != "." && $0 != ".."
            }
    }

    /// The real path of `path` (every symlink resolved, absolute), or `nil` when it does not exist.
    public static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
