import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Brings folders that a load is about to read into the page cache, many at once, ahead of the threads that parse
/// them.
///
/// A load reads each domain's folder and each certificate folder: a listing and two or three small files, each in a
/// block of its own on disk. From the page cache (a restart) that costs microseconds. From the disk (the first start
/// after a boot, or more folders than the page cache holds: a million domains are five million files), each parsing
/// thread waits for one read at a time, so a disk that serves many reads at once is given one or two.
///
/// Each of this type's ``threads`` takes the next folder, opens the files the load will read in it (the folder's block
/// and the files' inodes) and asks the kernel to read each (`posix_fadvise(POSIX_FADV_WILLNEED)`, then the first byte
/// read and waited for), so up to that many folders wait on the disk together. They stay at most ``window`` folders past
/// the last one a parser ``reached(_:)`` (a thread that gets there sleeps until the parsers move on), so what they
/// bring in is still cached when the parsers get there, and they skip what the parsers have passed.
///
/// Folders already cached cost an open and a byte of each file, and not even that for long: after ``cachedRun``
/// folders in a row whose reading made the thread read nothing from the disk (its `getrusage` block input), the
/// threads look at one folder in ``stride``, and go back to every folder at the first one that reads the disk.
///
/// With ``Reading/entries`` it reads only the folders' entries and the files' inodes (a `stat` of each), for a walk
/// that decides from them which files to read.
///
/// It reads and nothing else, within bounds: only the files it is given the names of, never through a symbolic link
/// (neither the folder nor the file), only regular files, opened non-blocking, and at most ``bytesPerFile`` of each.
public final class FolderReadAhead: Sendable {
    /// How many threads read at once.
    public static let threads = 8
    /// How many folders past the parsers the threads go at most.
    public static let window = 2048
    /// The bytes of each file read ahead at most.
    public static let bytesPerFile = 64 * 1024
    /// Folders in a row found cached after which the threads only sample.
    public static let cachedRun = 64
    /// One folder in this many is looked at while sampling.
    public static let stride = 64

    /// The folders, in the order the parsers take them.
    private let folders: [String]
    /// The names of the files read ahead in each folder.
    private let files: [String]
    /// What of them is read.
    private let reading: Reading
    /// How many folders past the parsers the threads go at most (``window`` but in tests).
    private let reach: Int
    /// The next folder a thread takes.
    private let next = Atomic<Int>(0)
    /// The furthest folder a parser has reached.
    private let parsed = Atomic<Int>(-1)
    /// Folders in a row that were already cached.
    private let cached = Atomic<Int>(0)
    /// Set by ``stop()``.
    private let stopped = Atomic<Bool>(false)
    /// Folders looked at.
    private let looked = Atomic<Int>(0)
    private let workers = Mutex<[ServiceThread]>([])
    /// Threads that have not yet run out of folders.
    private let active = Atomic<Int>(0)
    /// Threads waiting for the parsers to come within ``window``, and where they sleep.
    private let waiters = Atomic<Int>(0)
    private let wakeUp = Monitor(())
    /// The parsers wake the waiting threads once every this many folders.
    static let wakeEvery = 128

    /// Below this many folders a load reads without threads of its own reading ahead (a reload of a few changes).
    public static let minimumFolders = 256

    /// What is read of each file named.
    public enum Reading: Sendable {
        /// Its start, up to ``bytesPerFile``: for the threads that parse the files.
        case contents
        /// Its entry in the folder and its inode (a `stat`), never a byte of it: for a walk that looks at the
        /// files' times and sizes (``FolderStamp``) and reads only some of them.
        case entries
    }

    /// Starts reading the files named `files` in each of `folders` (paths, in the order they will be parsed) ahead;
    /// `nil` for fewer than ``minimumFolders``. Stop it (``stop()``) when the parsers are done.
    public static func start(
        _ folders: @autoclosure () -> [String], count: Int, files: [String], reading: Reading = .contents
    ) -> FolderReadAhead? {
        count < minimumFolders ? nil : FolderReadAhead(folders: folders(), files: files, reading: reading)
    }

    /// Starts reading the files named `files` in each of `folders` (paths, in the order they will be parsed) ahead.
    /// When no thread can be started, the load reads as it would without this.
    public convenience init(folders: [String], files: [String], reading: Reading = .contents) {
        self.init(folders: folders, files: files, reading: reading, window: Self.window)
    }

    init(folders: [String], files: [String], reading: Reading = .contents, window: Int) {
        self.folders = folders
        self.files = files
        self.reading = reading
        reach = window
        guard !folders.isEmpty else { return }
        for index in 0..<min(Self.threads, folders.count) {
            active.wrappingAdd(1, ordering: .relaxed)
            guard
                let thread = try? ServiceThread(
                    name: "read-ahead-\(index)",
                    { [self] in
                        run()
                        active.wrappingSubtract(1, ordering: .releasing)
                    })
            else {
                active.wrappingSubtract(1, ordering: .relaxed)
                break
            }
            workers.withLock { $0.append(thread) }
        }
    }

    /// Tells the threads that a parser has reached the folder at `index` of the list.
    public func reached(_ index: Int) {
        var seen = parsed.load(ordering: .relaxed)
        while index > seen {
            let (exchanged, current) = parsed.compareExchange(
                expected: seen, desired: index, ordering: .sequentiallyConsistent)
            if exchanged { break }
            seen = current
        }
        // Each index is reached once, so this wakes the waiting threads once every `wakeEvery` folders. The
        // sequentially consistent orderings keep a thread that starts waiting now from missing the new position.
        if index % Self.wakeEvery == 0 && waiters.load(ordering: .sequentiallyConsistent) > 0 {
            wakeUp.broadcast()
        }
    }

    /// Stops the threads and waits for them; every load calls it when its parsers are done.
    public func stop() {
        stopped.store(true, ordering: .sequentiallyConsistent)
        wakeUp.broadcast()
        for thread in workers.withLock({ $0 }) { thread.join() }
    }

    /// Whether every thread has run out of folders (or was stopped).
    var isDone: Bool { active.load(ordering: .acquiring) == 0 }

    /// How many folders the threads have looked at (read ahead, or found cached).
    var foldersRead: Int { looked.load(ordering: .relaxed) }

    private func run() {
        while !stopped.load(ordering: .relaxed) {
            let step = cached.load(ordering: .relaxed) >= Self.cachedRun ? Self.stride : 1
            let index = next.wrappingAdd(step, ordering: .relaxed).oldValue
            guard index < folders.count else { return }
            let reached = parsed.load(ordering: .relaxed)
            if index <= reached {
                // The parsers are past it: go on from where they are.
                _ = next.compareExchange(expected: index + step, desired: reached + 1, ordering: .relaxed)
                continue
            }
            if index > parsed.load(ordering: .relaxed) + reach {
                waiters.wrappingAdd(1, ordering: .sequentiallyConsistent)
                wakeUp.wait { _ in
                    stopped.load(ordering: .sequentiallyConsistent)
                        || index <= parsed.load(ordering: .sequentiallyConsistent) + reach ? () : nil
                }
                waiters.wrappingSubtract(1, ordering: .relaxed)
                if stopped.load(ordering: .relaxed) { return }
            }
            // The parsers may have passed it while this thread waited.
            if index <= parsed.load(ordering: .relaxed) { continue }
            let before = Self.blocksRead()
            Self.readAhead(files, in: folders[index], reading: reading)
            if Self.blocksRead() == before {
                cached.wrappingAdd(1, ordering: .relaxed)
            } else {
                cached.store(0, ordering: .relaxed)
            }
            looked.wrappingAdd(1, ordering: .relaxed)
        }
    }

    /// Asks the kernel to read the start (or only the entry and inode) of each of `files` in the folder `path`.
    private static func readAhead(_ files: [String], in path: String, reading: Reading) {
        let folder = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard folder >= 0 else { return }
        defer { close(folder) }
        for name in files {
            if reading == .entries {
                var status = stat()
                _ = fstatat(folder, name, &status, AT_SYMLINK_NOFOLLOW)
                continue
            }
            let file = openat(folder, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
            guard file >= 0 else { continue }
            var status = stat()
            if fstat(file, &status) == 0 && status.st_mode & S_IFMT == S_IFREG {
                // The kernel reads the rest on its own; the first byte is waited for, so each thread keeps one
                // folder in flight.
                _ = posix_fadvise(file, 0, off_t(bytesPerFile), POSIX_FADV_WILLNEED)
                var byte: UInt8 = 0
                _ = pread(file, &byte, 1, 0)
            }
            close(file)
        }
    }

    /// The blocks the calling thread has read from the disk (`getrusage(RUSAGE_THREAD)`'s block input, which
    /// counts the reads it started, `posix_fadvise`'s among them); 0 where the system does not say.
    private static func blocksRead() -> Int {
        #if os(Linux)
            var usage = rusage()
            // RUSAGE_THREAD (1), which the Glibc module does not import.
            guard getrusage(__rusage_who_t(1), &usage) == 0 else { return 0 }
            return usage.ru_inblock
        #else
            return 0
        #endif
    }
}
