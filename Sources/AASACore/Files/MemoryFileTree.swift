/// A domain's files held in memory as a ``FileTree`` (a stored domain's rows): `site.json` and every other file by
/// its path in the domain folder (`pages/about.html`), below a root named after the domain, all dated alike.
///
/// There are no links, and a file whose path could leave the folder (empty, `.` or `..` segments, a leading `/`, a
/// NUL) is not in the tree. Reads keep the caps and the private-key refusal of a folder's.
public struct MemoryFileTree: FileTree {
    public let root: String
    /// Every file, by its path below ``root``.
    private let files: [String: [UInt8]]
    /// Every folder's names, by its path below ``root`` (`""`: the root).
    private let folders: [String: [String]]
    /// The time every file is dated, in seconds since 1970.
    private let modified: Int

    /// The tree named `root` of `files` (by relative path), every file dated `modified`.
    public init(root: String, files: [String: [UInt8]], modified: Int) {
        self.root = root
        self.modified = modified
        var kept: [String: [UInt8]] = [:]
        var names: [String: Set<String>] = ["": []]
        for (path, bytes) in files where Confinement.isRelativePathInside(path) {
            kept[path] = bytes
            var folder = ""
            for segment in path.split(separator: "/") {
                names[folder, default: []].insert(String(segment))
                folder = folder.isEmpty ? String(segment) : folder + "/" + segment
            }
        }
        self.files = kept
        folders = names.mapValues(Array.init)
    }

    public func entry(at path: String, followingLinks: Bool) -> FileTreeEntry {
        guard let relative = relative(path) else { return .missing }
        if files[relative] != nil { return .file }
        return folders[relative] != nil ? .folder : .missing
    }

    public func realPath(_ path: String) -> String? {
        entry(at: path, followingLinks: true) == .missing ? nil : path
    }

    public func names(in folder: String) -> [String] {
        relative(folder).flatMap { folders[$0] } ?? []
    }

    public func read(_ path: String, within confinement: Confinement, maximumBytes: Int, refusingPrivateKeys: Bool)
        -> Result<ConfinedFile.Contents, ConfinedFile.Refusal>
    {
        guard let relative = relative(path) else { return .failure(.missing) }
        guard let bytes = files[relative] else {
            return .failure(folders[relative] != nil ? .notRegular("folder") : .missing)
        }
        if let refusal = confinement.refusal(of: path) { return .failure(refusal) }
        guard bytes.count <= maximumBytes else { return .failure(.tooLarge(size: bytes.count, cap: maximumBytes)) }
        if refusingPrivateKeys, PEMArmour.containsPrivateKey(bytes) { return .failure(.privateKey) }
        return .success(ConfinedFile.Contents(bytes: bytes, modified: modified, realPath: path))
    }

    public func modified(_ path: String) -> Int {
        entry(at: path, followingLinks: true) == .missing ? 0 : modified
    }

    /// `path` below ``root`` (`""` for the root itself), or `nil` when it is not in the tree.
    private func relative(_ path: String) -> String? {
        if path == root { return "" }
        guard path.utf8.starts(with: root.utf8), path.utf8.dropFirst(root.utf8.count).first == 0x2F else { return nil }
        return String(decoding: path.utf8.dropFirst(root.utf8.count + 1), as: UTF8.self)
    }
}
