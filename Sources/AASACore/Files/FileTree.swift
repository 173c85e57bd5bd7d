/// The files of one domain as a load reads them (``SiteConfigLoader``, ``PageLoader``): its folder on disk
/// (``FolderFileTree``), or the rows of a store held in memory (``MemoryFileTree``).
///
/// Places are named by paths that start at ``root``, the domain folder: an absolute path for a folder on disk,
/// `shop.example/pages/a.html` for a stored domain. Every finding of a load names a file by such a path, so a stored
/// domain's diagnostics read `<domain>/<path>:line:col` with no rewriting.
public protocol FileTree: Sendable {
    /// The domain folder (holding `site.json`).
    var root: String { get }

    /// What lies at `path`; with `followingLinks`, what a symbolic link there leads to.
    func entry(at path: String, followingLinks: Bool) -> FileTreeEntry

    /// Where `path` really is, every link resolved, or `nil` when nothing is there.
    func realPath(_ path: String) -> String?

    /// The names in the folder at `path` (a real path), in no particular order; none when it is not a folder.
    func names(in folder: String) -> [String]

    /// `path` whole, when it is a regular file below `confinement` of at most `maximumBytes` bytes (and, with
    /// `refusingPrivateKeys`, holding no PEM private key), as ``ConfinedFile/read(_:within:maximumBytes:refusingPrivateKeys:)``
    /// reads a file on disk.
    func read(_ path: String, within confinement: Confinement, maximumBytes: Int, refusingPrivateKeys: Bool)
        -> Result<ConfinedFile.Contents, ConfinedFile.Refusal>

    /// The modification time of `path`, in seconds since 1970; 0 when it has none.
    func modified(_ path: String) -> Int
}

/// What lies at a path of a ``FileTree``.
public enum FileTreeEntry: Sendable, Equatable {
    /// Nothing (or a broken link, followed).
    case missing
    /// A folder.
    case folder
    /// A symbolic link (only when links are not followed).
    case link
    /// Anything else: a regular file, or what reading refuses (a FIFO, a device).
    case file
}
