/// One of the folders a ``ConfigWatcher`` watches: its place among the watcher's ``ConfigWatcher/roots``.
///
/// A server watches its config folder first and its certificate folder second (``config``, ``certificates``); a
/// reload reads the changed entries below the first as domain folders and below the second as certificate folders.
public struct WatchRoot: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The root's index in ``ConfigWatcher/roots``.
    public let index: Int

    /// The root at `index` of the watcher's roots.
    public init(index: Int) {
        self.index = index
    }

    /// The config folder (`site-config/`): its entries are domain folders.
    public static let config = WatchRoot(index: 0)
    /// The certificate folder (`certs/`): its entries are certificate folders.
    public static let certificates = WatchRoot(index: 1)

    public static func < (lhs: WatchRoot, rhs: WatchRoot) -> Bool { lhs.index < rhs.index }

    public var description: String {
        switch self {
        case .config: "config"
        case .certificates: "certificates"
        default: "root \(index)"
        }
    }
}
