/// What changed in the watched folders since the last reload, as ``ConfigWatcher`` saw it: the entries directly
/// below each root (domain folders below the config folder, certificate folders below the certificate folder) whose
/// files changed, or that anything may have (events were lost, a root was replaced, a `..data` link swapped
/// behind a root), when a reload must check every entry.
public struct FolderChanges: Sendable, Equatable {
    /// Whether anything may have changed: the reload checks every entry, as SIGHUP does.
    public var everything: Bool
    /// The changed entries' names, by their root.
    private var changed: [WatchRoot: Set<String>] = [:]

    /// No change, or (with `everything`) any.
    public init(everything: Bool = false) {
        self.everything = everything
    }

    /// Notes a change of the entry `name` below root `root`.
    public mutating func insert(_ name: String, below root: WatchRoot) {
        changed[root, default: []].insert(name)
    }

    /// The changed entries below root `root`.
    public func entries(below root: WatchRoot) -> Set<String> {
        changed[root] ?? []
    }
}
