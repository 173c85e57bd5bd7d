#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A digest of what the file system says of a folder's whole tree, read without opening a file: each entry's path,
/// kind, device, inode, size, and modification and change times.
///
/// Writing, adding, removing or renaming anything in the tree changes the change time of a file or a folder in it, so
/// two equal stamps of one path say that nothing in the tree was written between them: `store push` reads and checks
/// again only the folders whose stamp moved since it last pushed them.
///
/// A stamp is only given where it can be trusted, and `nil` otherwise (the folder is then read as if it were new):
/// - the tree has a symbolic link (what it points to can change without the tree's times moving), or anything other
///   than files and folders, or more than ``maximumEntries`` entries, or folders nested deeper than
///   ``maximumDepth``, or an entry that cannot be read;
/// - an entry changed less than ``settling`` before the stamp was taken: file times advance in ticks of the kernel's
///   clock, so a file written twice within one tick, keeping its size, could show the same times after each write.
///
/// The walk opens each folder with `O_NOFOLLOW` relative to its parent, so the stamp describes exactly the tree below
/// the path given, and reads nothing but the folders' entries.
public enum FolderStamp {
    /// The most entries (files and folders) a stamped tree has.
    public static let maximumEntries = 4_096
    /// The most folders a stamped tree nests, below its root: the walk keeps one descriptor and one call open for
    /// each.
    public static let maximumDepth = 32
    /// How long before the stamp is taken no entry may have changed, in nanoseconds.
    public static let settling: Int64 = 2_000_000_000

    /// The stamp of the tree at `path`, as 64 hexadecimal digits, with `context` (what else decides what a push of
    /// the folder does, such as the build that checks it) in the digest; `nil` when the tree cannot be stamped, or
    /// an entry changed less than `settling` nanoseconds ago.
    public static func of(_ path: String, context: String, settling: Int64 = settling) -> String? {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let latest = Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec) - settling
        let root = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard root >= 0 else { return nil }
        defer { close(root) }
        var status = stat()
        guard fstat(root, &status) == 0 else { return nil }
        var record: [UInt8] = Array(context.utf8)
        record.append(0)
        var entries = 0
        guard append(status, path: "", to: &record, latest: latest),
            walk(root, path: "", depth: 0, into: &record, entries: &entries, latest: latest)
        else { return nil }
        return SHA256.hex(record)
    }

    /// Appends to `record` each entry of the folder open as `folder` (whose path in the tree is `path`), in the
    /// order of their names, and the entries of each folder in it; `false` when the tree cannot be stamped.
    private static func walk(
        _ folder: Int32, path: String, depth: Int, into record: inout [UInt8], entries: inout Int, latest: Int64
    ) -> Bool {
        guard let listed = DirectoryListing.entries(ofFolder: folder, limit: maximumEntries - entries) else {
            return false
        }
        entries += listed.count
        for name in listed.map(\.name).sorted() {
            let child = path + "/" + name
            var status = stat()
            guard fstatat(folder, name, &status, AT_SYMLINK_NOFOLLOW) == 0,
                append(status, path: child, to: &record, latest: latest)
            else { return false }
            switch status.st_mode & S_IFMT {
            case S_IFREG: continue
            case S_IFDIR:
                guard depth < maximumDepth else { return false }
                let inner = openat(folder, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                guard inner >= 0 else { return false }
                defer { close(inner) }
                guard walk(inner, path: child, depth: depth + 1, into: &record, entries: &entries, latest: latest)
                else { return false }
            default: return false
            }
        }
        return true
    }

    /// Appends `status` of the entry at `path` to `record`; `false` when it changed after `latest` (nanoseconds).
    private static func append(_ status: stat, path: String, to record: inout [UInt8], latest: Int64) -> Bool {
        let modified = Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec)
        let changed = Int64(status.st_ctim.tv_sec) * 1_000_000_000 + Int64(status.st_ctim.tv_nsec)
        guard modified <= latest, changed <= latest else { return false }
        record += path.utf8
        record.append(0)
        for field in [
            UInt64(status.st_mode), UInt64(status.st_dev), UInt64(status.st_ino), UInt64(status.st_size),
            UInt64(bitPattern: modified), UInt64(bitPattern: changed),
        ] {
            withUnsafeBytes(of: field.littleEndian) { record += $0 }
        }
        return true
    }
}
