#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A domain folder on disk as a ``FileTree``: paths are absolute, links are the file system's, and every file is read
/// through ``ConfinedFile``.
public struct FolderFileTree: FileTree {
    public let root: String
    /// A folder held open that the files read are opened from when they lie below it (``OpenFolder``).
    public let openFolder: OpenFolder?

    /// The tree of the domain folder at `root`; files below `openFolder` are opened from it.
    public init(root: String, from openFolder: OpenFolder? = nil) {
        self.root = root
        self.openFolder = openFolder
    }

    public func entry(at path: String, followingLinks: Bool) -> FileTreeEntry {
        var status = stat()
        guard (followingLinks ? stat(path, &status) : lstat(path, &status)) == 0 else { return .missing }
        switch status.st_mode & S_IFMT {
        case S_IFDIR: return .folder
        case S_IFLNK: return .link
        default: return .file
        }
    }

    public func realPath(_ path: String) -> String? { Confinement.realPath(path) }

    public func names(in folder: String) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
    }

    public func read(_ path: String, within confinement: Confinement, maximumBytes: Int, refusingPrivateKeys: Bool)
        -> Result<ConfinedFile.Contents, ConfinedFile.Refusal>
    {
        ConfinedFile.read(
            path, within: confinement, maximumBytes: maximumBytes, refusingPrivateKeys: refusingPrivateKeys,
            from: openFolder)
    }

    public func modified(_ path: String) -> Int {
        var status = stat()
        guard stat(path, &status) == 0 else { return 0 }
        return Int(status.st_mtim.tv_sec)
    }
}
