import AASATestSupport
import Foundation
import Testing

@testable import AASACore

#if canImport(Glibc)
    import Glibc
#endif

/// ``DirectoryListing`` on real folders: every entry once with its kind, small folders and large ones alike, and a
/// folder that cannot be listed.
@Suite struct DirectoryListingTests {
    @Test func aFolderListsEveryEntryOnceWithItsKindAndNotItsDots() throws {
        let root = TemporaryDirectory("listing-kinds")
        try root.write("site.json", "{}")
        try root.write("pages/index.html", "<p>x</p>")
        try root.write("é-ünïcode.txt", "x")
        // Names that start or end with dots are entries; only `.` and `..` are not.
        for dotted in [".a", "..data", "...", "a."] { try root.write(dotted, "x") }
        try FileManager.default.createSymbolicLink(atPath: root.path + "/link", withDestinationPath: "site.json")
        let entries = try #require(DirectoryListing.entries(in: root.path))
        let kinds = Dictionary(uniqueKeysWithValues: entries.map { ($0.name, $0.kind) })
        #expect(kinds.count == entries.count)
        #expect(
            Set(kinds.keys) == ["site.json", "pages", "é-ünïcode.txt", "link", ".a", "..data", "...", "a."])
        // A file system that does not record kinds says `.unknown`; the test folder's records them.
        #expect(kinds["pages"] == .folder)
        #expect(kinds["link"] == .link)
        #expect(kinds["site.json"] == .other)
        #expect(DirectoryListing.folderNames(in: root.path) == ["pages"])
    }

    @Test(arguments: [0, 1, 30, 600])
    func foldersOfEverySizeListWhatFoundationLists(count: Int) throws {
        let root = TemporaryDirectory("listing-\(count)")
        try FileManager.default.createDirectory(atPath: root.path, withIntermediateDirectories: true)
        // Long names fill the first 1 KiB read at once, past the point where the listing takes a larger buffer.
        for index in 0..<count {
            try root.write("d\(index)-" + String(repeating: "n", count: index % 90) + ".example/site.json", "{}")
        }
        let listed = try #require(DirectoryListing.names(in: root.path))
        #expect(listed.count == count)
        #expect(Set(listed) == Set(try FileManager.default.contentsOfDirectory(atPath: root.path)))
    }

    @Test func aFolderThatCannotBeListedIsNilWithItsReason() throws {
        let root = TemporaryDirectory("listing-missing")
        try root.write("file", "x")
        let absent = DirectoryListing.entries(in: root.path + "/absent")
        let absentError = errno
        let file = DirectoryListing.entries(in: root.path + "/file")
        let fileError = errno
        #expect(absent == nil)
        #expect(absentError == ENOENT)
        #expect(file == nil)
        #expect(fileError == ENOTDIR)
    }

    /// A `readdir` record is read in place, up to its name's NUL: here its name ends where readable memory does, a
    /// page nobody may read right after it, as the last record of `readdir`'s buffer can end. Copying `d_name`'s
    /// declared 256 bytes reads into that page and the process dies with `SIGSEGV`.
    @Test(arguments: [".", "shop.example", String(repeating: "n", count: 255)])
    func aRecordEndingWhereMemoryEndsIsReadUpToItsName(name: String) throws {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let memory = try #require(mmap(nil, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))
        try #require(memory != MAP_FAILED)
        defer { munmap(memory, 2 * page) }
        try #require(mprotect(memory + page, page, PROT_NONE) == 0)
        // A record as the kernel lays it out: 8-byte aligned, its name NUL-ended, the rest of it padding.
        let length = (DirectoryListing.nameOffset + name.utf8.count + 1 + 7) & ~7
        let record = memory + page - length
        record.initializeMemory(as: UInt8.self, repeating: 0, count: length)
        record.storeBytes(of: UInt8(DT_DIR), toByteOffset: DirectoryListing.typeOffset, as: UInt8.self)
        for (index, byte) in name.utf8.enumerated() {
            record.storeBytes(of: byte, toByteOffset: DirectoryListing.nameOffset + index, as: UInt8.self)
        }
        let entry = DirectoryListing.entry(at: UnsafeRawPointer(record))
        #expect(entry.name == name)
        #expect(entry.kind == .folder)
    }
}
