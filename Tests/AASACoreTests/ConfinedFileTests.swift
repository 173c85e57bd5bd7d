import AASATestSupport
import Foundation
import Testing

@testable import AASACore

/// Files read for a domain stay inside its folder, are regular, bounded, and never private keys.
@Suite struct ConfinedFileTests {
    /// site-config/shop.example and site-config/links.example beside certs/links.example with a key.
    private func tenants() throws -> (TemporaryDirectory, Confinement) {
        let directory = TemporaryDirectory()
        try directory.write("site-config/shop.example/site.json", "{}")
        try directory.write("site-config/links.example/site.json", "{\"secret\": true}")
        try directory.write(
            "certs/links.example/privkey.pem", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
        let folder = try #require(Confinement.realPath(directory.path + "/site-config/shop.example"))
        let certs = try #require(Confinement.realPath(directory.path + "/certs"))
        return (directory, Confinement(folder: folder, excluded: [certs]))
    }

    private func link(_ directory: TemporaryDirectory, _ name: String, to target: String) throws -> String {
        let path = directory.path + "/site-config/shop.example/" + name
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        #expect(symlink(target, path) == 0)
        return path
    }

    @Test func aFileInsideTheFolderIsReadWhole() throws {
        let (directory, confinement) = try tenants()
        let read = try ConfinedFile.read(
            directory.path + "/site-config/shop.example/site.json", within: confinement, maximumBytes: 100
        ).get()
        #expect(read.bytes == Array("{}".utf8))
        #expect(read.realPath == confinement.folder + "/site.json")
    }

    /// Opened from `/` or from the config folder held open (``OpenFolder``), as a load opens it: the same checks.
    @Test(
        arguments: [
            "../../links.example/site.json", "../../../certs/links.example/privkey.pem", "/etc/passwd",
            "/proc/self/environ",
        ], [false, true])
    func aSymlinkOutOfTheFolderIsRefusedAfterItIsOpened(target: String, fromRoot: Bool) throws {
        let (directory, confinement) = try tenants()
        let path = try link(directory, "pages/x.html", to: target)
        let root = fromRoot ? OpenFolder(directory.path + "/site-config") : nil
        #expect(!fromRoot || root != nil)
        let result = ConfinedFile.read(path, within: confinement, maximumBytes: 1 << 20, from: root)
        expectRefusedOutside(result, of: confinement, path: path, what: "page '/x.html'", target: target)
    }

    /// That `result` is a refusal for leading outside `confinement`'s folder (or into the certificate folder), to a
    /// real path outside it, whose finding names the file and where it leads.
    private func expectRefusedOutside(
        _ result: Result<ConfinedFile.Contents, ConfinedFile.Refusal>, of confinement: Confinement, path: String,
        what: String, target: String
    ) {
        guard case .failure(let refusal) = result else {
            Issue.record("read \(target) through a link")
            return
        }
        switch refusal {
        case .outside(let real, _), .excluded(let real, _):
            #expect(!real.hasPrefix(confinement.folder + "/"))
            let finding = refusal.diagnostic(path, what: what)
            #expect(finding.rule == .pathOutside)
            #expect(finding.file == path)
            #expect(finding.message.contains(real))
        default:
            Issue.record("unexpected refusal \(refusal)")
        }
    }

    @Test func theCertificateFolderIsRefusedEvenInsideTheFolder() throws {
        let (directory, _) = try tenants()
        let folder = try #require(Confinement.realPath(directory.path))
        let confinement = Confinement(folder: folder, excluded: [folder + "/certs"])
        let result = ConfinedFile.read(
            directory.path + "/certs/links.example/privkey.pem", within: confinement, maximumBytes: 1 << 20)
        #expect(
            throws: ConfinedFile.Refusal.excluded(
                folder + "/certs/links.example/privkey.pem", folder: folder + "/certs")
        ) {
            try result.get()
        }
    }

    @Test func aFileDirectlyInAListedFolderIsReadWithItsRealPathModeAndGroup() throws {
        let (directory, confinement) = try tenants()
        let folder = directory.path + "/site-config/shop.example"
        let read = try ConfinedFile.read(
            folder + "/site.json", within: confinement, maximumBytes: 100, listedFolder: folder
        ).get()
        #expect(read.bytes == Array("{}".utf8))
        #expect(read.realPath == confinement.folder + "/site.json")
        var status = stat()
        #expect(stat(folder + "/site.json", &status) == 0)
        #expect(read.access?.mode == UInt32(status.st_mode) & 0o7777)
        #expect(read.access?.group == UInt32(status.st_gid))
    }

    @Test(
        arguments: [
            "../links.example/site.json", "../../certs/links.example/privkey.pem", "/etc/passwd",
        ], [false, true])
    func aLinkDirectlyInAListedFolderIsStillResolvedAndRefused(target: String, fromRoot: Bool) throws {
        let (directory, confinement) = try tenants()
        let folder = directory.path + "/site-config/shop.example"
        try FileManager.default.removeItem(atPath: folder + "/site.json")
        #expect(symlink(target, folder + "/site.json") == 0)
        let root = fromRoot ? OpenFolder(directory.path + "/site-config") : nil
        #expect(!fromRoot || root != nil)
        let result = ConfinedFile.read(
            folder + "/site.json", within: confinement, maximumBytes: 1 << 20, listedFolder: folder, from: root)
        expectRefusedOutside(result, of: confinement, path: folder + "/site.json", what: "site.json", target: target)
    }

    /// The listed folder's real path is taken as the caller gives it: confined to a path that reaches the folder
    /// through a link (`alias/`), a file directly in the listed folder is placed there without asking the kernel,
    /// while the same read without the listing asks, finds the real path, and refuses it as outside.
    @Test func aListedFolderPlacesItsFileWithoutAskingTheKernelWhereItLies() throws {
        let (directory, _) = try tenants()
        #expect(symlink(directory.path + "/site-config", directory.path + "/alias") == 0)
        let folder = directory.path + "/alias/shop.example"
        let confinement = Confinement(folder: folder)
        let listed = try ConfinedFile.read(
            folder + "/site.json", within: confinement, maximumBytes: 100, listedFolder: folder
        ).get()
        #expect(listed.realPath == folder + "/site.json")
        let asked = ConfinedFile.read(folder + "/site.json", within: confinement, maximumBytes: 100)
        let real = try #require(Confinement.realPath(directory.path + "/site-config/shop.example/site.json"))
        #expect(throws: ConfinedFile.Refusal.outside(real, allowed: folder)) { try asked.get() }
    }

    @Test func aLinkDirectlyInAListedFolderToAFileBesideItIsReadWhereItLeads() throws {
        let (directory, confinement) = try tenants()
        let folder = directory.path + "/site-config/shop.example"
        try directory.write("site-config/shop.example/..data/site.json", "{\"v\": 2}")
        try FileManager.default.removeItem(atPath: folder + "/site.json")
        #expect(symlink("..data/site.json", folder + "/site.json") == 0)
        let read = try ConfinedFile.read(
            folder + "/site.json", within: confinement, maximumBytes: 100, listedFolder: folder
        ).get()
        #expect(read.bytes == Array("{\"v\": 2}".utf8))
        #expect(read.realPath == confinement.folder + "/..data/site.json")
    }

    @Test(arguments: [
        ("/a/b", "/a", "b"), ("/a/site.json", "/a", "site.json"), ("/a/b/c", "/a", nil), ("/ab/c", "/a", nil),
        ("/a/", "/a", nil), ("/a", "/a", nil), ("/a/..", "/a", nil), ("/a/.", "/a", nil), ("/a/é", "/a", "é"),
        ("/b/c", "/a", nil), ("/ab/c/d", "/ac/c", nil), ("/c", "", "c"), ("c", "", nil),
    ])
    func onlyAnEntryOfTheFolderItselfIsDirectlyInIt(path: String, folder: String, name: String?) {
        #expect(ConfinedFile.entryName(of: path, directlyIn: folder) == name)
    }

    /// A path lies within a folder by its bytes: a folder named `café` decomposed holds nothing of `caféa` composed
    /// (whose first bytes are canonically the folder's name, and whose next byte after the folder's length is a
    /// slash), nor is it the folder `café` composed.
    @Test(arguments: [
        ("/c/cafe\u{301}/x", "/c/cafe\u{301}", true), ("/c/cafe\u{301}", "/c/cafe\u{301}", true),
        ("/c/cafe\u{301}/", "/c/cafe\u{301}", true), ("/c/caf\u{E9}a/x", "/c/cafe\u{301}", false),
        ("/c/caf\u{E9}", "/c/cafe\u{301}", false), ("/c/caf\u{E9}/x", "/c/cafe\u{301}", false),
        ("/c/cafe\u{301}x/y", "/c/cafe\u{301}", false), ("/anything", "/", true), ("/a", "/ab", false),
    ])
    func aPathIsWithinAFolderByItsBytes(path: String, folder: String, within: Bool) {
        #expect(Confinement.path(path, isWithin: folder) == within)
    }

    @Test func aKubernetesDataSwapInsideTheFolderIsRead() throws {
        let (directory, confinement) = try tenants()
        let folder = directory.path + "/site-config/shop.example"
        try directory.write("site-config/shop.example/..2026_11_25_01/pages/index.html", "<p>v1</p>")
        #expect(symlink("..2026_11_25_01", folder + "/..data") == 0)
        #expect(symlink("..data/pages", folder + "/pages") == 0)
        let read = try ConfinedFile.read(folder + "/pages/index.html", within: confinement, maximumBytes: 100).get()
        #expect(read.bytes == Array("<p>v1</p>".utf8))
    }

    @Test func aFIFOIsRefusedWithoutWaitingForAWriter() throws {
        let (directory, confinement) = try tenants()
        let path = directory.path + "/site-config/shop.example/fifo.html"
        #expect(mkfifo(path, 0o644) == 0)
        #expect(throws: ConfinedFile.Refusal.notRegular("FIFO")) {
            try ConfinedFile.read(path, within: confinement, maximumBytes: 100).get()
        }
    }

    @Test func aDeviceIsRefused() throws {
        let (directory, confinement) = try tenants()
        let path = try link(directory, "zero.html", to: "/dev/zero")
        // /dev/zero is outside the folder and a device: either refusal keeps it unread.
        let result = ConfinedFile.read(path, within: Confinement(folder: "/"), maximumBytes: 100)
        #expect(throws: ConfinedFile.Refusal.notRegular("device")) { try result.get() }
        #expect(throws: ConfinedFile.Refusal.self) {
            try ConfinedFile.read(path, within: confinement, maximumBytes: 100).get()
        }
    }

    @Test func theSizeIsCheckedBeforeReading() throws {
        let (directory, confinement) = try tenants()
        let path = try directory.write("site-config/shop.example/big.html", String(repeating: "a", count: 101))
        #expect(throws: ConfinedFile.Refusal.tooLarge(size: 101, cap: 100)) {
            try ConfinedFile.read(path, within: confinement, maximumBytes: 100).get()
        }
    }

    @Test(arguments: [
        "-----BEGIN PRIVATE KEY-----", "-----BEGIN EC PRIVATE KEY-----", "-----BEGIN RSA PRIVATE KEY-----",
        "-----BEGIN ENCRYPTED PRIVATE KEY-----", "-----BEGIN OPENSSH PRIVATE KEY-----",
    ])
    func privateKeyArmourIsRefusedWhateverThePath(armour: String) throws {
        let (directory, confinement) = try tenants()
        let path = try directory.write("site-config/shop.example/pages/key.txt", "<p>hi</p>\n\(armour)\nMIGH\n")
        #expect(throws: ConfinedFile.Refusal.privateKey) {
            try ConfinedFile.read(path, within: confinement, maximumBytes: 1 << 20, refusingPrivateKeys: true).get()
        }
        #expect((try? ConfinedFile.read(path, within: confinement, maximumBytes: 1 << 20).get()) != nil)
    }

    @Test(arguments: ["-----BEGIN CERTIFICATE-----", "-----BEGIN PUBLIC KEY-----", "----- BEGIN", "-----BEGIN "])
    func otherArmourIsServed(text: String) {
        #expect(!PEMArmour.containsPrivateKey(Array("<pre>\(text)\nMIIB\n</pre>".utf8)))
    }

    @Test func aDomainFolderLinkedToAnotherDomainIsRefused() throws {
        let (directory, _) = try tenants()
        #expect(symlink("links.example", directory.path + "/site-config/evil.example") == 0)
        #expect(symlink("/etc", directory.path + "/site-config/etc.example") == 0)
        let folders = try DomainFolder.list(directory.path + "/site-config", excluding: [directory.path + "/certs"])
        let byName = Dictionary(uniqueKeysWithValues: folders.map { ($0.domain, $0) })
        #expect(byName["shop.example"]?.problem == nil)
        #expect(byName["links.example"]?.problem == nil)
        #expect(byName["evil.example"]?.problem?.rule == .pathOutside)
        #expect(byName["etc.example"]?.problem?.message.contains("outside the config folder") == true)
        let loaded = SiteConfigLoader().loadDomain(try #require(byName["evil.example"]))
        #expect(loaded.diagnostics.map(\.rule) == [.pathOutside])
        #expect(loaded.config == nil)
    }
}
