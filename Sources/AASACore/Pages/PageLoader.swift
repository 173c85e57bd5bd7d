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

    private struct RawFile {
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
        let config = site.config
        let folder = tree.root
        var diagnostics: [Diagnostic] = []
        let configModified = facts?.configModified ?? tree.modified(folder + "/" + SiteConfigLoader.fileName)
        let confinement = facts?.confinement ?? Confinement(folder: tree.realPath(folder) ?? folder)
        let root = folder + "/" + Self.folderName
        // Without a `pages` entry there is neither a pages folder nor the default template inside it.
        let mayHaveFolder = facts?.entries.contains(Self.folderName) ?? true
        let hasFolder = mayHaveFolder && tree.entry(at: root, followingLinks: true) == .folder

        // The template is read from the domain folder and never served.
        var templateFile: String?
        if let relative = config.pages.landingPage.template {
            // PagesRule refuses a path that leaves the domain folder; such a config is never published.
            if !relative.hasPrefix("/") && !relative.split(separator: "/").contains(where: { $0 == ".." }) {
                templateFile = folder + "/" + relative
            }
        } else if mayHaveFolder
            && tree.entry(at: folder + "/" + Self.defaultTemplate, followingLinks: true) != .missing
        {
            templateFile = folder + "/" + Self.defaultTemplate
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

    // MARK: Files

    /// Every file of `folder`'s `pages/` as it is on disk, by its path in the domain folder (`pages/about.html`),
    /// read by the same walk, confinement and caps as a load (the landing template among them, since it is read from
    /// there too), and the walk's findings: what `store push` uploads, so the store holds what a load of the folder
    /// reads.
    public func files(of folder: String, confinement: Confinement) -> (
        files: [String: [UInt8]], diagnostics: [Diagnostic]
    ) {
        var diagnostics: [Diagnostic] = []
        let raw = walk(
            FolderFileTree(root: folder), root: folder + "/" + Self.folderName, skipping: nil,
            confinement: confinement, diagnostics: &diagnostics)
        var files: [String: [UInt8]] = [:]
        files.reserveCapacity(raw.count)
        for (urlPath, file) in raw { files[Self.folderName + urlPath] = file.bytes }
        return (files, diagnostics)
    }

    private func walk(
        _ tree: some FileTree, root: String, skipping template: String?, confinement: Confinement,
        diagnostics: inout [Diagnostic]
    ) -> [String: RawFile] {
        guard let rootReal = tree.realPath(root) else { return [:] }
        // A symlinked pages/ folder is a link like any other: it must stay inside the domain folder.
        if let refusal = confinement.refusal(of: rootReal) {
            diagnostics.append(refusal.diagnostic(root, what: "the pages folder"))
            return [:]
        }
        let pagesConfinement = confinement.narrowed(to: rootReal)
        var files: [String: RawFile] = [:]
        var total = 0
        var reportedCount = false
        var visited: Set<String> = [rootReal]
        // (URL path of the folder with a trailing slash, its real path on disk, depth)
        var stack: [(String, String, Int)] = [("/", rootReal, 0)]
        var entries = 0
        walking: while let (urlFolder, folder, depth) = stack.popLast() {
            let names = tree.names(in: folder).sorted()
            for name in names {
                entries += 1
                guard entries <= maximumEntries else {
                    diagnostics.append(
                        Diagnostic(
                            .error, rule: .pagesTooLarge,
                            "pages/ has more than \(maximumEntries) entries (files, folders and links); the rest is not looked at",
                            file: root, hint: "serve large sites from another server"))
                    break walking
                }
                let path = folder + "/" + name
                let urlPath = urlFolder + name
                switch Self.nameProblem(name, atTop: urlFolder == "/") {
                case .hidden?: continue
                case let problem?:
                    diagnostics.append(
                        Diagnostic(
                            .warning, rule: .pageName, "'\(urlPath)' is not served: \(problem)", file: path,
                            hint: "rename it"))
                    continue
                case nil: break
                }
                var entry = tree.entry(at: path, followingLinks: false)
                guard entry != .missing else { continue }
                var real = path
                if entry == .link {
                    guard let resolved = tree.realPath(path),
                        case let followed = tree.entry(at: resolved, followingLinks: true), followed != .missing
                    else {
                        diagnostics.append(
                            Diagnostic(
                                .warning, rule: .pageSymlink, "'\(urlPath)' is a broken symlink; it is not served",
                                file: path, hint: "remove it or point it at a file inside pages/"))
                        continue
                    }
                    real = resolved
                    entry = followed
                    guard Confinement.path(real, isWithin: rootReal) else {
                        diagnostics.append(
                            Diagnostic(
                                .warning, rule: .pageSymlink,
                                "'\(urlPath)' links to '\(real)', outside pages/; it is not served, and nothing is read through it",
                                file: path, hint: "move the file into pages/, or point the link at a file inside pages/"
                            ))
                        continue
                    }
                }
                if real == template { continue }
                if entry == .folder {
                    guard depth < maximumDepth, visited.insert(real).inserted else { continue }
                    stack.append((urlPath + "/", real, depth + 1))
                    continue
                }
                guard files.count < maximumFiles else {
                    if !reportedCount {
                        reportedCount = true
                        diagnostics.append(
                            Diagnostic(
                                .error, rule: .pagesTooLarge, "pages/ has more than \(maximumFiles) files",
                                file: root, hint: "serve large sites from another server"))
                    }
                    continue
                }
                // The caps are checked on the open file before it is read: this file, what is left of the domain's
                // total, and what is left of every domain's total (``PagesBudget``).
                let domainLeft = maximumTotalBytes - total
                let serverLeft = budget?.remaining ?? Int.max
                let cap = min(maximumFileBytes, domainLeft, serverLeft)
                switch tree.read(path, within: pagesConfinement, maximumBytes: cap, refusingPrivateKeys: true) {
                case .success(let contents):
                    if let budget, !budget.take(contents.bytes.count) {
                        diagnostics.append(overBudget(urlPath, file: path, size: contents.bytes.count))
                        break walking
                    }
                    total += contents.bytes.count
                    files[urlPath] = RawFile(
                        path: urlPath, file: path, bytes: contents.bytes, modified: contents.modified)
                case .failure(.tooLarge(let size, _)) where size > maximumFileBytes:
                    diagnostics.append(
                        Diagnostic(
                            .error, rule: .pageTooLarge,
                            "'\(urlPath)' is \(size) bytes; pages are loaded into memory and each file may have at most \(maximumFileBytes) bytes",
                            file: path, hint: "serve large files from a CDN or another server"))
                case .failure(.tooLarge(let size, _)) where size > domainLeft:
                    diagnostics.append(
                        Diagnostic(
                            .error, rule: .pagesTooLarge,
                            "pages/ holds more than \(maximumTotalBytes) bytes ('\(urlPath)', \(size) bytes, is over what is left); a domain's pages are loaded into memory and may total at most \(maximumTotalBytes) bytes, so the rest is not read",
                            file: path, hint: "serve large files from a CDN or another server"))
                    break walking
                case .failure(.tooLarge(let size, _)):
                    diagnostics.append(overBudget(urlPath, file: path, size: size))
                    break walking
                case .failure(let refusal):
                    diagnostics.append(refusal.diagnostic(path, what: "page '\(urlPath)'"))
                }
            }
        }
        return files
    }

    // MARK: Paths

    /// Why a file of `pages/` is not served for its path alone.
    public enum PathProblem: Sendable, Equatable, CustomStringConvertible {
        /// A segment starts with a dot (only a first segment `.well-known` is served, RFC 8615).
        case hidden(String)
        /// A segment cannot be requested safely: it holds `%`, `\\`, a control character or invalid UTF-8, or it is
        /// empty, `.` or `..`.
        case unsafeName(String)
        /// More folders than the walk follows (``maximumDepth``).
        case tooDeep(limit: Int)

        public var description: String {
            switch self {
            case .hidden(let segment):
                "'\(segment)' is hidden (starts with a dot); only a top-level .well-known/ is served"
            case .unsafeName(let segment):
                "its name '\(segment)' cannot be requested safely (it has '%', '\\\\', a control character or invalid "
                    + "UTF-8, or is empty, '.' or '..')"
            case .tooDeep(let limit): "it is in more than \(limit) nested folders, which are not followed"
            }
        }
    }

    /// Why the file at `path` inside `pages/` (`about/index.html`, no leading slash) would not be loaded for its
    /// path alone, or `nil` when a load serves it at `/<path>`: the rule of the walk, used by whatever writes pages.
    public func pathProblem(_ path: String) -> PathProblem? {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        for (index, segment) in segments.enumerated() {
            if let problem = Self.nameProblem(segment, atTop: index == 0) { return problem }
        }
        // The walk reads files of folders up to ``maximumDepth`` deep: at most that many folders above a file.
        if segments.count - 1 > maximumDepth { return .tooDeep(limit: maximumDepth) }
        return nil
    }

    /// Why an entry named `name` (in the top of `pages/` when `atTop`) is not served, or `nil` when it is.
    static func nameProblem(_ name: String, atTop: Bool) -> PathProblem? {
        if name.hasPrefix(".") && !(atTop && name == ".well-known") {
            return name == "." || name == ".." ? .unsafeName(name) : .hidden(name)
        }
        // A `%` in a file name is decoded by every request for it: such a file could never be asked for by its name.
        guard !name.isEmpty, !name.contains("%"), !name.contains("/"), RequestPath("/" + name) != nil else {
            return .unsafeName(name)
        }
        return nil
    }

    /// The error for a page that does not fit in what is left of the server's ``budget``.
    private func overBudget(_ urlPath: String, file: String, size: Int) -> Diagnostic {
        Diagnostic(
            .error, rule: .pagesMemory,
            "'\(urlPath)' (\(size) bytes) does not fit in the server's pages budget of \(budget?.limit ?? 0) bytes "
                + "(serve --pages-memory), which the domains loaded so far have used; the rest of pages/ is not read",
            file: file, hint: "raise --pages-memory, or serve large files from a CDN or another server")
    }

    // MARK: Touch icons

    /// The configured icons, or by convention the `apple-touch-icon*.png` files in the pages root; each must
    /// be a square PNG (spec §6). Warns when none is 180×180, the size today's iPhones use.
    private func touchIcons(
        _ config: SiteConfig, raw: [String: RawFile], site: SiteContext, diagnostics: inout [Diagnostic]
    ) -> [TouchIcon] {
        var icons: [TouchIcon] = []
        var problems: [Diagnostic] = []
        func check(_ path: String, _ file: RawFile, report: (Diagnostic.Severity, Rule, String, String) -> Diagnostic) {
            guard let png = PNGInfo(file.bytes) else {
                problems.append(
                    report(.error, .touchIconFormat, "touch icon '\(path)' is not a PNG file", "save it as PNG"))
                return
            }
            guard png.width == png.height else {
                problems.append(
                    report(
                        .error, .touchIconSquare, "touch icon '\(path)' is \(png.width)×\(png.height), not square",
                        "use a square image, ideally 180×180"))
                return
            }
            if let named = TouchIcon.probeSize(path), !path.hasPrefix("/apple-touch-icon."),
                !path.hasPrefix("/apple-touch-icon-precomposed."), named != png.width
            {
                problems.append(
                    report(
                        .warning, .touchIconSize,
                        "touch icon '\(path)' is \(png.width)×\(png.height), not what its name says",
                        "rename it or resize it"))
            }
            icons.append(TouchIcon(path: path, size: png.width))
        }
        if let configured = config.pages.touchIcons {
            for (index, path) in configured.enumerated() {
                let keyPath = KeyPath.root.key("pages").key("touchIcons").index(index)
                let key = RequestPath(path)?.description
                guard let key, let file = raw[key] else {
                    diagnostics.append(
                        site.diagnostic(
                            .error, rule: .touchIconMissing, "touch icon '\(path)' is not a file in pages/",
                            at: keyPath,
                            hint: "give its URL path, e.g. \"/apple-touch-icon.png\" for pages/apple-touch-icon.png"))
                    continue
                }
                check(key, file) { severity, rule, message, hint in
                    site.diagnostic(severity, rule: rule, message, at: keyPath, hint: hint)
                }
            }
        } else {
            for path in raw.keys.sorted() where TouchIcon.probeSize(path) != nil {
                let file = raw[path]!
                check(path, file) { severity, rule, message, hint in
                    Diagnostic(severity, rule: rule, message, file: file.file, hint: hint)
                }
            }
        }
        diagnostics += problems
        if !icons.isEmpty && !icons.contains(where: { $0.size == 180 }) {
            let sizes = icons.map { "\($0.size)×\($0.size)" }.joined(separator: ", ")
            diagnostics.append(
                site.diagnostic(
                    .warning, rule: .touchIcon180, "no 180×180 touch icon (have \(sizes)); iPhones use 180×180",
                    at: .root.key("pages").key("touchIcons"), hint: "add pages/apple-touch-icon.png at 180×180"))
        }
        // Convention files: plain and -precomposed names may both exist; keep one per size, plain first.
        var seen: Set<Int> = []
        return icons.sorted {
            ($0.path.contains("precomposed") ? 1 : 0, $0.path) < ($1.path.contains("precomposed") ? 1 : 0, $1.path)
        }
        .filter { seen.insert($0.size).inserted }
    }

    // MARK: Landing page

    private func landing(
        _ site: SiteContext, tree: some FileTree, banner: BannerConfig, markup: HeadMarkup, icons: [TouchIcon],
        templateFile: String?,
        confinement: Confinement, modified: Int, diagnostics: inout [Diagnostic]
    ) -> LandingPage? {
        let settings = site.config.pages.landingPage
        let templatePath = KeyPath.root.key("pages").key("landingPage").key("template")
        var image = settings.image ?? TouchIcon.best(for: 1024, among: icons)?.path ?? ""
        if image.hasPrefix("/") { image = "https://" + site.domain + image }
        var template = LandingTemplate.builtIn(hasImage: !image.isEmpty)
        var lastModified = modified
        if let templateFile {
            let contents: ConfinedFile.Contents
            switch tree.read(
                templateFile, within: confinement, maximumBytes: maximumTemplateBytes, refusingPrivateKeys: true)
            {
            case .success(let read): contents = read
            case .failure(let refusal):
                diagnostics.append(
                    refusal.diagnostic(
                        templateFile, what: "the landing page template", keyPath: templatePath.description))
                return nil
            }
            guard let text = String(validating: contents.bytes, as: UTF8.self) else {
                diagnostics.append(
                    site.diagnostic(
                        .error, rule: .landingTemplate,
                        "cannot read the landing page template '\(templateFile)' as UTF-8",
                        at: templatePath))
                return nil
            }
            template = LandingTemplate(text: text)
            lastModified = max(lastModified, contents.modified)
            for problem in template.problems {
                diagnostics.append(
                    Diagnostic(
                        .error, rule: .landingTemplate, "\(problem) in the landing page template", file: templateFile,
                        hint: "placeholders are written {{name}}"))
            }
            let uses = template.urlUses
            guard uses <= LandingTemplate.maximumURLUses else {
                diagnostics.append(
                    Diagnostic(
                        .error, rule: .landingTemplate,
                        "{{url}} is used \(uses) times in the landing page template; at most "
                            + "\(LandingTemplate.maximumURLUses) uses are allowed",
                        file: templateFile,
                        hint: "each {{url}} is the request's URL, spliced in per request: keep it where a page names "
                            + "its own URL (og:url, the canonical link)"))
                return nil
            }
        }
        let filled = template.fill(
            LandingTemplate.Values(
                title: settings.title ?? site.domain,
                description: settings.description ?? "Open this page in the app, or get the app on the App Store.",
                appStoreURL: banner.appStoreURL, appStoreID: banner.appStoreID, image: image, domain: site.domain))
        // A template that does not place the in-app browser's element gets it at the top of its body.
        let placesOpenInBrowser = template.uses(of: "openInBrowser") > 0
        return LandingPage(
            withBanner: LandingTemplate.splitMarkers(
                markup.inject(into: filled, withBanner: true, openInBrowser: !placesOpenInBrowser)),
            withoutBanner: LandingTemplate.splitMarkers(
                markup.inject(into: filled, withBanner: false, openInBrowser: !placesOpenInBrowser)),
            buttons: AppButtons(domain: site.domain, config: site.config, banner: banner),
            lastModified: lastModified)
    }
}

extension Rule {
    /// Reported by `PageLoader`.
    public static let pagesMemory = Rule(
        "pages-memory", .error,
        "The domain's pages do not fit in what is left of the server-wide pages budget (`serve --pages-memory`); the rest of its `pages/` is not read and, on reload, it keeps its last good version.",
        docs: "security.md#file-confinement-and-bounded-reads")

    /// Reported by `PageLoader`; also by `PagesRule`.
    public static let landingTemplate = Rule(
        "landing-template", .error,
        "A landing page without `smartAppBanner`, a control character in its title, a template path outside the domain folder, an unreadable template, an unknown `{{placeholder}}`, `{{url}}` used more than 16 times, `{{qrCode}}`, `{{openInBrowser}}` or `{{appButtons}}` used more than once, or a U+0001 character in the template."
    )

    /// Reported by `PageLoader`.
    public static let pageTooLarge = Rule(
        "page-too-large", .error,
        "A file over 16 MiB, or a `pages/` folder over 64 MiB, 10,000 files or 20,000 entries; reading stops at the file or entry that passes the cap."
    )

    /// Reported by `PageLoader`.
    public static let pagesTooLarge = Rule(
        "pages-too-large", .error,
        "A file over 16 MiB, or a `pages/` folder over 64 MiB, 10,000 files or 20,000 entries; reading stops at the file or entry that passes the cap."
    )

    /// Reported by `PageLoader`.
    public static let pageSymlink = Rule(
        "page-symlink", .warning,
        "A symlink out of `pages/` (the message says where it leads) or a broken one, or a name that cannot be requested safely: not served, and nothing is read through the link."
    )

    /// Reported by `PageLoader`.
    public static let pageName = Rule(
        "page-name", .warning,
        "A symlink out of `pages/` (the message says where it leads) or a broken one, or a name that cannot be requested safely: not served, and nothing is read through the link."
    )

    /// Reported by `PageLoader`; also by `PagesRule`.
    public static let touchIconMissing = Rule(
        "touch-icon-missing", .error, "A touch icon that is not a file in `pages/`, not a PNG, or not square.")

    /// Reported by `PageLoader`.
    public static let touchIconFormat = Rule(
        "touch-icon-format", .error, "A touch icon that is not a file in `pages/`, not a PNG, or not square.")

    /// Reported by `PageLoader`.
    public static let touchIconSquare = Rule(
        "touch-icon-square", .error, "A touch icon that is not a file in `pages/`, not a PNG, or not square.")

    /// Reported by `PageLoader`.
    public static let touchIconSize = Rule(
        "touch-icon-size", .warning, "An icon whose name says another size; no 180×180 icon.")

    /// Reported by `PageLoader`.
    public static let touchIcon180 = Rule(
        "touch-icon-180", .warning, "An icon whose name says another size; no 180×180 icon.")
}
