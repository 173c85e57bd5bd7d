import AASATestSupport
import Foundation
import Testing

@testable import AASACore

#if canImport(Glibc)
    import Glibc
#endif

/// ``OpenFolder`` on real folders: a path below the folder opens the very file the path names, links and `..`
/// included; any other path opens as given; and the folder is the one that was there when it was opened.
@Suite struct OpenFolderTests {
    /// The device and inode of what `descriptor` is open as (closing it), or `nil` when the open failed.
    private func identity(_ descriptor: Int32) -> [UInt64]? {
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return nil }
        return [UInt64(status.st_dev), UInt64(status.st_ino)]
    }

    /// root/shop.example/site.json, root/shop.example/pages/index.html, root2/x (a sibling whose name starts with
    /// the root's), a link inside the root to a file beside it and one to a file outside it.
    private func folders() throws -> TemporaryDirectory {
        let directory = TemporaryDirectory("open-folder")
        try directory.write("root/shop.example/site.json", "{}")
        try directory.write("root/shop.example/pages/index.html", "<p>x</p>")
        try directory.write("root2/x", "sibling")
        try directory.write("outside.txt", "outside")
        #expect(symlink("site.json", directory.path + "/root/shop.example/alias.json") == 0)
        #expect(symlink("../../outside.txt", directory.path + "/root/shop.example/out.txt") == 0)
        return directory
    }

    @Test(arguments: [
        "/root/shop.example/site.json", "/root/shop.example", "/root/shop.example/pages/index.html",
        "/root/shop.example/pages/../site.json", "/root/shop.example/alias.json", "/root/shop.example/out.txt",
        "/root/../root2/x", "/root2/x", "/root", "/outside.txt", "/root/missing.json",
    ])
    func aPathOpensWhatItNamesFromTheFolderOrNot(path: String) throws {
        let directory = try folders()
        let root = try #require(OpenFolder(directory.path + "/root"))
        let full = directory.path + path
        let expected = identity(open(full, O_RDONLY | O_CLOEXEC))
        #expect(identity(root.open(full, O_RDONLY | O_CLOEXEC)) == expected)
        #expect(identity(OpenFolder.open(full, O_RDONLY | O_CLOEXEC, from: root)) == expected)
        #expect(identity(OpenFolder.open(full, O_RDONLY | O_CLOEXEC, from: nil)) == expected)
        if path == "/root/missing.json" {
            #expect(expected == nil)
            #expect(root.open(full, O_RDONLY | O_CLOEXEC) == -1 && errno == ENOENT)
        } else {
            #expect(expected != nil)
        }
    }

    /// `O_NOFOLLOW` applies to the last component as it does from `/`: a link there is refused, a folder above it
    /// is not a link.
    @Test func noFollowRefusesTheSameLinksFromTheFolder() throws {
        let directory = try folders()
        let root = try #require(OpenFolder(directory.path + "/root"))
        let link = directory.path + "/root/shop.example/alias.json"
        #expect(root.open(link, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) == -1 && errno == ELOOP)
        #expect(identity(root.open(directory.path + "/root/shop.example/site.json", O_RDONLY | O_NOFOLLOW)) != nil)
    }

    /// A root replaced after it was opened (renamed away, another made in its place) is read as it was until the
    /// next read opens it again; a path opened as given reads the new one.
    @Test func aFolderReplacedAfterItWasOpenedIsReadAsItWas() throws {
        let directory = try folders()
        let root = try #require(OpenFolder(directory.path + "/root"))
        try FileManager.default.moveItem(atPath: directory.path + "/root", toPath: directory.path + "/old")
        try directory.write("root/shop.example/site.json", "{\"new\": true}")
        let path = directory.path + "/root/shop.example/site.json"
        #expect(
            identity(root.open(path, O_RDONLY))
                == identity(open(directory.path + "/old/shop.example/site.json", O_RDONLY)))
        #expect(identity(open(path, O_RDONLY)) != identity(root.open(path, O_RDONLY)))
        #expect(OpenFolder(directory.path + "/missing") == nil)
        #expect(OpenFolder(directory.path + "/outside.txt") == nil)
    }

    /// A load's listings and reads from the folder held open give what they give from `/`.
    @Test func listingsAndReadsFromTheFolderAreThoseFromSlash() throws {
        let directory = try folders()
        let root = try #require(OpenFolder(directory.path + "/root"))
        let folder = directory.path + "/root/shop.example"
        let names = try #require(DirectoryListing.names(in: folder, from: root))
        #expect(Set(names) == Set(try #require(DirectoryListing.names(in: folder))))
        #expect(Set(names) == ["site.json", "pages", "alias.json", "out.txt"])
        #expect(DirectoryListing.names(in: directory.path + "/root/missing", from: root) == nil)
        let confinement = Confinement(folder: try #require(Confinement.realPath(folder)))
        let tree = FolderFileTree(root: folder, from: root)
        let read = try tree.read(
            folder + "/alias.json", within: confinement, maximumBytes: 100, refusingPrivateKeys: true
        )
        .get()
        #expect(read.bytes == Array("{}".utf8))
        #expect(read.realPath == confinement.folder + "/site.json")
        let outside = tree.read(folder + "/out.txt", within: confinement, maximumBytes: 100, refusingPrivateKeys: true)
        guard case .failure(.outside) = outside else {
            Issue.record("read a link out of the folder from the open root: \(outside)")
            return
        }
    }
}
