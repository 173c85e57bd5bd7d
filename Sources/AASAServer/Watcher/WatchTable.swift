#if canImport(Glibc)
    import Glibc
#endif

/// The inotify table of a ``ConfigWatcher``: what each watch descriptor stands for, and the descriptors watching
/// each root and each entry below a root, with the changes seen since the last reload. inotify gives one
/// descriptor per inode, so two paths leading to one file (two symlinks to a shared target) share it, and an event
/// on it counts for each of its owners.
///
/// A value, kept behind the watcher's lock: the thread reading events and the threads renewing watches share it.
struct WatchTable: Sendable {
    /// What a watch's events are about.
    enum Owner: Hashable, Sendable {
        /// The folder holding `root`: only events naming the root count, and they may change anything.
        case parent(root: WatchRoot)
        /// `root` itself: an event names the entry it is about.
        case root(WatchRoot)
        /// The entry `name` directly below `root`, or anything inside it.
        case entry(root: WatchRoot, name: String)
    }

    /// Watch descriptor → what its events are about.
    private(set) var owners = DescriptorMap<FewValues<Owner>>()
    /// The descriptors watching each entry below each root (by root, then entry name), to drop when the entry
    /// is watched anew: a dictionary of names for each root, whose keys are smaller than ``Owner``s.
    private var entryWatches: [[String: FewValues<Int32>]]
    /// The descriptors watching each root and the folder holding it.
    private var rootWatches: [Owner: FewValues<Int32>] = [:]
    /// Changes seen since the last call of `onChange`.
    var pending = FolderChanges()
    /// Whether running out of watches was already logged.
    var reportedLimit = false

    /// An empty table for `rootCount` roots.
    init(rootCount: Int) {
        entryWatches = Array(repeating: [:], count: rootCount)
    }

    /// The names of the entries of `root` that have watches.
    func watchedEntries(of root: WatchRoot) -> Dictionary<String, FewValues<Int32>>.Keys {
        entryWatches[root.index].keys
    }

    /// Whether entry `name` of `root` has watches.
    func isWatched(_ name: String, of root: WatchRoot) -> Bool {
        entryWatches[root.index][name] != nil
    }

    /// Makes room for `count` entries of `root`.
    mutating func reserveEntries(_ count: Int, of root: WatchRoot) {
        entryWatches[root.index].reserveCapacity(count)
    }

    /// The descriptors watching for `owner`.
    subscript(watching owner: Owner) -> FewValues<Int32>? {
        get {
            guard case .entry(let root, let name) = owner else { return rootWatches[owner] }
            return entryWatches[root.index][name]
        }
        set {
            guard case .entry(let root, let name) = owner else { return rootWatches[owner] = newValue }
            entryWatches[root.index][name] = newValue
        }
    }

    /// Records `wd` as watching for `owner`.
    mutating func add(_ wd: Int32, for owner: Owner) {
        if var known = owners[wd] {
            known.insert(owner)
            owners[wd] = known
        } else {
            owners[wd] = FewValues(owner)
        }
        if var watching = self[watching: owner] {
            watching.insert(wd)
            self[watching: owner] = watching
        } else {
            self[watching: owner] = FewValues(wd)
        }
    }

    /// Forgets every watch of `owner`; returns the descriptors no owner needs any more.
    mutating func drop(_ owner: Owner) -> [Int32] {
        guard let watching = self[watching: owner] else { return [] }
        self[watching: owner] = nil
        var unused: [Int32] = []
        for wd in watching {
            owners[wd] = owners[wd]?.removing(owner)
            if owners[wd] == nil { unused.append(wd) }
        }
        return unused
    }

    /// Puts the watches just added for `owner` in place of the ones it had: the descriptors it no longer needs
    /// go to `unused` (still to be checked against the other owners), and the first path refused for want of
    /// watches (`ENOSPC`) to `refused`. A path that is gone (`ENOENT`) was removed since it was listed: its
    /// parent's watch saw that.
    mutating func replace(
        _ owner: Owner, with watched: [(path: String, watch: Int32)], unused: inout [Int32], refused: inout String?
    ) {
        unused += drop(owner)
        for (path, wd) in watched {
            guard wd >= 0 else {
                if -wd == ENOSPC, refused == nil { refused = path }
                continue
            }
            add(wd, for: owner)
        }
    }

    /// Forgets descriptor `wd`, which the kernel dropped (its inode is gone).
    mutating func forget(_ wd: Int32) {
        for owner in owners.removeValue(forKey: wd).map(Array.init) ?? [] {
            self[watching: owner] = self[watching: owner]?.removing(wd)
        }
    }

    /// Adds what an event naming `name` on descriptor `wd` changed to ``pending``, with `rootNames` the last path
    /// component of each root; returns whether it matters.
    mutating func record(name: String, on wd: Int32, rootNames: [String]) -> Bool {
        guard let owners = owners[wd] else { return false }
        var relevant = false
        for owner in owners {
            switch owner {
            case .parent(let root):
                // The root itself was created, removed or swapped: nothing below it can be trusted.
                guard name == rootNames[root.index] else { continue }
                pending.everything = true
            case .root(let root):
                if name.isEmpty { continue }
                // A hidden entry of the root is no domain; but Kubernetes' `..data` swap behind a root mounted
                // whole changes every entry whose link leads through it.
                if name.hasPrefix(".") { pending.everything = true } else { pending.insert(name, below: root) }
            case .entry(let root, let entry):
                pending.insert(entry, below: root)
            }
            relevant = true
        }
        return relevant
    }

    /// Takes the changes seen since the last call.
    mutating func takePending() -> FolderChanges {
        defer { pending = FolderChanges() }
        return pending
    }
}
