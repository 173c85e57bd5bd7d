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

/// Reads `site-config/<domain>/pages/` into memory at load, so serving a page is a memory copy.
///
/// Only what a request may see is loaded: no dotfiles (except a top-level `.well-known/`), nothing a symlink
/// leads to outside `pages/`, no name that cannot be requested safely. Every file is read through
/// ``ConfinedFile``: a regular file inside the domain's ``Confinement``, never one holding a private key, checked on
/// the open descriptor. Each file, the whole folder and all domains together (``PagesBudget``) have a size cap,
/// checked before a file is read, and going over it is an error naming the file and the limit. HTML pages get the
/// Smart App Banner and touch-icon links injected here, once (``HeadMarkup``).
public struct PageLoader: Sendable {
    /// The folder name inside a domain folder.
    public static let folderName = "pages"
    /// The landing template used when `pages/_landing.html` exists and none is configured.
    public static let defaultTemplate = "pages/_landing.html"

    /// The path of `config`'s landing template in the domain folder: the configured one, else ``defaultTemplate``.
    /// A load reads it (when it is there) and never serves it; any other file of `pages/` is a page.
    public static func templatePath(_ config: SiteConfig) -> String {
        config.pages.landingPage.template ?? defaultTemplate
    }

    /// Largest file loaded.
    public var maximumFileBytes = 16 << 20
    /// Largest total of a domain's files.
    public var maximumTotalBytes = 64 << 20
    /// Most files per domain.
    public var maximumFiles = 10_000
    /// Most entries (files, folders, links, names that cannot be served) the walk looks at per domain: each may
    /// cost a finding, so a tenant's folder of names decides neither the work nor the findings of a load.
    public var maximumEntries = 20_000
    /// Deepest folder nesting followed.
    public var maximumDepth = 32
    /// Largest landing page template.
    public var maximumTemplateBytes = 1 << 20
    /// The budget shared by every domain of a load (`serve --pages-memory`), or `nil` for none.
    public var budget: PagesBudget?

    /// Creates a loader with the standard limits.
    public init() {}

    /// What a load found.
    public struct Output: Sendable {
        /// What the domain serves, or `nil` when it has no pages, no banner and no icons.
        public var pages: SitePages?
        /// Every finding.
        public var diagnostics: [Diagnostic]
    }

    struct RawFile {
        var path: String
        var file: String
        var bytes: [UInt8]
        var modified: Int
    }

    /// What the caller already read of a domain folder, so loading its pages does not ask the file system again.
    public struct FolderFacts: Sendable {
        /// site.json's modification time, in seconds since 1970.
        public var configModified: Int
        /// The names in the folder.
        public var entries: [String]
        /// Where the domain's files may lie.
        public var confinement: Confinement

        /// Creates the facts.
        public init(configModified: Int, entries: [String], confinement: Confinement) {
            self.configModified = configModified
            self.entries = entries
            self.confinement = confinement
        }
    }

    /// Loads the pages of the domain folder at `folder` on disk (which holds site.json) for `site`; `facts` spare
    /// the file system calls whose answers the caller already has (at 10,000 domains, every start makes them all).
    public func load(_ site: SiteContext, folder: String, facts: FolderFacts? = nil) -> Output {
        load(site, tree: FolderFileTree(root: folder), facts: facts)
    }

    /// Loads the pages of the domain whose files `tree` holds for `site`, as ``load(_:folder:facts:)`` does.
    public func load(_ site: SiteContext, tree: some FileTree, facts: FolderFacts? = nil) -> Output {
        let config = site.configStorage.value
        let folder = tree.root
        var diagnostics: [Diagnostic] = []
        let configModified = facts?.configModified ?? tree.modified(folder.joiningPath(SiteConfigLoader.fileName))
        let confinement = facts?.confinement ?? Confinement(folder: tree.realPath(folder) ?? folder)
        let root = folder.joiningPath(Self.folderName)
        // Without a `pages` entry there is neither a pages folder nor the default template inside it.
        let mayHaveFolder = facts?.entries.contains(Self.folderName) ?? true
        let hasFolder = mayHaveFolder && tree.entry(at: root, followingLinks: true) == .folder

        // The template is read from the domain folder and never served.
        var templateFile: String?
        if let relative = config.pages.landingPage.template {
            // PagesRule refuses a path that leaves the domain folder; such a config is never published.
            if !relative.hasPrefix("/") && !relative.split(separator: "/").contains(where: { $0 == ".." }) {
                templateFile = folder.joiningPath(relative)
            }
        } else if mayHaveFolder
            && tree.entry(at: folder.joiningPath(Self.defaultTemplate), followingLinks: true) != .missing
        {
            templateFile = folder.joiningPath(Self.defaultTemplate)
        }
        // Only to leave the template out of the pages served; it is read (confined) in landing(…).
        let templateReal = templateFile.flatMap(tree.realPath)

        var raw: [String: RawFile] = [:]
        if hasFolder {
            raw = walk(
                tree, root: root, skipping: templateReal, confinement: confinement, diagnostics: &diagnostics)
        }
        let icons = touchIcons(config, raw: raw, site: site, diagnostics: &diagnostics)
        let banner = config.smartAppBanner
        guard hasFolder || banner != nil else { return Output(pages: nil, diagnostics: diagnostics) }

        let markup = HeadMarkup(banner: banner, icons: icons)
        let iconModified = icons.compactMap { raw[$0.path]?.modified }.max() ?? 0
        var pages = SitePages(icons: icons, banner: banner, cacheControl: config.pages.cacheControl)
        for file in raw.values {
            let contentType = ContentType.forFile(file.path)
            var page = SplicedPage(chunks: [file.bytes], slots: [])
            var modified = file.modified
            if ContentType.isHTML(file.path) && (banner != nil || !icons.isEmpty) {
                let pagePath =
                    file.path.hasSuffix("/index.html") ? String(file.path.dropLast("index.html".count)) : file.path
                let excluded = pages.bannerExcluded(pagePath) || pages.bannerExcluded(file.path)
                page = markup.inject(into: file.bytes, withBanner: !excluded, visitorSlots: true)
                modified = max(modified, configModified, iconModified)
            }
            pages.files[file.path] = PageFile(
                path: file.path, contentType: contentType, page: page, lastModified: modified,
                contentTag: Self.tag(page))
        }
        if let banner, config.pages.landingPage.enabled {
            pages.landing = landing(
                site, tree: tree, banner: banner, markup: markup, icons: icons, templateFile: templateFile,
                confinement: confinement, modified: max(configModified, iconModified), diagnostics: &diagnostics)
        }
        return Output(pages: pages, diagnostics: diagnostics)
    }

    /// A short content hash for ETags: the fixed bytes and where the slots are.
    static func tag(_ page: SplicedPage) -> String {
        var bytes = page.fixedBytes
        for chunk in page.chunks { bytes += Array("\u{0}\(chunk.count)".utf8) }
        return String(SHA256.hex(bytes).prefix(24))
    }
}
