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
        try FileManager.default.createSymbolicLink(atPath: root.path + "/link", withDestinationPath: "site.json")
        let entries = try #require(DirectoryListing.entries(in: root.path))
        let kinds = Dictionary(uniqueKeysWithValues: entries.map { ($0.name, $0.kind) })
        #expect(kinds.count == entries.count)
        #expect(Set(kinds.keys) == ["site.json", "pages", "é-ünïcode.txt", "link"])
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
}
