#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads one file of a domain so that nothing outside its ``Confinement`` is ever read, and never more than a cap.
///
/// The file is opened first (through symlinks, so Kubernetes' `..data` swaps keep working) and everything is then
/// checked on the open descriptor: that it is a regular file (`fstat`; a FIFO or device is never read, and
/// `O_NONBLOCK` keeps the open of a FIFO from waiting for a writer), where it really is (the descriptor's own path
/// in `/proc/self/fd`, so a symlink swapped between a check and the open cannot win; not asked for
/// ``Confinement/anywhere``, which has no folder to check) and its size, before one byte is read. A file that grows
/// while it is read is read to the size `fstat` gave.
///
/// A file directly in a folder its caller listed as a real folder of the confinement (`listedFolder`: a domain
/// folder that is not a link) is opened without following a link of its own (`O_NOFOLLOW`): when it opens, it is
/// that folder's entry, so its real path is the folder's and its name, with no path asked of `/proc` (one system
/// call of every domain's start). A file that is a link there is opened through it and its real path asked, as any
/// other.
public enum ConfinedFile {
    /// A file read whole.
    public struct Contents: Sendable {
        /// The bytes.
        public var bytes: [UInt8]
        /// The modification time, in seconds since 1970.
        public var modified: Int
        /// Where the file really is (symlinks resolved); `nil` for a file read with ``Confinement/anywhere``, which
        /// has no folder to check it against (an operator's certificate or key: two of a domain's three files).
        public var realPath: String?
        /// The permission bits and group of the file read (its `fstat`), for a check of who else may read it; `nil`
        /// where the file is not on disk.
        public var access: (mode: UInt32, group: UInt32)? = nil
    }

    /// Why a file was not read.
    public enum Refusal: Error, Sendable, Hashable {
        /// No such file (or a broken symlink).
        case missing
        /// It exists but cannot be opened or read; the `errno` text.
        case unreadable(String)
        /// It resolves to `realPath`, which is not below `allowed`.
        case outside(String, allowed: String)
        /// It resolves to `realPath`, below the excluded `folder` (the certificate folder).
        case excluded(String, folder: String)
        /// Not a regular file: what it is (`FIFO`, `device`, `socket`, `folder`).
        case notRegular(String)
        /// Larger than the cap: its size and the cap.
        case tooLarge(size: Int, cap: Int)
        /// Holds PEM private-key armour (`-----BEGIN … PRIVATE KEY-----`): never served, whatever its path.
        case privateKey
    }

    /// Reads `path` whole if it is a regular file below `confinement` of at most `maximumBytes` bytes; with
    /// `refusingPrivateKeys`, a file holding PEM private-key armour is refused too (pages and templates: a key is
    /// never served, whatever its path).
    ///
    /// `listedFolder` is the path, as `path` starts with it, of a folder just listed as a real folder (not a link)
    /// whose real path is the confinement's folder: a file directly in it that is not a link is known to lie there.
    /// A path below `root` is opened from it (``OpenFolder``); what is checked is the same.
    public static func read(
        _ path: String, within confinement: Confinement, maximumBytes: Int, refusingPrivateKeys: Bool = false,
        listedFolder: String? = nil, from root: OpenFolder? = nil
    ) -> Result<Contents, Refusal> {
        let flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK
        var entry = listedFolder.flatMap { entryName(of: path, directlyIn: $0) }
        var descriptor = OpenFolder.open(path, flags | (entry == nil ? 0 : O_NOFOLLOW), from: root)
        if descriptor < 0, errno == ELOOP, entry != nil {
            // A link (or a loop of them): opened through it, and where it leads asked of the kernel.
            entry = nil
            descriptor = OpenFolder.open(path, flags, from: root)
        }
        guard descriptor >= 0 else {
            return .failure(errno == ENOENT || errno == ENOTDIR ? .missing : .unreadable(errorText()))
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return .failure(.unreadable(errorText())) }
        guard status.st_mode & S_IFMT == S_IFREG else { return .failure(.notRegular(kind(status.st_mode))) }
        var realPath: String?
        if confinement != .anywhere {
            guard
                let resolved = entry.map({ confinement.folder.joiningPath($0) })
                    ?? Self.realPath(of: descriptor, openedAs: path, status: status)
            else {
                return .failure(.unreadable("cannot tell where the opened file lies"))
            }
            if let refusal = confinement.refusal(of: resolved) { return .failure(refusal) }
            realPath = resolved
        }
        let size = Int(status.st_size)
        guard size <= maximumBytes else { return .failure(.tooLarge(size: size, cap: maximumBytes)) }
        // O_NONBLOCK, there for the open, does not change how a regular file reads (open(2)): no fcntl to clear it.
        // The size fstat gave, and not a byte more: a file that grows meanwhile is read as it was (no second read
        // to find its end, which for a domain's three files is three system calls of a start).
        // Read into uninitialized memory: only the bytes the reads gave become the array's (no zeroing first).
        var failure: Refusal?
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            var count = 0
            while count < size {
                let got = systemRead(descriptor, buffer.baseAddress! + count, size - count)
                if got < 0, errno == EINTR { continue }
                guard got >= 0 else {
                    failure = .unreadable(errorText())
                    break
                }
                if got == 0 { break }
                count += got
            }
            initialized = count
        }
        if let failure { return .failure(failure) }
        if refusingPrivateKeys, PEMArmour.containsPrivateKey(bytes) { return .failure(.privateKey) }
        return .success(
            Contents(
                bytes: bytes, modified: Int(status.st_mtim.tv_sec), realPath: realPath,
                access: (UInt32(status.st_mode) & 0o7777, UInt32(status.st_gid))))
    }

    /// The name of `path`'s last component when `path` is `folder`, a slash and that name (nothing else between).
    static func entryName(of path: String, directlyIn folder: String) -> String? {
        // By the bytes, compared in place: the generic UTF8View walk cost thousands of instructions a domain.
        guard let start = Confinement.offset(of: path, below: folder) else { return nil }
        var path = path
        return path.withUTF8 { path -> String? in
            let name = UnsafeBufferPointer(rebasing: path[start...])
            guard !name.isEmpty, !name.contains(0x2F), !name.elementsEqual(".".utf8), !name.elementsEqual("..".utf8)
            else { return nil }
            return String(decoding: name, as: UTF8.self)
        }
    }

    /// The real path of the file open as `descriptor`: the kernel's name for it in `/proc/self/fd`, or where `/proc`
    /// is not mounted, `realpath` of `path` when it names the very file that is open (same device and inode).
    static func realPath(of descriptor: Int32, openedAs path: String, status: stat) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/fd/\(descriptor)", &buffer, buffer.count - 1)
        if length > 0 {
            let name = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            // " (deleted)" marks a file unlinked since the open: its name no longer leads to it.
            return name.hasSuffix(" (deleted)") || !name.hasPrefix("/") ? nil : name
        }
        guard let resolved = Confinement.realPath(path) else { return nil }
        var named = stat()
        guard stat(resolved, &named) == 0, named.st_dev == status.st_dev, named.st_ino == status.st_ino else {
            return nil
        }
        return resolved
    }

    private static func kind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFIFO: "FIFO"
        case S_IFCHR, S_IFBLK: "device"
        case S_IFSOCK: "socket"
        case S_IFDIR: "folder"
        default: "special file"
        }
    }

    private static func errorText() -> String { String(cString: strerror(errno)) }
}

extension ConfinedFile.Refusal {
    /// The finding for `file` (as the user named it), refused for this reason; `what` says what the file is for
    /// ("page '/x'", "the landing page template"), `capName` where its cap is documented.
    public func diagnostic(_ file: String, what: String, keyPath: String? = nil) -> Diagnostic {
        switch self {
        case .missing:
            Diagnostic(
                .error, rule: .missingFile, "\(what) does not exist (or is a broken symlink)", file: file,
                keyPath: keyPath, hint: "create it, or correct the path")
        case .unreadable(let reason):
            Diagnostic(
                .error, rule: .fileUnreadable, "cannot read \(what): \(reason)", file: file, keyPath: keyPath,
                hint: "check its permissions")
        case .outside(let real, let allowed):
            Diagnostic(
                .error, rule: .pathOutside,
                "\(what) leads to '\(real)', outside '\(allowed)'; it is not read", file: file, keyPath: keyPath,
                hint: "a domain may read only files inside its own folder: copy the file there instead of linking to it"
            )
        case .excluded(let real, let folder):
            Diagnostic(
                .error, rule: .pathOutside,
                "\(what) leads to '\(real)', inside the certificate folder '\(folder)'; it is not read", file: file,
                keyPath: keyPath, hint: "never link to certificates or keys from a domain folder; remove the link")
        case .notRegular(let kind):
            Diagnostic(
                .error, rule: .fileType, "\(what) is a \(kind), not a regular file; it is not read", file: file,
                keyPath: keyPath, hint: "replace it with a regular file")
        case .tooLarge(let size, let cap):
            Diagnostic(
                .error, rule: .fileTooLarge,
                "\(what) is \(size) bytes; the limit is \(cap) bytes, so it is not read", file: file,
                keyPath: keyPath, hint: "shrink it (the limits are in docs/security.md)")
        case .privateKey:
            Diagnostic(
                .error, rule: .privateKeyInPage,
                "\(what) holds a PEM private key (-----BEGIN … PRIVATE KEY-----); it is never served", file: file,
                keyPath: keyPath, hint: "remove the key from the folder and replace the key, which may have leaked")
        }
    }
}

/// `read(2)`, named apart from ``ConfinedFile/read(_:within:maximumBytes:refusingPrivateKeys:)``.
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}

extension Rule {
    /// Reported by `ConfinedFile`; also by `SiteConfigLoader`, `JSONParser`.
    public static let fileTooLarge = Rule(
        "file-too-large", .error,
        "A file is over its cap (`site.json` 1 MiB, the landing template 1 MiB, a signing identity file 1 MiB, `fullchain.pem` 1 MiB, `privkey.pem` 64 KiB; security.md); it is not read.",
        docs: "security.md#file-confinement-and-bounded-reads")

    /// Reported by `ConfinedFile`; also by `DiffInput`.
    public static let fileUnreadable = Rule(
        "file-unreadable", .error, "A file exists but cannot be opened or read (permissions).",
        docs: "security.md#file-confinement-and-bounded-reads")

    /// Reported by `ConfinedFile`; also by `DomainFolder`.
    public static let pathOutside = Rule(
        "path-outside", .error,
        "A file, or the domain folder itself, leads (through symlinks) outside the domain's own folder: into another domain's folder, the certificate folder, or anywhere else on the machine. Nothing is read through it. See security.md.",
        docs: "security.md#file-confinement-and-bounded-reads")

    /// Reported by `ConfinedFile`.
    public static let fileType = Rule(
        "file-type", .error, "A file is a FIFO, a device, a socket or a folder, not a regular file; it is not read.",
        docs: "security.md#file-confinement-and-bounded-reads")

    /// Reported by `ConfinedFile`.
    public static let privateKeyInPage = Rule(
        "private-key-in-page", .error,
        "A page or the landing template holds PEM private-key armour (`-----BEGIN … PRIVATE KEY-----`): it is never served, whatever its path. Replace the key: it may have leaked.",
        docs: "security.md#file-confinement-and-bounded-reads")
}
