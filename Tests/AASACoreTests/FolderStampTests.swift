import AASATestSupport
import Foundation
import Testing

@testable import AASACore

#if canImport(Glibc)
    import Glibc
#endif

/// ``FolderStamp`` on real folders: what moves a stamp, and what a stamp is refused for.
@Suite struct FolderStampTests {
    /// The stamp of `path` with no settling time (the files of a test are all new).
    func stamp(_ path: String, context: String = "build") -> String? {
        FolderStamp.of(path, context: context, settling: 0)
    }

    /// A domain folder with a site.json and two pages, one in a subfolder.
    func domain(_ root: TemporaryDirectory) throws -> String {
        try root.write("shop.example/site.json", "{}")
        try root.write("shop.example/pages/index.html", "<p>one</p>")
        try root.write("shop.example/pages/help/faq.html", "<p>faq</p>")
        return root.path + "/shop.example"
    }

    /// Waits past a tick of the clock file times are taken from.
    func tick() { usleep(30_000) }

    @Test func aTreeNobodyWroteKeepsItsStampAndTheContextIsInIt() throws {
        let root = TemporaryDirectory("stamp-same")
        let folder = try domain(root)
        let first = try #require(stamp(folder))
        #expect(first.count == 64 && first.allSatisfy(\.isHexDigit))
        // Reading changes nothing.
        _ = FileManager.default.contents(atPath: folder + "/pages/index.html")
        #expect(stamp(folder) == first)
        #expect(stamp(folder, context: "another build") != first)
    }

    @Test func writingAddingRemovingOrRenamingAnyFileMovesTheStamp() throws {
        let root = TemporaryDirectory("stamp-moves")
        let folder = try domain(root)
        var previous = try #require(stamp(folder))
        let changes: [(String, () throws -> Void)] = [
            // The same size, in a subfolder: only the file's times tell.
            ("a page rewritten", { try root.write("shop.example/pages/help/faq.html", "<p>FAQ</p>") }),
            ("a page added", { try root.write("shop.example/pages/new.html", "new") }),
            ("a page removed", { try FileManager.default.removeItem(atPath: folder + "/pages/new.html") }),
            (
                "a page renamed",
                {
                    try FileManager.default.moveItem(
                        atPath: folder + "/pages/index.html", toPath: folder + "/pages/home.html")
                }
            ),
            ("site.json rewritten", { try root.write("shop.example/site.json", "[]") }),
            ("its mode changed", { #expect(chmod(folder + "/site.json", 0o600) == 0) }),
        ]
        for (what, change) in changes {
            tick()
            try change()
            let next = try #require(stamp(folder), "\(what)")
            #expect(next != previous, "\(what) left the stamp as it was")
            previous = next
        }
    }

    @Test func aTreeWithALinkAFifoTooManyEntriesOrAFreshChangeHasNoStamp() throws {
        let root = TemporaryDirectory("stamp-refused")
        let folder = try domain(root)
        // Written just now: within the settling time.
        #expect(FolderStamp.of(folder, context: "build") == nil)
        #expect(stamp(folder) != nil)

        try FileManager.default.createSymbolicLink(
            atPath: folder + "/pages/linked.html", withDestinationPath: folder + "/pages/index.html")
        #expect(stamp(folder) == nil)
        try FileManager.default.removeItem(atPath: folder + "/pages/linked.html")
        #expect(stamp(folder) != nil)

        #expect(mkfifo(folder + "/pages/pipe", 0o600) == 0)
        #expect(stamp(folder) == nil)
        try FileManager.default.removeItem(atPath: folder + "/pages/pipe")

        // The folder itself a link: the stamp is of a tree below a path, never of what a link points to.
        try FileManager.default.createSymbolicLink(atPath: root.path + "/linked.example", withDestinationPath: folder)
        #expect(stamp(root.path + "/linked.example") == nil)
        #expect(stamp(root.path + "/missing.example") == nil)

        // Folders nested one deeper than the walk follows, and then exactly as deep.
        let nested = (0...FolderStamp.maximumDepth).map { "n\($0)" }.joined(separator: "/")
        try root.write("shop.example/" + nested + "/deep.html", "")
        #expect(stamp(folder) == nil)
        try FileManager.default.removeItem(atPath: folder + "/" + nested)
        #expect(stamp(folder) != nil)

        for index in 0..<FolderStamp.maximumEntries { try root.write("shop.example/pages/many/\(index).html", "") }
        // The entries: site.json, pages/, index.html, help/, faq.html, many/ and its files.
        #expect(stamp(folder) == nil)
    }
}
