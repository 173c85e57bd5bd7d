import AASACore
import AASATestSupport
import Foundation
import Testing

/// The one atomic writer: whole files with their mode, nothing left behind on failure.
@Suite struct AtomicFileTests {
    private func entries(_ folder: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
    }

    @Test func replacesTheFileWithItsModeAndLeavesNoTemporaryFile() throws {
        let directory = TemporaryDirectory()
        let path = try directory.write("key.pem", "old")
        let previous = umask(0o000)
        defer { umask(previous) }
        try AtomicFile.write(Array("new".utf8), to: path, mode: 0o600)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "new")
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(try entries(directory.path) == ["key.pem"])
    }

    @Test func aFailedRenameLeavesTheTargetAndNoTemporaryFile() throws {
        let directory = TemporaryDirectory()
        // A non-empty folder where the file should go: rename(2) refuses to replace it.
        try directory.write("site.json/keep", "x")
        #expect(throws: AtomicFile.Failure.self) {
            try AtomicFile.write(Array("{}".utf8), to: directory.path + "/site.json")
        }
        #expect(try entries(directory.path) == ["site.json"])
        #expect(try entries(directory.path + "/site.json") == ["keep"])
    }

    @Test func aMissingFolderIsAnErrorNamingThePath() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/missing/site.json"
        do {
            try AtomicFile.write([1], to: path)
            Issue.record("wrote into a missing folder")
        } catch {
            #expect(error.step == "create")
            #expect(error.path.hasPrefix(directory.path + "/missing/.site.json.tmp-"))
            #expect(error.description.contains("No such file or directory"))
        }
    }

    @Test func temporaryNamesAreUnpredictable() throws {
        // Each write picks a new random name: planting files under likely names cannot block or redirect it.
        let directory = TemporaryDirectory()
        for index in 0..<20 {
            #expect(symlink("/etc/passwd", directory.path + "/.f.tmp-\(index)") == 0)
        }
        try AtomicFile.write(Array("ok".utf8), to: directory.path + "/f")
        #expect(try String(contentsOfFile: directory.path + "/f", encoding: .utf8) == "ok")
        #expect(try String(contentsOfFile: "/etc/passwd", encoding: .utf8).hasPrefix("root:"))
    }
}
