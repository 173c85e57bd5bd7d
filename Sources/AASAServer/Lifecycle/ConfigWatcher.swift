import AASACore
import Foundation
public import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Watches the config and certificate folders with inotify and calls `onChange` once a burst of changes settles,
/// with what changed (``FolderChanges``): the entries below each root (domain folders, certificate folders) whose
/// files changed, so a reload reads only those, or everything when the watcher cannot tell.
///
/// Covers what operators actually do: editing, adding and removing `<domain>/site.json` or whole folders;
/// certbot renewals (new files under `archive/`, symlinks switched in `live/<name>/`); and Kubernetes
/// ConfigMap and Secret updates, which write a new hidden folder and rename a new `..data` symlink over the
/// old one. Every folder is watched through symlinks (no `IN_DONT_FOLLOW`), and so is every symlinked file
/// inside a watched folder; the watches are renewed before each reload, so a folder that appeared or was
/// swapped is watched from then on. Renewal walks only the entries that changed, so its cost follows the change,
/// not the number of domains.
///
/// Lifecycle: ``init(roots:quietPeriod:maximumDelay:logger:onChange:)`` opens inotify and adds the
/// watches, so changes made from then on are not missed; ``start()`` starts the thread that waits in `poll()`;
/// ``stop()`` wakes it and joins it. The thread keeps the watcher alive until ``stop()``. Everything the thread
/// touches is immutable or behind a `Mutex`.
public final class ConfigWatcher: Sendable {
    /// The folders watched, each with the folders and symlinked files directly below it, and every folder below
    /// a domain folder (its `pages/`).
    public let roots: [String]

    private let inotify: Int32
    /// A pipe that ``stop()`` writes to, so the thread leaves `poll()` at once: read end, write end.
    private let wakeup: (read: Int32, write: Int32)
    private let quietPeriod: Duration
    private let maximumDelay: Duration
    private let logger: Logger
    private let onChange: @Sendable (FolderChanges) -> Void
    private let watches: Mutex<WatchTable>
    private let lifecycle = Mutex(Lifecycle())

    /// The index of the config folder among a server's roots (its ``LoadScope`` reads root 0's entries as domains).
    static let configRoot = 0
    /// The index of the certificate folder among a server's roots.
    static let certificateRoot = 1

    /// Kernel thread id of the running thread, for tests that check it is gone after ``stop()``.
    let threadID = Atomic<Int32>(0)

    /// What a watch descriptor stands for. inotify gives one descriptor per inode, so two paths leading to one
    /// file (two symlinks to a shared target) share it, and an event on it counts for each of its owners.
    private struct WatchTable {
        /// Watch descriptor → what its events are about.
        var owners = DescriptorMap<FewValues<Owner>>()
        /// The descriptors watching each entry below each root (by root, then entry name), to drop when the entry
        /// is watched anew: a dictionary of names for each root, whose keys are smaller than ``Owner``s.
        var entryWatches: [[String: FewValues<Int32>]]
        /// The descriptors watching each root and the folder holding it.
        var rootWatches: [Owner: FewValues<Int32>] = [:]
        /// Changes seen since the last call of `onChange`.
        var pending = FolderChanges()
        /// Whether running out of watches was already logged.
        var reportedLimit = false

        init(rootCount: Int) {
            entryWatches = Array(repeating: [:], count: rootCount)
        }

        /// The descriptors watching for `owner`.
        subscript(watching owner: Owner) -> FewValues<Int32>? {
            get {
                guard case .entry(let root, let name) = owner else { return rootWatches[owner] }
                return entryWatches[root][name]
            }
            set {
                guard case .entry(let root, let name) = owner else { return rootWatches[owner] = newValue }
                entryWatches[root][name] = newValue
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
            _ owner: Owner, with watched: [(path: String, watch: Int32)], unused: inout [Int32],
            refused: inout String?
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
    }

    /// What a watch's events are about.
    private enum Owner: Hashable {
        /// The folder holding root `index`: only events naming the root count, and they may change anything.
        case parent(root: Int)
        /// Root `index` itself: an event names the entry it is about.
        case root(Int)
        /// The entry `name` directly below root `index`, or anything inside it.
        case entry(root: Int, name: String)
    }

    private struct Lifecycle {
        var thread: pthread_t?
        var stopped = false
    }

    /// What every watch listens for: anything that can change what a load reads. No `IN_DONT_FOLLOW`, so a
    /// symlinked folder or file is watched at its target.
    private static let mask: UInt32 =
        UInt32(IN_CREATE) | UInt32(IN_DELETE) | UInt32(IN_MODIFY) | UInt32(IN_CLOSE_WRITE) | UInt32(IN_MOVED_TO)
        | UInt32(IN_MOVED_FROM) | UInt32(IN_ATTRIB) | UInt32(IN_DELETE_SELF) | UInt32(IN_MOVE_SELF)

    /// Opens inotify and watches `roots`; nothing is called until ``start()``.
    ///
    /// - Parameters:
    ///   - roots: the folders to watch (the config folder, the certificate folder); one that does not exist
    ///     yet is watched for from its parent.
    ///   - quietPeriod: how long events must stop before `onChange` runs.
    ///   - maximumDelay: the longest `onChange` waits after the first event of a burst.
    ///   - entriesWatchedByLoad: watch only the roots (and the folders holding them) now, and leave each entry to
    ///     ``watchEntry(_:ofRoot:)`` as a load reads it, then ``watchRemainingEntries()``: a start that watches each
    ///     folder just before reading it, on the thread reading it, instead of watching all of them first.
    ///   - onChange: runs on the watcher's thread, one call at a time, with what changed since the last call.
    /// - Throws: a `POSIXError` when inotify or the wake-up pipe cannot be created (e.g. the per-user instance limit).
    public init(
        roots: [String], quietPeriod: Duration = .milliseconds(250), maximumDelay: Duration = .seconds(1),
        logger: Logger, entriesWatchedByLoad: Bool = false, onChange: @escaping @Sendable (FolderChanges) -> Void
    ) throws {
        let inotify = inotify_init1(Int32(IN_NONBLOCK) | Int32(IN_CLOEXEC))
        guard inotify >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else {
            let code = errno
            close(inotify)
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
        }
        for end in pipeEnds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        let wakeup = (read: pipeEnds[0], write: pipeEnds[1])
        self.roots = roots
        watches = Mutex(WatchTable(rootCount: roots.count))
        self.inotify = inotify
        self.wakeup = wakeup
        self.quietPeriod = quietPeriod
        self.maximumDelay = maximumDelay
        self.logger = logger
        self.onChange = onChange
        renewWatches(for: FolderChanges(everything: !entriesWatchedByLoad))
    }

    deinit {
        close(inotify)
        close(wakeup.read)
        close(wakeup.write)
    }

    /// Starts the thread that waits for events. Calling it again, or after ``stop()``, does nothing.
    public func start() {
        lifecycle.withLock { state in
            guard state.thread == nil, !state.stopped else { return }
            // The one retain handed to the thread; it releases it when its loop ends.
            let context = Unmanaged.passRetained(self).toOpaque()
            var thread = pthread_t()
            let result = pthread_create(
                &thread, nil,
                { context in
                    let watcher = Unmanaged<ConfigWatcher>.fromOpaque(context!).takeRetainedValue()
                    watcher.run()
                    return nil
                }, context)
            guard result == 0 else {
                Unmanaged<ConfigWatcher>.fromOpaque(context).release()
                logger.error(
                    "could not start the file watcher; reload with SIGHUP", metadata: ["errno": "\(result)"])
                return
            }
            state.thread = thread
        }
    }

    /// Wakes the thread, waits until it has ended, and returns. A reload in progress finishes first.
    ///
    /// Calling it again (or from several threads) returns once the thread is gone.
    public func stop() {
        let thread = lifecycle.withLock { state -> pthread_t? in
            state.stopped = true
            defer { state.thread = nil }
            return state.thread
        }
        guard let thread else { return }
        var byte: UInt8 = 1
        _ = write(wakeup.write, &byte, 1)
        pthread_join(thread, nil)
    }

    // MARK: The thread

    private func run() {
        Self.nameThisThread("aasa-watch")
        threadID.store(Self.currentThreadID(), ordering: .relaxed)
        defer { threadID.store(0, ordering: .relaxed) }
        var debouncer = ChangeDebouncer(quietPeriod: quietPeriod, maximumDelay: maximumDelay)
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var descriptors = [
            pollfd(fd: inotify, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakeup.read, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            // Without pending events, wake once a second anyway: stop() does not depend on the wake-up pipe alone.
            var timeout: Int32 = 1000
            if let deadline = debouncer.deadline {
                let remaining = ContinuousClock.now.duration(to: deadline)
                timeout = max(0, min(timeout, Int32(remaining / .milliseconds(1)) + 1))
            }
            let ready = poll(&descriptors, nfds_t(descriptors.count), timeout)
            if ready < 0 && errno != EINTR {
                logger.error("file watcher stopped; reload with SIGHUP", metadata: ["errno": "\(errno)"])
                return
            }
            if descriptors[1].revents != 0 || lifecycle.withLock({ $0.stopped }) { return }
            if ready > 0 && descriptors[0].revents & Int16(POLLIN) != 0 && drainEvents(into: &buffer) {
                debouncer.record(at: .now)
            }
            if debouncer.fire(at: .now) {
                let changes = watches.withLock { table in
                    defer { table.pending = FolderChanges() }
                    return table.pending
                }
                // Watch new folders before loading, so nothing written into them after this point is missed.
                renewWatches(for: changes)
                onChange(changes)
            }
        }
    }

    /// Reads every queued event into the pending changes; returns whether any of them can change what a load reads.
    private func drainEvents(into buffer: inout [UInt8]) -> Bool {
        var relevant = false
        while true {
            let count = buffer.withUnsafeMutableBytes { read(inotify, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return relevant }
            buffer.withUnsafeBytes { bytes in
                var offset = 0
                let header = MemoryLayout<inotify_event>.size
                watches.withLock { table in
                    while offset + header <= count {
                        let wd = bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self)
                        let mask = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
                        let length = Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                        let nameBytes = bytes[(offset + header)..<min(count, offset + header + length)]
                        let name = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
                        offset += header + length
                        if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                            table.pending.everything = true  // events were lost: anything may have changed
                            relevant = true
                        } else if mask & UInt32(IN_IGNORED) != 0 {
                            table.forget(wd)
                        } else if let owners = table.owners[wd],
                            record(name: name, owners: owners, into: &table.pending)
                        {
                            relevant = true
                        }
                    }
                }
            }
        }
    }

    /// Adds what an event naming `name` on a watch of `owners` changed to `changes`; returns whether it matters.
    private func record(name: String, owners: FewValues<Owner>, into changes: inout FolderChanges) -> Bool {
        var relevant = false
        for owner in owners {
            switch owner {
            case .parent(let root):
                // The root itself was created, removed or swapped: nothing below it can be trusted.
                guard name == URL(fileURLWithPath: roots[root]).lastPathComponent else { continue }
                changes.everything = true
            case .root(let root):
                if name.isEmpty { continue }
                // A hidden entry of the root is no domain; but Kubernetes' `..data` swap behind a root mounted
                // whole changes every entry whose link leads through it.
                if name.hasPrefix(".") { changes.everything = true } else { changes.insert(name, below: root) }
            case .entry(let root, let entry):
                changes.insert(entry, below: root)
            }
            relevant = true
        }
        return relevant
    }

    /// Names the thread for `top -H`, `ps -L` and debuggers. Through procfs: Glibc's `pthread_setname_np` is
    /// a GNU extension Swift does not import.
    private static func nameThisThread(_ name: String) {
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        _ = name.utf8CString.withUnsafeBufferPointer { write(fd, $0.baseAddress, strlen($0.baseAddress!)) }
    }

    /// The kernel's id of the calling thread, from `/proc/thread-self` (`<pid>/task/<tid>`); `gettid` is not
    /// imported either. 0 when procfs is not mounted.
    private static func currentThreadID() -> Int32 {
        var buffer = [CChar](repeating: 0, count: 64)
        let length = readlink("/proc/thread-self", &buffer, buffer.count - 1)
        guard length > 0 else { return 0 }
        let text = String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return text.split(separator: "/").last.flatMap { Int32($0) } ?? 0
    }

    // MARK: Watches

    /// Watches every folder that matters now and drops the watches of folders that no longer do: below each root
    /// only the entries in `changes`, or all of them when it says everything may have changed. Without `rootsToo`,
    /// only the entries are watched anew, not the roots and the folders holding them.
    ///
    /// Adding a watch on a path whose inode is already watched returns the same descriptor, so renewing
    /// is cheap; a path that now resolves elsewhere (a swapped `..data` or a renewed certbot link) gets a new one.
    private func renewWatches(for changes: FolderChanges = FolderChanges(everything: true), rootsToo: Bool = true) {
        var unused: [Int32] = []
        var refused: String?
        for (index, root) in roots.enumerated() {
            var entries: [String: DirectoryListing.Kind] = [:]
            if changes.everything {
                for entry in DirectoryListing.entries(in: root) ?? [] where !entry.name.hasPrefix(".") {
                    entries[entry.name] = entry.kind
                }
                // Entries watched before and gone now: their watches are dropped below.
                let watched = watches.withLock { table in Array(table.entryWatches[index].keys) }
                for name in watched where entries[name] == nil { entries[name] = .unknown }
            } else {
                for name in changes.entries(below: index) { entries[name] = .unknown }
            }
            // Every entry's subtree listed and watched outside the lock and on every processor (a full renewal
            // lists every domain folder, and a start waits for it); only the table is changed under the lock.
            // Adding a watch before the old ones are dropped is what lets a descriptor both had stay.
            let subtrees = entries.sorted { $0.key < $1.key }.concurrentMap { name, kind in
                (name, kind == .other ? [] : Self.watchedPaths(below: root + "/" + name, watch: self.addWatch).watched)
            }
            if !rootsToo && subtrees.isEmpty { continue }
            let parent = URL(fileURLWithPath: root).deletingLastPathComponent().path
            let (parentWatch, rootWatch) = rootsToo ? (addWatch(parent), addWatch(root)) : (-1, -1)
            watches.withLock { table in
                if rootsToo {
                    // The parent sees the root itself being created, removed or replaced by a symlink swap.
                    table.replace(
                        .parent(root: index), with: [(parent, parentWatch)], unused: &unused, refused: &refused)
                    table.replace(.root(index), with: [(root, rootWatch)], unused: &unused, refused: &refused)
                }
                for (name, watched) in subtrees {
                    table.replace(.entry(root: index, name: name), with: watched, unused: &unused, refused: &refused)
                }
                // A descriptor dropped by one owner and added again by another is still needed.
                unused = unused.filter { table.owners[$0] == nil }
            }
        }
        for wd in Set(unused) { inotify_rm_watch(inotify, wd) }
        // Reported outside the table's lock, which reporting takes.
        if let refused { reportWatchLimit(refused) }
    }

    /// Watches entry `name` of root `root` (its folder, the symlinked files in it, the folders below it), for a
    /// start about to read it: a change made to it from now on is seen. For entries without watches yet (nothing
    /// is dropped), from any thread: a start's loading threads call it for the folders they are about to read.
    ///
    /// Returns the entries of its folder, listed just after the folder was watched (`nil` when it is not a
    /// folder or could not be listed), for the load to use instead of listing the folder again.
    @discardableResult
    func watchEntry(_ name: String, ofRoot root: Int) -> [DirectoryListing.Entry]? {
        guard roots.indices.contains(root) else { return nil }
        let (watched, listing) = Self.watchedPaths(below: roots[root] + "/" + name, watch: addWatch)
        guard !watched.isEmpty else { return nil }
        var unused: [Int32] = []
        var refused: String?
        watches.withLock { table in
            table.replace(.entry(root: root, name: name), with: watched, unused: &unused, refused: &refused)
        }
        if let refused { reportWatchLimit(refused) }
        return listing
    }

    /// Makes room in the watch table for `count` entries of root `root`, for a start about to watch that many:
    /// the table is changed under a lock every loading thread takes, and growing it entry by entry rehashed every
    /// name several times while the others waited.
    func reserveEntries(_ count: Int, ofRoot root: Int) {
        guard roots.indices.contains(root) else { return }
        watches.withLock { $0.entryWatches[root].reserveCapacity(count) }
    }

    /// Watches every entry of every root that has no watches yet: after a start whose load watched the folders it
    /// read (``watchEntry(_:ofRoot:)``), the entries it did not read (another shard's domains, stray files).
    public func watchRemainingEntries() {
        var changes = FolderChanges()
        for (index, root) in roots.enumerated() {
            let watched = watches.withLock { table in Set(table.entryWatches[index].keys) }
            for name in DirectoryListing.names(in: root) ?? [] where !name.hasPrefix(".") && !watched.contains(name) {
                changes.insert(name, below: index)
            }
        }
        renewWatches(for: changes, rootsToo: false)
    }

    /// Adds a watch on `path`: its descriptor, or `-errno`. With `onlyFolder` (`IN_ONLYDIR`), a path that is not a
    /// folder (through symlinks) gets `-ENOTDIR` and no watch: the watch is also the check, with no `stat` first.
    private func addWatch(_ path: String, onlyFolder: Bool = false) -> Int32 {
        let wd = inotify_add_watch(inotify, path, Self.mask | (onlyFolder ? UInt32(IN_ONLYDIR) : 0))
        return wd >= 0 ? wd : -errno
    }

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
    /// folder is known to be one by its watch, so it costs no `stat`.
    private static func watchedPaths(below child: String, watch: (String, Bool) -> Int32) -> (
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
            let entries = DirectoryListing.entries(in: folder)
            if depth == 0 { listing = entries }
            for entry in entries ?? [] where !entry.name.hasPrefix(".") {
                let path = folder + "/" + entry.name
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
        let first = watches.withLock { table in
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
