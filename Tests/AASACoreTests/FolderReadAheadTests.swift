import AASATestSupport
import Foundation
import Testing

@testable import AASACore

#if canImport(Glibc)
    import Glibc
#endif

/// ``FolderReadAhead`` on real folders of a disk file system, its effect read from the page cache with `mincore`.
@Suite struct FolderReadAheadTests {
    @Test func bringsEachFolderIntoThePageCacheAndNothingALinkPointsTo() throws {
        let root = try DiskFolder()
        let outside = try root.file("outside.json")
        let folders = try (0..<300).map { index in
            let folder = try root.folder("d\(index).example")
            _ = try root.file("d\(index).example/site.json")
            if index % 30 == 0 {
                try FileManager.default.createSymbolicLink(
                    atPath: folder + "/linked.json", withDestinationPath: outside)
            }
            return folder
        }
        // A FIFO opened for reading without O_NONBLOCK would wait for a writer forever.
        #expect(mkfifo(folders[7] + "/pipe", 0o600) == 0)
        // A domain folder that is a link to a folder elsewhere.
        _ = try root.folder("elsewhere")
        let elsewhere = try root.file("elsewhere/site.json")
        try FileManager.default.createSymbolicLink(
            atPath: root.path + "/linked.example", withDestinationPath: root.path + "/elsewhere")
        let files = folders.map { $0 + "/site.json" }
        for file in files + [outside, elsewhere] { try PageCache.evict(file) }
        try #require(
            (files + [outside, elsewhere]).allSatisfy { PageCache.residentPages(of: $0) == 0 },
            "the file system at \(root.path) keeps pages in memory after POSIX_FADV_DONTNEED")

        // None of them is cached: every folder is looked at.
        let ahead = FolderReadAhead(
            folders: folders + [root.path + "/linked.example"],
            files: ["site.json", "linked.json", "pipe", "absent.json"])
        #expect(waitUntil { ahead.foldersRead == folders.count + 1 })
        ahead.stop()

        #expect(waitUntil { files.allSatisfy { PageCache.residentPages(of: $0) > 0 } })
        #expect(PageCache.residentPages(of: outside) == 0, "it read through a linked file")
        #expect(PageCache.residentPages(of: elsewhere) == 0, "it read through a linked folder")
    }

    @Test func readingEntriesLooksAtEachFolderAndReadsNoFile() throws {
        let root = try DiskFolder()
        let folders = try (0..<300).map { index in
            let folder = try root.folder("d\(index).example")
            try PageCache.evict(try root.file("d\(index).example/site.json"))
            return folder
        }
        let ahead = FolderReadAhead(folders: folders, files: ["site.json"], reading: .entries)
        #expect(waitUntil { ahead.isDone })
        ahead.stop()
        #expect(ahead.foldersRead > 0)
        #expect(folders.allSatisfy { PageCache.residentPages(of: $0 + "/site.json") == 0 }, "it read a file")
    }

    @Test func staysWithinItsWindowAndSkipsWhatTheParsersPassed() throws {
        let root = try DiskFolder()
        let folders = try (0..<400).map { index in
            let folder = try root.folder("d\(index).example")
            try PageCache.evict(try root.file("d\(index).example/site.json"))
            return folder
        }
        let ahead = FolderReadAhead(folders: folders, files: ["site.json"], window: 100)
        defer { ahead.stop() }
        #expect(waitUntil { ahead.foldersRead == 100 })
        usleep(200_000)
        #expect(ahead.foldersRead == 100, "it went past the window")

        // Each folder reached once, in any order, as a concurrent map's parsers reach them: 199 before 0 and 128,
        // whose parsers wake the waiting threads (one in 128 does). By then the parsers are past every folder up
        // to 199.
        for index in (1...199).filter({ $0 != 128 }) { ahead.reached(index) }
        usleep(200_000)
        #expect(ahead.foldersRead == 100, "woken by a folder that was not a multiple of 128")
        ahead.reached(0)
        ahead.reached(128)
        #expect(waitUntil { ahead.foldersRead == 200 })
        usleep(200_000)
        #expect(ahead.foldersRead == 200)
        let read = folders.map { PageCache.residentPages(of: $0 + "/site.json") > 0 }
        #expect(read[0..<100].allSatisfy { $0 })
        #expect(read[100..<200].allSatisfy { !$0 }, "it read folders the parsers had passed")
        #expect(read[200..<300].allSatisfy { $0 })
        #expect(read[300...].allSatisfy { !$0 }, "it went past the window")
    }

    @Test func foldersAlreadyCachedAreOnlySampled() throws {
        let root = try DiskFolder()
        let folders = try (0..<2000).map { index in
            let folder = try root.folder("d\(index).example")
            _ = try root.file("d\(index).example/site.json")
            return folder
        }
        let ahead = try #require(FolderReadAhead.start(folders, count: folders.count, files: ["site.json"]))
        // Nothing is read from the disk: after 64 cached folders in a row, one in 64 is looked at (about 95 of
        // 2,000, and a few more while the threads see the run).
        #expect(waitUntil { ahead.isDone })
        ahead.stop()
        #expect(ahead.foldersRead < folders.count / 8, "\(ahead.foldersRead) of \(folders.count) looked at")
    }

    @Test func aFewFoldersAreReadWithoutIt() {
        #expect(
            FolderReadAhead.start(["/nowhere"], count: FolderReadAhead.minimumFolders - 1, files: ["site.json"]) == nil)
    }

    /// Polls `condition` for up to 20 s.
    private func waitUntil(_ condition: () -> Bool) -> Bool {
        for _ in 0..<2000 {
            if condition() { return true }
            usleep(10_000)
        }
        return condition()
    }
}

/// A folder under the repository's `.build`, on the disk: the system's temporary folder may be a tmpfs, whose pages
/// never leave memory. Removed when released.
private final class DiskFolder {
    let path = RepositoryPaths.root + "/.build/read-ahead-\(UUID().uuidString)"

    init() throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func folder(_ name: String) throws -> String {
        try FileManager.default.createDirectory(atPath: path + "/" + name, withIntermediateDirectories: true)
        return path + "/" + name
    }

    /// A file of 8 KiB (two pages), written to the disk.
    func file(_ name: String) throws -> String {
        let file = path + "/" + name
        try Data(repeating: UInt8(ascii: "x"), count: 8192).write(to: URL(fileURLWithPath: file))
        return file
    }
}

/// What the page cache holds of a file.
private enum PageCache {
    /// Writes `path` to the disk and drops its pages from the cache.
    static func evict(_ path: String) throws {
        let file = open(path, O_RDONLY)
        guard file >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        defer { close(file) }
        fsync(file)
        _ = posix_fadvise(file, 0, 0, POSIX_FADV_DONTNEED)
    }

    /// How many of the file's pages are in the cache (`mincore` of a mapping of it).
    static func residentPages(of path: String) -> Int {
        let file = open(path, O_RDONLY)
        guard file >= 0 else { return -1 }
        defer { close(file) }
        var status = stat()
        guard fstat(file, &status) == 0, status.st_size > 0 else { return -1 }
        let length = Int(status.st_size)
        guard let mapping = mmap(nil, length, PROT_READ, MAP_SHARED, file, 0), mapping != MAP_FAILED else {
            return -1
        }
        defer { munmap(mapping, length) }
        let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
        var vector = [UInt8](repeating: 0, count: (length + pageSize - 1) / pageSize)
        guard mincore(mapping, length, &vector) == 0 else { return -1 }
        return vector.reduce(0) { $0 + Int($1 & 1) }
    }
}
