import AASACore
import Foundation
public import Logging

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
/// Three parts do the work: the ``WatchTable`` (what each inotify watch stands for, and the changes seen), the
/// ``FolderWalk`` (watching the roots and the entries below them, and renewing those watches), and the
/// ``WatchLoop`` (the thread reading the events and calling `onChange`).
///
/// Lifecycle: ``init(roots:quietPeriod:maximumDelay:logger:entriesWatchedByLoad:onChange:)`` opens inotify and
/// adds the watches, so changes made from then on are not missed; ``start()`` starts the thread that waits in
/// `poll()`; ``stop()`` wakes it and joins it. Everything the thread touches is immutable or behind a `Mutex`.
public final class ConfigWatcher: Service, Sendable {
    /// The folders watched, each with the folders and symlinked files directly below it, and every folder below
    /// a domain folder (its `pages/`).
    public var roots: [String] { walk.roots }

    private let walk: FolderWalk
    private let loop: WatchLoop

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
        walk = FolderWalk(roots: roots, inotify: try Inotify(), logger: logger)
        loop = try WatchLoop(
            walk: walk, quietPeriod: quietPeriod, maximumDelay: maximumDelay, logger: logger, onChange: onChange)
        walk.renew(for: FolderChanges(everything: !entriesWatchedByLoad))
    }

    deinit {
        loop.stop()
    }

    /// Kernel thread id of the running thread, for tests that check it is gone after ``stop()``.
    var threadID: Int32 { loop.threadID }

    /// Starts the thread that waits for events. Calling it again, or after ``stop()``, does nothing.
    public func start() {
        loop.start()
    }

    /// Wakes the thread, waits until it has ended, and returns. A reload in progress finishes first.
    ///
    /// Calling it again (or from several threads) returns once the thread is gone.
    public func stop() {
        loop.stop()
    }

    /// Watches entry `name` of root `root` (its folder, the symlinked files in it, the folders below it), for a
    /// start about to read it: a change made to it from now on is seen. For entries without watches yet (nothing
    /// is dropped), from any thread: a start's loading threads call it for the folders they are about to read.
    ///
    /// Returns the entries of its folder, listed just after the folder was watched (`nil` when it is not a
    /// folder or could not be listed), for the load to use instead of listing the folder again.
    @discardableResult
    func watchEntry(_ name: String, ofRoot root: WatchRoot, from open: OpenFolder? = nil) -> [DirectoryListing.Entry]? {
        walk.watchEntry(name, ofRoot: root, from: open)
    }

    /// Makes room in the watch table for `count` entries of root `root`, for a start about to watch that many:
    /// the table is changed under a lock every loading thread takes, and growing it entry by entry rehashed every
    /// name several times while the others waited.
    func reserveEntries(_ count: Int, ofRoot root: WatchRoot) {
        walk.reserveEntries(count, ofRoot: root)
    }

    /// Watches every entry of every root that has no watches yet: after a start whose load watched the folders it
    /// read (``watchEntry(_:ofRoot:)``), the entries it did not read (another shard's domains, stray files).
    public func watchRemainingEntries() {
        walk.watchRemainingEntries()
    }
}
