#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One `site-config/<domain>/` folder: its name, its site.json, and the ``Confinement`` every file read for it
/// is checked against, or why the folder itself may not be read.
public struct DomainFolder: Sendable, Hashable {
    /// The host name (the folder's name).
    public var domain: String
    /// The `site.json` path as the user named it.
    public var file: String
    /// Where the domain's files may lie; `nil` when the folder itself is refused (``problem``).
    public var confinement: Confinement?
    /// Why the folder may not be read: it resolves outside the config folder, or to another domain's folder.
    public var problem: Diagnostic?
    /// Whether the folder's entry in the config folder is a symlink.
    var isLink = false
    /// Whether the folder was listed as a real folder of the config folder (not a link): its path then leads to
    /// ``confinement``'s folder through no link of its own, and a file directly in it that is not a link lies there.
    public internal(set) var isListedFolder = false

    /// The folder's path as the user named it.
    public var path: String { Self.folder(of: file) }

    /// The folder part of `path` (`.` when it has none), found by its bytes: a path is asked for its folder several
    /// times for every domain of a load, and a search by Characters cost thousands of instructions each time.
    static func folder(of path: String) -> String {
        path.utf8.lastIndex(of: UInt8(ascii: "/")).map { String(path[..<$0]) } ?? "."
    }

    /// The folder holding `file` (`<config>/<domain>/site.json`), confined to its real location inside the config
    /// folder that holds it, excluding `excluded` (the certificate folder): for loading one domain on its own.
    public init(domain: String, file: String, excluding excluded: [String] = []) {
        let folder = Self.folder(of: file)
        let root = Self.folder(of: folder)
        // Without a config folder to resolve, the domain folder's own location is the confinement.
        let realRoot = Confinement.realPath(root.isEmpty ? "/" : root) ?? "/"
        self.init(
            domain: domain, file: file, realFolder: Confinement.realPath(folder), realRoot: realRoot,
            excluded: excluded.compactMap(Confinement.realPath))
    }

    init(domain: String, file: String, realFolder: String?, realRoot: String, excluded: [String]) {
        self.domain = domain
        self.file = file
        guard let realFolder else {
            // No such folder: site.json's absence is reported when it is read.
            confinement = Confinement(folder: realRoot + "/" + domain, excluded: excluded)
            return
        }
        confinement = Confinement(folder: realFolder, excluded: excluded)
        if !Confinement.path(realFolder, isWithin: realRoot) || realFolder == realRoot {
            refuse("the folder for \(domain) leads to '\(realFolder)', outside the config folder '\(realRoot)'")
        } else if let folder = excluded.first(where: { Confinement.path(realFolder, isWithin: $0) }) {
            refuse("the folder for \(domain) leads to '\(realFolder)', inside the certificate folder '\(folder)'")
        }
    }

    /// Refuses the whole folder: none of its files is read, and the domain is not published.
    mutating func refuse(_ message: String) {
        confinement = nil
        problem = Diagnostic(
            .error, rule: .pathOutside, message + "; none of its files is read", file: path,
            hint: "make \(path) a real folder inside the config folder (a symlink may only lead to a folder of "
                + "its own there, such as Kubernetes' ..data); to serve one config under two names, copy it")
    }

    /// Every domain folder in `directory`, sorted by name, each confined to its real location; a folder that
    /// resolves outside `directory`, into an excluded folder, or to (or into) another domain's folder is refused.
    ///
    /// Hidden entries (`.git`, Kubernetes' `..data` and `..2024_…`) are not domains. Throws only when `directory`
    /// itself cannot be listed.
    public static func list(_ directory: String, excluding excluded: [String] = []) throws(Diagnostic)
        -> [DomainFolder]
    {
        guard let realRoot = Confinement.realPath(directory), let entries = DirectoryListing.entries(in: directory)
        else {
            let reason = String(cString: strerror(errno))
            throw Diagnostic(
                .error, rule: .configFolder, "cannot list the config folder '\(directory)': \(reason)",
                file: directory, hint: "pass --config with a folder holding <domain>/site.json")
        }
        let excludedReal = excluded.compactMap(Confinement.realPath)
        let prefix = directory.hasSuffix("/") ? directory : directory + "/"
        var folders: [DomainFolder] = []
        folders.reserveCapacity(entries.count)
        // Sorted as names, before the folders are made of them: a domain folder holds several strings and an optional
        // finding, each of a sort's moves a copy of all of it (a domain is its entry's name, so the order is the same).
        for listed in entries.sorted(by: { $0.name < $1.name }) {
            guard
                let folder = Self.entry(
                    listed.name, kind: listed.kind, prefix: prefix, realRoot: realRoot, excluded: excludedReal)
            else { continue }
            folders.append(folder)
        }
        refuseShared(&folders)
        return folders
    }

    /// The domain folder `name` in `directory` as ``list(_:excluding:)`` finds it, without listing the others: what a
    /// reload of one changed folder reads. `nil` when there is no such folder (or the entry is hidden, or not a
    /// folder). A symlinked folder is found by listing them all: only the others' locations tell whether it leads
    /// to (or into) one of theirs.
    ///
    /// Throws only when `directory` itself cannot be read.
    public static func named(_ name: String, in directory: String, excluding excluded: [String] = [])
        throws(Diagnostic) -> DomainFolder?
    {
        guard !name.isEmpty, !name.contains("/") else { return nil }
        let prefix = directory.hasSuffix("/") ? directory : directory + "/"
        var status = stat()
        if lstat(prefix + name, &status) == 0, status.st_mode & S_IFMT == S_IFLNK {
            return try list(directory, excluding: excluded).first { $0.domain == name }
        }
        guard let realRoot = Confinement.realPath(directory) else {
            _ = try list(directory, excluding: excluded)  // the same error as a full listing's
            return nil
        }
        return entry(name, prefix: prefix, realRoot: realRoot, excluded: excluded.compactMap(Confinement.realPath))
    }

    /// The entry `name` of the folder `prefix` (ending in `/`) as a domain folder, or `nil` when it is hidden, gone
    /// or not a folder; not yet checked against the other folders (``refuseShared(_:)``). `kind` is what a listing
    /// said the entry is: a folder or a file needs no `lstat`.
    private static func entry(
        _ name: String, kind: DirectoryListing.Kind = .unknown, prefix: String, realRoot: String, excluded: [String]
    ) -> DomainFolder? {
        guard !name.hasPrefix("."), kind != .other else { return nil }
        let path = prefix + name
        var status = stat()
        if kind == .folder {
            status.st_mode = S_IFDIR
        } else {
            guard lstat(path, &status) == 0 else { return nil }
        }
        let isLink = status.st_mode & S_IFMT == S_IFLNK
        let realFolder: String?
        switch status.st_mode & S_IFMT {
        case S_IFDIR:
            realFolder = realRoot == "/" ? "/" + name : realRoot.joiningPath(name)
        case S_IFLNK:
            // A link to a folder (Kubernetes' ..data/<domain>, a deploy tool's release folder).
            guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else { return nil }
            realFolder = Confinement.realPath(path)
        default:
            return nil
        }
        var folder = DomainFolder(
            domain: name, file: path.joiningPath(SiteConfigLoader.fileName), realFolder: realFolder, realRoot: realRoot,
            excluded: excluded)
        folder.isLink = isLink
        folder.isListedFolder = status.st_mode & S_IFMT == S_IFDIR
        return folder
    }

    /// Refuses every linked folder that resolves to another domain's folder or below it: one tenant's link must not
    /// reach another's files. The real folder a link leads to stays, and so does a folder that merely holds another's
    /// real location.
    private static func refuseShared(_ folders: inout [DomainFolder]) {
        guard folders.contains(where: \.isLink) else { return }
        var owners: [String: Int] = [:]
        for folder in folders { if let real = folder.confinement?.folder { owners[real, default: 0] += 1 } }
        // A folder that is not a link is the config folder's own entry: nothing between it and the config folder
        // can be another domain's (a link to the config folder itself, or outside it, is refused already), and no
        // other folder is it. Only links need the walk, which at 100,000 domains would be most of the listing.
        for index in folders.indices where folders[index].isLink {
            guard let real = folders[index].confinement?.folder else { continue }
            var shared = owners[real, default: 0] > 1 && folders[index].isLink ? real : nil
            var ancestor = Substring(real)
            while shared == nil, let slash = ancestor.lastIndex(of: "/"), slash > ancestor.startIndex {
                ancestor = ancestor[..<slash]
                if owners[String(ancestor)] != nil { shared = String(ancestor) }
            }
            if let shared {
                folders[index].refuse(
                    "the folder for \(folders[index].domain) leads to '\(real)', "
                        + (shared == real
                            ? "which another domain's folder leads to too"
                            : "inside another domain's folder '\(shared)'"))
            }
        }
    }
}

extension Rule {
    /// Reported by `DomainFolder`.
    public static let configFolder = Rule("config-folder", .error, "The config folder is missing or unreadable.")
}
