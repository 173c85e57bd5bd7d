public import AASACore

/// One file of a domain's `pages/` as the tenant API lists it.
///
/// Its revision names its bytes in both stores: the first 16 hex digits of their SHA-256, so the same file has the
/// same revision in a folder and in the store, and a file written outside the API (a git pull, `store push`) has one
/// too.
public struct DomainPage: Sendable, Equatable {
    /// The path inside `pages/`, without a leading slash (`about/index.html`); served at `/<path>`.
    public var path: String
    /// Its size.
    public var bytes: Int
    /// Its revision.
    public var revision: String

    /// A listing entry.
    public init(path: String, bytes: Int, revision: String) {
        self.path = path
        self.bytes = bytes
        self.revision = revision
    }

    /// The revision naming `bytes`: the first 16 hex digits of their SHA-256. A page's in both stores, and a
    /// site.json's in a config folder (``FolderDomainRepository``), so the same bytes always have the same revision.
    public static func revision(of bytes: [UInt8]) -> String {
        String(SHA256.hex(bytes).prefix(16))
    }
}

/// A page's bytes and revision.
public struct PageDocument: Sendable, Equatable {
    /// The bytes as stored.
    public var bytes: [UInt8]
    /// Their revision (``DomainPage/revision(of:)``).
    public var revision: String

    /// A page.
    public init(bytes: [UInt8], revision: String) {
        self.bytes = bytes
        self.revision = revision
    }
}

/// What a page write did (or, for a dry run, would do).
public struct PageWrite: Sendable, Equatable {
    /// The page's revision after the write.
    public var revision: String
    /// Whether the page did not exist before.
    public var created: Bool

    /// A result.
    public init(revision: String, created: Bool) {
        self.revision = revision
        self.created = created
    }
}

/// The caps of a domain's `pages/` a write is checked against, with the new file in place of the old one: those of
/// ``PageLoader`` (a load refuses a folder over them), so the API never writes a folder the server would not load.
public struct PageLimits: Sendable, Equatable {
    /// Most files (``PageLoader/maximumFiles``); the landing templates are not counted, as a load does not serve them.
    public var maximumFiles: Int
    /// Largest total (``PageLoader/maximumTotalBytes``), the landing templates not counted.
    public var maximumTotalBytes: Int
    /// The paths inside `pages/` that are landing templates (read, never served).
    public var templates: Set<String>

    /// The limits of `loader`, with `templates` set apart.
    public init(_ loader: PageLoader = PageLoader(), templates: Set<String> = []) {
        maximumFiles = loader.maximumFiles
        maximumTotalBytes = loader.maximumTotalBytes
        self.templates = templates
    }

    /// The error when writing `size` bytes as `path` over `current` (the domain's files) passes a cap, or `nil`.
    func problem(_ name: String, path: String, size: Int, current: [DomainPage]) -> DomainRepositoryError? {
        guard !templates.contains(path) else { return nil }
        let others = current.filter { $0.path != path && !templates.contains($0.path) }
        if others.count + 1 > maximumFiles {
            return DomainRepositoryError(
                .limit,
                "\(name) has \(others.count) files in pages/ besides '\(path)'; a domain may have at most "
                    + "\(maximumFiles) (page-too-large); delete some first, or serve large sites from another server")
        }
        let total = others.reduce(0) { $0 + $1.bytes } + size
        if total > maximumTotalBytes {
            return DomainRepositoryError(
                .limit,
                "\(name)'s pages/ would hold \(total) bytes with '\(path)' (\(size) bytes); a domain's pages may "
                    + "total at most \(maximumTotalBytes) bytes (pages-too-large); delete some first, or serve large "
                    + "files from a CDN")
        }
        return nil
    }
}
