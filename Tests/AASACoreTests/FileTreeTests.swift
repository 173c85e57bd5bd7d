import AASATestSupport
import Foundation
import Testing

@testable import AASACore

/// A domain's files read from memory (``MemoryFileTree``, a stored domain) load exactly as the same files in a folder
/// on disk (``FolderFileTree``): the same pages, tags and findings, the findings naming `<domain>/<path>`; and a
/// memory tree holds nothing outside its root.
@Suite struct FileTreeTests {
    /// The sample shop.example with more files: a nested page, a hidden file, a name no request can ask for, a page
    /// holding a private key, an icon whose name says another size, and a landing template.
    static let files: [String: [UInt8]] = {
        var files: [String: [UInt8]] = [:]
        let sample = RepositoryPaths.siteConfig + "/shop.example"
        for path in ["site.json", "pages/index.html", "pages/apple-touch-icon.png"] {
            files[path] = Array(FileManager.default.contents(atPath: sample + "/" + path) ?? Data())
        }
        files["pages/docs/deep/index.html"] = Array("<html><head><title>D</title></head><body>deep</body></html>".utf8)
        files["pages/.hidden"] = Array("hidden".utf8)
        files["pages/a%20b.html"] = Array("<html></html>".utf8)
        files["pages/key.pem"] = Array("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n".utf8)
        files["pages/apple-touch-icon-120x120.png"] = files["pages/apple-touch-icon.png"]
        files["pages/_landing.html"] = Array("<html><head><title>{{title}}</title></head><body></body></html>".utf8)
        return files
    }()

    @Test func aDomainInMemoryLoadsAsTheSameFilesInAFolder() throws {
        let folder = TemporaryDirectory("aasa-file-tree")
        for (path, bytes) in Self.files {
            let file = folder.path + "/shop.example/" + path
            try FileManager.default.createDirectory(
                atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            #expect(FileManager.default.createFile(atPath: file, contents: Data(bytes)))
        }
        let root = try #require(Confinement.realPath(folder.path + "/shop.example"))
        let site = try #require(Self.files["site.json"])
        let loader = SiteConfigLoader()
        let onDisk = loader.loadDomain(
            domain: "shop.example", source: SourceText(name: root + "/site.json", bytes: site),
            tree: FolderFileTree(root: root))
        let inMemory = loader.loadDomain(
            domain: "shop.example", source: SourceText(name: "shop.example/site.json", bytes: site),
            tree: MemoryFileTree(root: "shop.example", files: Self.files, modified: 1_700_000_000))

        let diskPages = try #require(onDisk.pages)
        let memoryPages = try #require(inMemory.pages)
        #expect(
            diskPages.files.keys.sorted() == [
                "/apple-touch-icon-120x120.png", "/apple-touch-icon.png",
                "/docs/deep/index.html", "/index.html",
            ])
        #expect(memoryPages.files.keys.sorted() == diskPages.files.keys.sorted())
        for (path, page) in diskPages.files {
            #expect(memoryPages.files[path]?.page.fixedBytes == page.page.fixedBytes, "\(path)")
            #expect(memoryPages.files[path]?.contentTag == page.contentTag, "\(path)")
            #expect(memoryPages.files[path]?.contentType == page.contentType, "\(path)")
        }
        #expect(memoryPages.files["/index.html"]?.lastModified == 1_700_000_000)
        #expect(memoryPages.landing?.withBanner.fixedBytes == diskPages.landing?.withBanner.fixedBytes)
        #expect(memoryPages.icons == diskPages.icons)

        func findings(_ loaded: LoadedDomain, root: String) -> [String] {
            loaded.diagnostics.map {
                "\($0.rule.id) \($0.severity) \($0.file?.replacingOccurrences(of: root, with: "<root>") ?? "-") "
                    + $0.message
            }.sorted()
        }
        #expect(findings(inMemory, root: "shop.example") == findings(onDisk, root: root))
        let files = inMemory.diagnostics.compactMap(\.file)
        #expect(files.contains("shop.example/pages/key.pem"), "\(files)")
        #expect(files.contains("shop.example/pages/apple-touch-icon-120x120.png"), "\(files)")
        #expect(files.contains("shop.example/pages/a%20b.html"), "\(files)")
    }

    @Test func aMemoryTreeHoldsNothingOutsideItsRoot() {
        let tree = MemoryFileTree(
            root: "shop.example",
            files: [
                "pages/a.html": [1], "../escape": [2], "/etc/passwd": [3], "pages//b": [4], "pages/./c": [5],
                "pages/\0d": [6], "big.bin": [UInt8](repeating: 0, count: 100),
            ], modified: 7)
        #expect(Set(tree.names(in: "shop.example")) == ["pages", "big.bin"])
        #expect(tree.names(in: "shop.example/pages") == ["a.html"])
        #expect(tree.entry(at: "shop.example/pages", followingLinks: true) == .folder)
        #expect(tree.entry(at: "shop.example/pages/a.html", followingLinks: false) == .file)
        #expect(tree.entry(at: "shop.example/../escape", followingLinks: true) == .missing)
        #expect(tree.entry(at: "shop.examplex/pages/a.html", followingLinks: true) == .missing)
        #expect(tree.realPath("shop.example/nothing") == nil)
        let confinement = Confinement(folder: "shop.example")
        #expect(
            (try? tree.read(
                "shop.example/pages/a.html", within: confinement, maximumBytes: 10, refusingPrivateKeys: true
            )
            .get().bytes) == [1])
        #expect(tree.modified("shop.example/pages/a.html") == 7)
        #expect(
            tree.read("shop.example/big.bin", within: confinement, maximumBytes: 10, refusingPrivateKeys: false)
                .failure == .tooLarge(size: 100, cap: 10))
        #expect(
            tree.read("shop.example/pages", within: confinement, maximumBytes: 10, refusingPrivateKeys: false)
                .failure == .notRegular("folder"))
        #expect(
            tree.read(
                "shop.example/pages/a.html", within: Confinement(folder: "shop.example/other"), maximumBytes: 10,
                refusingPrivateKeys: false
            ).failure == .outside("shop.example/pages/a.html", allowed: "shop.example/other"))
    }
}

extension Result {
    /// The error, or `nil` on success.
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
