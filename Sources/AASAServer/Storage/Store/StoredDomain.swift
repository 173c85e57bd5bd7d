public import AASACore
public import Foundation

/// One domain as the store holds it: its site.json and every file of its folder besides, by path relative to the
/// domain folder (`pages/index.html`).
public struct StoredDomain: Sendable, Equatable {
    /// The host name.
    public var name: String
    /// The site.json bytes, as written.
    public var siteJSON: [UInt8]
    /// Every other file, by relative path.
    public var files: [String: [UInt8]]

    /// A domain from its parts.
    public init(name: String, siteJSON: [UInt8], files: [String: [UInt8]] = [:]) {
        self.name = name
        self.siteJSON = siteJSON
        self.files = files
    }

    /// The domain's files as the tree a load reads (site.json and every other file, by path below a root named after
    /// the domain), every file dated `modified`.
    public func tree(modified: Date) -> MemoryFileTree {
        var all = files
        all[SiteConfigLoader.fileName] = siteJSON
        return MemoryFileTree(
            root: name, files: all,
            modified: CheckedNumber.clamped(modified.timeIntervalSince1970.rounded(.down), to: Int.min...Int.max))
    }
}
