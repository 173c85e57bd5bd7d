import AASACore
import Foundation
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The folder walk of a ``ConfigWatcher``: watches the roots, the folders holding them, and every entry below them
/// (its folder, the symlinked files in it, the folders below it), and renews those watches after a change, in the
/// watcher's ``WatchTable``.
///
/// Renewal walks only the entries that changed, so its cost follows the change, not the number of domains; a start
/// may leave each entry to the load that reads it (``watchEntry(_:ofRoot:)``), then watch the rest
/// (``watchRemainingEntries()``).
final class FolderWalk: Sendable {
    /// The folders watched.
    let roots: [String]
    /// The inotify instance the watches are added to.
    let inotify: Inotify
    /// What each watch stands for, and the changes seen since the last reload.
    let table: Mutex<WatchTable>
    private let logger: Logger

    /// A walk of `roots`, adding watches to `inotify`; nothing is watched until ``renew(for:rootsToo:)``.
    init(roots: [String], inotify: Inotify, logger: Logger) {
        self.roots = roots
        self.inotify = inotify
        self.logger = logger
        table = Mutex(WatchTable(rootCount: roots.count))
    }

    /// Watches every folder that matters now and drops the watches of folders that no longer do: below each root
    /// only the entries in `changes`, or all of them when it says everything may have changed. Without `rootsToo`,
    /// only the entries are watched anew, not the roots and the folders holding them.
    ///
    /// Adding a watch on a path whose inode is already watched returns the same descriptor, so renewing
    /// is cheap; a path that now resolves elsewhere (a swapped `..data` or a renewed certbot link) gets a new one.
    func renew(for changes: FolderChanges = FolderChanges(everything: true), rootsToo: Bool = true) {
        var unused: [Int32] = []
        var refused: String?
        for (index, root) in roots.enumerated() {
            let watchRoot = WatchRoot(index: index)
            // The entries' folders are listed from the root held open (``OpenFolder``).
            let open = OpenFolder(root)
            var entries: [String: DirectoryListing.Kind] = [:]
            if changes.everything {
                for entry in DirectoryListing.entries(in: root) ?? [] where !entry.name.hasPrefix(".") {
                    entries[entry.name] = entry.kind
                }
                // Entries watched before and gone now: their watches are dropped below.
                let watched = table.withLock { table in Array(table.watchedEntries(of: watchRoot)) }
                for name in watched where entries[name] == nil { entries[name] = .unknown }
            } else {
                for name in changes.entries(below: watchRoot) { entries[name] = .unknown }
            }
            // Every entry's subtree listed and watched outside the lock and on every processor (a full renewal
            // lists every domain folder, and a start waits for it); only the table is changed under the lock.
            // Adding a watch before the old ones are dropped is what lets a descriptor both had stay.
            let subtrees = entries.sorted { $0.key < $1.key }.concurrentMap { name, kind in
                (
                    name,
                    kind == .other
                        ? []
                        : Self.watchedPaths(below: root.joiningPath(name), from: open, watch: self.inotify.addWatch)
                            .watched
                )
            }
            if !rootsToo && subtrees.isEmpty { continue }
            let parent = URL(fileURLWithPath: root).deletingLastPathComponent().path
            let (parentWatch, rootWatch) = rootsToo ? (inotify.addWatch(parent), inotify.addWatch(root)) : (-1, -1)
            table.withLock { table in
                if rootsToo {
                    // The parent sees the root itself being created, removed or replaced by a symlink swap.
                    table.replace(
                        .parent(root: watchRoot), with: [(parent, parentWatch)], unused: &unused, refused: &refused)
                    table.replace(.root(watchRoot), with: [(root, rootWatch)], unused: &unused, refused: &refused)
                }
                for (name, watched) in subtrees {
                    table.replace(
                        .entry(root: watchRoot, name: name), with: watched, unused: &unused, refused: &refused)
                }
                // A descriptor dropped by one owner and added again by another is still needed.
                unused = unused.filter { table.owners[$0] == nil }
            }
        }
        for wd in Set(unused) { inotify.removeWatch(wd) }
        // Reported outside the table's lock, which reporting takes.
        if let refused { reportWatchLimit(refused) }
    }

    /// Watches entry `name` of root `root` (its folder, the symlinked files in it, the folders below it), for a
    /// start about to read it: a change made to it from now on is seen. For entries without watches yet (nothing
    /// is dropped), from any thread: a start's loading threads call it for the folders they are about to read.
    ///
    /// Returns the entries of its folder, listed just after the folder was watched (`nil` when it is not a
    /// folder or could not be listed), for the load to use instead of listing the folder again.
    ///
    /// `open` is the root held open by the load (``OpenFolder``): the folder is listed from it.
    @discardableResult
    func watchEntry(_ name: String, ofRoot root: WatchRoot, from open: OpenFolder? = nil) -> [DirectoryListing.Entry]? {
        guard roots.indices.contains(root.index) else { return nil }
        let (watched, listing) = Self.watchedPaths(
            below: roots[root.index].joiningPath(name), from: open, watch: inotify.addWatch)
        guard !watched.isEmpty else { return nil }
        var unused: [Int32] = []
        var refused: String?
        table.withLock { table in
            table.replace(.entry(root: root, name: name), with: watched, unused: &unused, refused: &refused)
        }
        if let refused { reportWatchLimit(refused) }
        return listing
    }

    /// Makes room in the watch table for `count` entries of root `root`, for a start about to watch that many:
    /// the table is changed under a lock every loading thread takes, and growing it entry by entry rehashed every
    /// name several times while the others waited.
    func reserveEntries(_ count: Int, ofRoot root: WatchRoot) {
        guard roots.indices.contains(root.index) else { return }
        table.withLock { $0.reserveEntries(count, of: root) }
    }

    /// Watches every entry of every root that has no watches yet: after a start whose load watched the folders it
    /// read (``watchEntry(_:ofRoot:)``), the entries it did not read (another shard's domains, stray files).
    func watchRemainingEntries() {
        var changes = FolderChanges()
        for (index, root) in roots.enumerated() {
            let watchRoot = WatchRoot(index: index)
            // Looked up in the table itself (a set of the watched names would hash every domain's name once more), a
            // few thousand names per hold of its lock: the watcher's thread takes it for every event meanwhile.
            let names = (DirectoryListing.names(in: root) ?? []).filter { !$0.hasPrefix(".") }
            for start in stride(from: 0, to: names.count, by: Self.namesPerLookup) {
                let slice = names[start..<min(start + Self.namesPerLookup, names.count)]
                let unwatched = table.withLock { table in slice.filter { !table.isWatched($0, of: watchRoot) } }
                for name in unwatched { changes.insert(name, below: watchRoot) }
            }
        }
        renew(for: changes, rootsToo: false)
    }

    /// How many names ``watchRemainingEntries()`` looks up in the table per hold of its lock.
    static let namesPerLookup = 4096

    /// The paths to watch for one entry of a root, and the listing of the entry's own folder (`nil`, with no
    /// paths, when the entry is not a folder): the folder, the symlinked files in it (Kubernetes'
    /// `site.json -> ..data/site.json`, certbot's `live/` links: watching the link path watches the target, so
    /// edits made through any other path count), and every folder below it (a domain's pages/ and a landing
    /// template beside them are read on every load) with the same symlink rule, a bounded depth and no loops.
    /// Symlinks leading out of the entry's folder are not followed: the loader does not serve them.
    ///
    /// Each path is watched (`watch`, giving its descriptor or `-errno`; folders with `onlyFolder`) as it is
    /// found, and each folder before it is listed: an entry created in a folder after its listing is an event of
    /// the folder's watch, so no folder below is ever left unwatched by a race with its creation. The entry's own
    /// folder is known to be one by its watch, so it costs no `stat`. Folders below `open` are listed from it.
    private static func watchedPaths(below child: String, from open: OpenFolder?, watch: (String, Bool) -> Int32) -> (
        watched: [(path: String, watch: Int32)], listing: [DirectoryListing.Entry]?
    ) {
        let top = watch(child, true)
        // Not a folder, or gone since its root was listed (the root's watch saw that).
        guard top != -ENOTDIR && top != -ENOENT else { return ([], nil) }
        var paths: [(path: String, watch: Int32)] = [(child, top)]
        var listing: [DirectoryListing.Entry]?
        // Resolved only for an entry with folders below it: most hold only site.json (or a certificate's two
        // files), and at 100,000 domains this runs for 200,000 folders at a start.
        var entryReal: String?
        var visited: Set<String> = []
        var pending = [(folder: child, depth: 0)]
        while let (folder, depth) = pending.popLast() {
            if depth > 0 {
                let real = URL(fileURLWithPath: folder).resolvingSymlinksInPath().path
                let within = entryReal ?? URL(fileURLWithPath: child).resolvingSymlinksInPath().path + "/"
                entryReal = within
                guard depth <= 32, visited.count < 4096, real.hasPrefix(within), visited.insert(real).inserted
                else { continue }
                paths.append((folder, watch(folder, true)))
            }
            // One listing, with the kind of each entry readdir gives (an lstat only where the file system does not
            // say).
            let entries = DirectoryListing.entries(in: folder, from: open)
            if depth == 0 { listing = entries }
            // A file the listing says is regular needs no path: only links and folders are looked at further.
            for entry in entries ?? [] where entry.kind != .other && !entry.name.hasPrefix(".") {
                let path = folder.joiningPath(entry.name)
                switch entry.kind == .unknown ? kind(lstatOf: path) : entry.kind {
                case .link:
                    if isDirectory(path) {
                        pending.append((path, depth + 1))
                    } else {
                        paths.append((path, watch(path, false)))
                    }
                case .folder:
                    pending.append((path, depth + 1))
                case .other, .unknown:
                    break
                }
            }
        }
        return (paths, listing)
    }

    /// What `path` is, by `lstat` (`.unknown` when it is gone).
    private static func kind(lstatOf path: String) -> DirectoryListing.Kind {
        var info = stat()
        guard lstat(path, &info) == 0 else { return .unknown }
        switch info.st_mode & S_IFMT {
        case S_IFLNK: return .link
        case S_IFDIR: return .folder
        default: return .other
        }
    }

    private func reportWatchLimit(_ path: String) {
        let first = table.withLock { table in
            defer { table.reportedLimit = true }
            return !table.reportedLimit
        }
        guard first else { return }
        logger.warning(
            "inotify watch limit reached; some changes need SIGHUP (raise fs.inotify.max_user_watches)",
            metadata: ["path": "\(path)"])
    }

    private static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }
}
