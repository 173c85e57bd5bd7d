public import AASACore
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The domains of a config folder: `<config>/<domain>/site.json`, written with ``AtomicFile`` (a reader, the
/// server's watcher or a git user's working tree sees the old bytes or the new ones), and their history in
/// `<config>/.aasa-history/<domain>/`, a hidden folder, which no load takes for a domain.
///
/// A revision names the bytes: the first 16 hex digits of their SHA-256, so an edit made outside the API (a git
/// pull, an editor) has a revision too, and writing the same bytes again gives the same revision. The history
/// folder of a domain holds `<revision>.json`, each version written through the API, and `log.json`, its entries
/// newest first, held to ``policy`` (``FolderHistory``; a version no kept entry names is deleted). A write records
/// its entry first and puts it back when the write of site.json fails: a write and its entry succeed or fail
/// together.
///
/// Writes and removals hold a lock of this process and an exclusive `flock` of `<config>/.aasa-history/.lock`
/// (other processes writing the same folder), then read the current revision again before they compare it.
public final class FolderDomainRepository: DomainRepository {
    /// The config folder.
    public let directory: String
    /// Serialises this process's writes; the `flock` serialises other processes'.
    private let lock = NSLock()

    /// The name of the history folder inside the config folder.
    public static let historyFolderName = ".aasa-history"

    /// What the history keeps.
    public let policy: HistoryPolicy
    /// When the sweeps across domains last ran (``FolderHistory/sweep(now:isServed:)``).
    private let swept = Mutex<Date?>(nil)

    /// The domains of `directory`, their history held to `policy`.
    public init(directory: String, policy: HistoryPolicy = HistoryPolicy()) {
        self.policy = policy
        self.directory = directory.hasSuffix("/") && directory.count > 1 ? String(directory.dropLast()) : directory
    }

    /// The domains of `directory`, keeping `historyCapacity` revisions of each (and the other bounds' defaults).
    public convenience init(directory: String, historyCapacity: Int) {
        self.init(directory: directory, policy: HistoryPolicy(revisions: historyCapacity))
    }

    /// The history folder.
    var historyRoot: String { directory + "/" + Self.historyFolderName }

    private var history: FolderHistory { FolderHistory(root: historyRoot, policy: policy) }

    private func siteFile(_ name: String) -> String { directory + "/" + name + "/" + SiteConfigLoader.fileName }

    /// The revision of `bytes` (``DomainPage/revision(of:)``).
    public static func revision(of bytes: [UInt8]) -> String { DomainPage.revision(of: bytes) }

    public func prospectiveRevision(of siteJSON: [UInt8]) -> String? { Self.revision(of: siteJSON) }

    /// The domain's folder in the config folder, as it is (a new domain's does not exist yet).
    public func checking(_ name: String, _ load: (_ files: (any FileTree)?) -> LoadedDomain) throws -> LoadedDomain {
        load(FolderFileTree(root: directory + "/" + name))
    }

    public func list(after: String?, limit: Int, matching: (String) -> Bool) throws -> [DomainListing] {
        guard let names = DirectoryListing.names(in: directory) else {
            throw DomainRepositoryError(
                .failed, "cannot list the config folder '\(directory)': \(String(cString: strerror(errno)))")
        }
        let domains =
            names.filter { !$0.hasPrefix(".") && SiteConfigLoader.domainNameProblem($0) == nil && $0 > (after ?? "") }
            .sorted()
        var listed: [DomainListing] = []
        for name in domains where listed.count < limit && matching(name) {
            // A folder without a site.json (being created, or holding pages only) is no domain of the API.
            guard let document = try read(name) else { continue }
            listed.append(DomainListing(name: name, revision: document.revision))
        }
        return listed
    }

    public func read(_ name: String) throws -> DomainDocument? {
        let file = siteFile(name)
        guard let confinement = DomainFolder(domain: name, file: file).confinement else {
            throw DomainRepositoryError(
                .failed, "\(file): the folder for \(name) leads outside the config folder '\(directory)'")
        }
        switch ConfinedFile.read(file, within: confinement, maximumBytes: SiteConfigLoader.maximumConfigBytes) {
        case .success(let contents):
            return DomainDocument(siteJSON: contents.bytes, revision: Self.revision(of: contents.bytes))
        case .failure(.missing):
            return nil
        case .failure(let refusal):
            throw DomainRepositoryError(
                .failed, refusal.diagnostic(file, what: SiteConfigLoader.fileName).description)
        }
    }

    public func write(_ name: String, siteJSON: [UInt8], expecting: DomainExpectation, actor: String, summary: String)
        throws -> String
    {
        try exclusively {
            try compare(name, expecting)
            let revision = Self.revision(of: siteJSON)
            let entry = DomainRevision(revision: revision, time: Date(), actor: actor, summary: summary)
            try history.record(name, entry, siteJSON: siteJSON) { try place(name, siteJSON) }
            sweepWhenDue()
            return revision
        }
    }

    /// Writes site.json of `name`: in place, or for a new domain a folder moved into the config folder.
    private func place(_ name: String, _ siteJSON: [UInt8]) throws {
        if FileManager.default.fileExists(atPath: directory + "/" + name) {
            try RepositoryFiles.write(siteJSON, to: siteFile(name))
        } else {
            // A new domain's folder enters the config folder whole, site.json inside, in one rename: the
            // watcher never sees it empty (a domain without site.json is an error until the file comes).
            let staged = historyRoot + "/.new-" + name + "-" + String(UInt64.random(in: .min ... .max), radix: 16)
            try RepositoryFiles.makeFolder(staged)
            try RepositoryFiles.write(siteJSON, to: staged + "/" + SiteConfigLoader.fileName)
            guard rename(staged, directory + "/" + name) == 0 else {
                let reason = String(cString: strerror(errno))
                try? FileManager.default.removeItem(atPath: staged)
                throw DomainRepositoryError(
                    .failed, "could not move the new folder for \(name) into '\(directory)': \(reason)")
            }
        }
    }

    public func delete(_ name: String, expecting: DomainExpectation, actor: String) throws {
        try exclusively {
            let current = try compare(name, expecting)
            let entry = DomainRevision(
                revision: current ?? "", time: Date(), actor: actor, summary: "removed", removed: true)
            try history.record(name, entry, siteJSON: nil) { try takeOut(name) }
            sweepWhenDue()
        }
    }

    /// Moves the folder of `name` out of the config folder and deletes it.
    private func takeOut(_ name: String) throws {
        // The folder leaves the config folder in one rename (the watcher sees it gone, and the server serves its
        // last version through the removal grace), then is deleted from the history folder.
        let removed = historyRoot + "/.removed-" + name + "-" + String(UInt64.random(in: .min ... .max), radix: 16)
        guard rename(directory + "/" + name, removed) == 0 else {
            throw DomainRepositoryError(
                .failed,
                "could not move '\(directory)/\(name)' out of the config folder: \(String(cString: strerror(errno)))")
        }
        try? FileManager.default.removeItem(atPath: removed)
    }

    /// Runs the sweeps across domains when the last ran over ``HistoryPolicy/sweepInterval`` ago.
    private func sweepWhenDue() {
        let now = Date()
        let due = swept.withLock { last in
            guard last.map({ now.timeIntervalSince($0) >= policy.sweepInterval }) ?? true else { return false }
            last = now
            return true
        }
        if due {
            history.sweep(now: now) { FileManager.default.fileExists(atPath: directory + "/" + $0) }
        }
    }

    public func history(_ name: String, after cursor: HistoryCursor?, limit: Int) throws -> [DomainRevision] {
        let entries = try history.log(name).entries
        return Array(entries[(cursor.map { $0.position(in: entries) } ?? 0)...].prefix(limit))
    }

    public func siteJSON(_ name: String, revision: String) throws -> [UInt8]? {
        guard revision.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }),
            try history.log(name).entries.contains(where: { $0.revision == revision && !$0.removed })
        else { return nil }
        let file = history.versionFile(name, revision)
        switch ConfinedFile.read(file, within: .anywhere, maximumBytes: SiteConfigLoader.maximumConfigBytes) {
        case .success(let contents): return contents.bytes
        case .failure(.missing): return nil
        case .failure(let refusal):
            throw DomainRepositoryError(.failed, refusal.diagnostic(file, what: "revision").description)
        }
    }

    // MARK: Pages

    public func pages(_ name: String, limit: Int) throws -> [DomainPage]? {
        guard try read(name) != nil else { return nil }
        return Array(try listing(name).prefix(limit))
    }

    public func page(_ name: String, path: String) throws -> PageDocument? {
        let pages = directory + "/" + name + "/" + PageLoader.folderName
        guard let confinement = DomainFolder(domain: name, file: siteFile(name)).confinement else {
            throw DomainRepositoryError(
                .failed, "\(siteFile(name)): the folder for \(name) leads outside the config folder '\(directory)'")
        }
        guard let pagesReal = Confinement.realPath(pages), confinement.refusal(of: pagesReal) == nil else { return nil }
        let file = pages + "/" + path
        switch ConfinedFile.read(
            file, within: confinement.narrowed(to: pagesReal), maximumBytes: PageLoader().maximumFileBytes,
            refusingPrivateKeys: true)
        {
        case .success(let contents):
            return PageDocument(bytes: contents.bytes, revision: DomainPage.revision(of: contents.bytes))
        case .failure(.unreadable(let reason)):
            throw DomainRepositoryError(.failed, "cannot read \(file): \(reason)")
        case .failure:
            // Missing, or a file a load does not serve (a link out of pages/, a folder, over the cap, a key).
            return nil
        }
    }

    public func pageValidator(_ name: String, path: String) throws -> String? {
        var status = stat()
        guard stat(directory + "/" + name + "/" + PageLoader.folderName + "/" + path, &status) == 0,
            status.st_mode & S_IFMT == S_IFREG
        else { return nil }
        // A write renames a new file into place (a new inode); an edit in place moves the size or the times.
        return "\(status.st_dev):\(status.st_ino):\(status.st_size):\(status.st_mtim.tv_sec).\(status.st_mtim.tv_nsec):"
            + "\(status.st_ctim.tv_sec).\(status.st_ctim.tv_nsec)"
    }

    public func writePage(
        _ name: String, path: String, bytes: [UInt8], expecting: DomainExpectation?, limits: PageLimits, dryRun: Bool
    ) throws -> PageWrite {
        try exclusively {
            let current = try comparePage(name, path, expecting)
            if let problem = limits.problem(
                name, path: path, size: bytes.count, current: try listing(name, hashing: false))
            {
                throw problem
            }
            if !dryRun { try placePage(name, path: path, bytes: bytes) }
            return PageWrite(revision: DomainPage.revision(of: bytes), created: current == nil)
        }
    }

    public func deletePage(_ name: String, path: String, expecting: String, dryRun: Bool) throws {
        try exclusively {
            guard try comparePage(name, path, .revision(expecting)) != nil else {
                throw DomainRepositoryError(.conflict(current: nil), "\(name) has no page '\(path)'")
            }
            if dryRun { return }
            let (folder, file) = try pageFolder(name, path: path, creating: false)
            defer { close(folder) }
            guard unlinkat(folder, file, 0) == 0 else {
                throw DomainRepositoryError(
                    .failed,
                    "could not delete \(directory)/\(name)/pages/\(path): \(String(cString: strerror(errno)))")
            }
            fsync(folder)
        }
    }

    /// The current page `path` of `name` (read again, under the lock), when its revision is what `expecting` says.
    private func comparePage(_ name: String, _ path: String, _ expecting: DomainExpectation?) throws -> PageDocument? {
        guard try read(name) != nil else {
            throw DomainRepositoryError(.noDomain, "\(siteFile(name)) does not exist")
        }
        let current = try page(name, path: path)
        switch expecting {
        case .absent? where current != nil, .revision? where current?.revision != expecting?.revisionValue:
            throw DomainRepositoryError(
                .conflict(current: current?.revision),
                "\(directory)/\(name)/pages/\(path) is at revision \(current?.revision ?? "none")")
        default: return current
        }
    }

    /// Every file of the `pages/` of `name` as a load reads it: the same walk, confinement and caps; revisions
    /// only when `hashing` (the caps need sizes alone).
    private func listing(_ name: String, hashing: Bool = true) throws -> [DomainPage] {
        guard let confinement = DomainFolder(domain: name, file: siteFile(name)).confinement else {
            throw DomainRepositoryError(
                .failed, "\(siteFile(name)): the folder for \(name) leads outside the config folder '\(directory)'")
        }
        let prefix = PageLoader.folderName.count + 1
        return PageLoader().files(of: directory + "/" + name, confinement: confinement).files.map { path, bytes in
            DomainPage(
                path: String(path.dropFirst(prefix)), bytes: bytes.count,
                revision: hashing ? DomainPage.revision(of: bytes) : "")
        }
        .sorted { $0.path < $1.path }
    }

    /// Writes the page with ``AtomicFile`` into its folder, opened by ``pageFolder(_:path:creating:)``.
    private func placePage(_ name: String, path: String, bytes: [UInt8]) throws {
        let (folder, file) = try pageFolder(name, path: path, creating: true)
        defer { close(folder) }
        // The folder as the descriptor holds it: a link swapped in after the walk leads nowhere else.
        try RepositoryFiles.write(bytes, to: "/proc/self/fd/\(folder)/" + file)
    }

    /// The open folder the page `path` of `name` lies in, and the file's name in it: walked from the domain's real
    /// folder one segment at a time with `O_NOFOLLOW` (folders made when `creating`), so no symlink, whatever it
    /// points at, leads a write or a removal anywhere; the folder's real path is then checked on the descriptor.
    private func pageFolder(_ name: String, path: String, creating: Bool) throws -> (Int32, String) {
        guard let confinement = DomainFolder(domain: name, file: siteFile(name)).confinement else {
            throw DomainRepositoryError(
                .failed, "\(siteFile(name)): the folder for \(name) leads outside the config folder '\(directory)'")
        }
        var segments = [PageLoader.folderName] + path.split(separator: "/").map(String.init)
        let file = segments.removeLast()
        var descriptor = open(confinement.folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw DomainRepositoryError(
                .failed, "could not open the folder of \(name): \(String(cString: strerror(errno)))")
        }
        var walked = directory + "/" + name
        for segment in segments {
            walked += "/" + segment
            if creating && mkdirat(descriptor, segment, 0o755) != 0 && errno != EEXIST {
                let reason = String(cString: strerror(errno))
                close(descriptor)
                throw DomainRepositoryError(.failed, "could not create the folder '\(walked)': \(reason)")
            }
            let next = openat(descriptor, segment, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            let reason = String(cString: strerror(errno))
            close(descriptor)
            guard next >= 0 else {
                throw DomainRepositoryError(
                    .failed,
                    "'\(walked)' is a symlink or not a folder (\(reason)); the API writes no page through a link: "
                        + "replace it with a folder")
            }
            descriptor = next
        }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/fd/\(descriptor)", &buffer, buffer.count - 1)
        let real = length > 0 ? String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        guard Confinement.path(real, isWithin: confinement.folder) else {
            close(descriptor)
            throw DomainRepositoryError(
                .failed, "'\(walked)' leads to '\(real)', outside the folder of \(name); nothing is written")
        }
        return (descriptor, file)
    }

    // MARK: Parts

    /// Runs `body` holding this process's lock and the folder's `flock`.
    private func exclusively<Value>(_ body: () throws -> Value) throws -> Value {
        try locked {
            try RepositoryFiles.makeWritableFolder(historyRoot)
            let lockFile = historyRoot + "/.lock"
            let descriptor = open(lockFile, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard descriptor >= 0 else {
                throw DomainRepositoryError(
                    .failed, "could not open the lock file '\(lockFile)': \(String(cString: strerror(errno)))")
            }
            defer { close(descriptor) }
            while flock(descriptor, LOCK_EX) != 0 {
                guard errno == EINTR else {
                    throw DomainRepositoryError(
                        .failed, "could not lock '\(lockFile)': \(String(cString: strerror(errno)))")
                }
            }
            defer { flock(descriptor, LOCK_UN) }
            return try body()
        }
    }

    /// The current revision of `name` (read again, under the lock), when it is what `expecting` says.
    @discardableResult
    private func compare(_ name: String, _ expecting: DomainExpectation) throws -> String? {
        let current = try read(name)?.revision
        switch expecting {
        case .absent where current != nil, .revision where current != expecting.revisionValue:
            throw DomainRepositoryError(
                .conflict(current: current), "\(siteFile(name)) is at revision \(current ?? "none")")
        default: return current
        }
    }

    /// Times in the log: ISO 8601 with milliseconds, UTC.
    static var timeFormat: ISO8601DateFormatter { ServerStatus.makeFormatter() }

    /// Runs `body` holding ``lock``.
    private func locked<Value>(_ body: () throws -> Value) throws -> Value {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}

extension DomainExpectation {
    /// The revision expected, or `nil` for ``absent``.
    var revisionValue: String? {
        if case .revision(let revision) = self { return revision }
        return nil
    }
}
