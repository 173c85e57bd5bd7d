#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The entries of a folder, read with `getdents64` (or `readdir`): what `FileManager.contentsOfDirectory` gives,
/// without its cost (through Foundation, listing every domain folder costs 1 % of a start at 100,000 domains), and
/// with the kind of each entry the file system reports, so that a listing of 100,000 folders needs no `lstat` of each.
public enum DirectoryListing {
    #if canImport(Glibc)
        /// What `opendir` returns.
        private typealias Stream = OpaquePointer
    #else
        private typealias Stream = UnsafeMutablePointer<DIR>
    #endif

    /// One entry of a folder.
    public struct Entry: Sendable {
        /// The entry's name.
        public var name: String
        /// What the entry is, as the folder records it (`d_type`), without following a symlink.
        public var kind: Kind
    }

    /// What an entry is, as `readdir` reports it.
    public enum Kind: Sendable {
        /// A folder (not a symlink to one).
        case folder
        /// A symlink, to anything.
        case link
        /// A regular file, FIFO, device or socket.
        case other
        /// The file system does not say (`DT_UNKNOWN`): `lstat` tells.
        case unknown

        /// The kind a folder records as `d_type`.
        init(directoryType type: UInt8) {
            switch Int32(type) {
            case Int32(DT_DIR): self = .folder
            case Int32(DT_LNK): self = .link
            case Int32(DT_UNKNOWN): self = .unknown
            default: self = .other
            }
        }
    }

    /// The entries of `path` other than `.` and `..`, in the order the file system gives them; `nil` (with `errno`
    /// set) when `path` cannot be listed. A path below `root` is opened from it (``OpenFolder``).
    public static func entries(in path: String, from root: OpenFolder? = nil) -> [Entry]? {
        #if canImport(Glibc)
            if let getdents = Self.getdents {
                let folder = OpenFolder.open(path, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC, from: root)
                guard folder >= 0 else { return nil }
                defer { close(folder) }
                return entries(reading: folder, with: getdents)
            }
        #endif
        guard let stream = opendir(path) else { return nil }
        defer { closedir(stream) }
        return entries(of: stream, limit: Int.max)
    }

    #if canImport(Glibc)
        /// glibc's `getdents64` (2.30 and later), which the Glibc module does not import: looked up once in the
        /// process (a nil handle is `RTLD_DEFAULT`); `nil` on an older glibc, which lists with `readdir`.
        private static let getdents: Getdents? = dlsym(nil, "getdents64").map { unsafeBitCast($0, to: Getdents.self) }

        /// `ssize_t getdents64(int fd, void *buffer, size_t count)`.
        private typealias Getdents = @convention(c) (Int32, UnsafeMutableRawPointer?, Int) -> Int

        /// The entries of the folder open as `folder`, read with `getdents64`.
        ///
        /// A start lists every domain's folder and every certificate folder, each a few entries: `opendir` costs an
        /// `fstat` and a 32 KiB buffer from the allocator (under its arena's lock, which a start's threads share) for
        /// each. These are read into 1 KiB on the stack, and only a folder that fills it gets a larger buffer, on the
        /// heap, for the rest.
        private static func entries(reading folder: Int32, with getdents: Getdents) -> [Entry]? {
            var entries: [Entry] = []
            var large: UnsafeMutableRawBufferPointer?
            defer { large?.deallocate() }
            // `struct linux_dirent64`: inode (8 bytes), offset (8), record length (2), type (1), name (NUL-ended).
            func read(_ buffer: UnsafeMutableRawBufferPointer) -> Int {
                var got: Int
                repeat { got = getdents(folder, buffer.baseAddress, buffer.count) } while got < 0 && errno == EINTR
                guard got > 0 else { return got }
                var offset = 0
                while offset + 19 < got {
                    let length = Int(buffer.load(fromByteOffset: offset + 16, as: UInt16.self))
                    guard length > 19, offset + length <= got else { break }
                    let type = buffer[offset + 18]
                    let nameStart = offset + 19
                    var nameEnd = nameStart
                    while nameEnd < offset + length && buffer[nameEnd] != 0 { nameEnd += 1 }
                    offset += length
                    // `.` and `..` told by their bytes, before a string is made of them.
                    let name = buffer[nameStart..<nameEnd]
                    if (1...2).contains(name.count), name.allSatisfy({ $0 == UInt8(ascii: ".") }) { continue }
                    entries.append(
                        Entry(
                            name: String(decoding: UnsafeRawBufferPointer(rebasing: name), as: UTF8.self),
                            kind: Kind(directoryType: type)))
                }
                return got
            }
            while true {
                let got =
                    if let large { read(large) } else {
                        withUnsafeTemporaryAllocation(byteCount: 1024, alignment: 8) { read($0) }
                    }
                if got == 0 { return entries }
                if got < 0 { return nil }
                // A folder that fills half of 1 KiB at once is a large one (a root of thousands): the rest is read
                // 32 KiB at a time.
                if large == nil && got > 512 { large = .allocate(byteCount: 32 * 1024, alignment: 8) }
            }
        }
    #endif

    /// The entries of the folder open as `folder` (the descriptor stays open and unmoved), other than `.` and `..`;
    /// `nil` when it cannot be listed or has more than `limit` entries, which are not all read.
    public static func entries(ofFolder folder: Int32, limit: Int) -> [Entry]? {
        let listing = dup(folder)
        guard listing >= 0 else { return nil }
        guard let stream = fdopendir(listing) else {
            close(listing)
            return nil
        }
        defer { closedir(stream) }
        return entries(of: stream, limit: limit)
    }

    /// The entries `stream` lists, or `nil` past `limit` of them.
    private static func entries(of stream: Stream, limit: Int) -> [Entry]? {
        var entries: [Entry] = []
        while let item = readdir(stream) {
            let entry = entry(at: UnsafeRawPointer(item))
            guard entry.name != "." && entry.name != ".." else { continue }
            guard entries.count < limit else { return nil }
            entries.append(entry)
        }
        return entries
    }

    /// The entry of the `struct dirent` at `record`, read in place up to its name's NUL.
    ///
    /// A record is only as long as its name: `d_name` is declared 256 bytes, but a short name's record ends a few
    /// bytes past it, and the last record of `readdir`'s buffer may end where the memory does. Reading
    /// `item.pointee.d_name` copies all 256 bytes, past the record and, at the end of the buffer, past the memory:
    /// the process dies (`SIGSEGV`).
    static func entry(at record: UnsafeRawPointer) -> Entry {
        let name = String(cString: (record + nameOffset).assumingMemoryBound(to: CChar.self))
        return Entry(name: name, kind: Kind(directoryType: record.load(fromByteOffset: typeOffset, as: UInt8.self)))
    }

    /// Where `d_name` and `d_type` lie in a `struct dirent`.
    static let nameOffset = MemoryLayout<dirent>.offset(of: \.d_name)!
    static let typeOffset = MemoryLayout<dirent>.offset(of: \.d_type)!

    /// The names of the entries of `path` other than `.` and `..`, in the order the file system gives them; `nil`
    /// (with `errno` set) when `path` cannot be listed. A path below `root` is opened from it.
    public static func names(in path: String, from root: OpenFolder? = nil) -> [String]? {
        entries(in: path, from: root)?.map(\.name)
    }

    /// The names of the folders in `path`, symlinks to folders included, in the order the file system gives them;
    /// `nil` (with `errno` set) when `path` cannot be listed. Only a symlink, or an entry whose kind the file
    /// system does not record, costs a `stat`.
    public static func folderNames(in path: String) -> [String]? {
        let prefix = path.hasSuffix("/") ? path : path + "/"
        return entries(in: path)?.compactMap { entry in
            switch entry.kind {
            case .folder: return entry.name
            case .other: return nil
            case .link, .unknown:
                var status = stat()
                return stat(prefix + entry.name, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR ? entry.name : nil
            }
        }
    }
}
