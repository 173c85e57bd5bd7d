import AASAOpenSSL
import AASATestSupport
import Foundation
import Testing

@testable import AASAServer

/// `--store-key-file`: 64 hex characters in a file only the server's user can read, judged before it is read.
@Suite struct StoreKeyFileTests {
    static let hex = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
    static let bytes: [UInt8] = (0..<32).map { UInt8(($0 % 16) * 0x11) }

    /// A key file's content and mode, and the refusal it must give (`nil`: accepted).
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var content: [UInt8]
        var mode: Int = 0o600
        var expected: StoreKeyFile.Failure.Code?
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "64 hex digits and a newline, 0600", content: Array((hex + "\n").utf8), expected: nil),
        Case(name: "no newline, 0400", content: Array(hex.utf8), mode: 0o400, expected: nil),
        Case(name: "CR LF", content: Array((hex + "\r\n").utf8), expected: nil),
        Case(name: "upper case", content: Array((hex.uppercased() + "\n").utf8), expected: nil),
        Case(name: "63 digits", content: Array((String(hex.dropLast()) + "\n").utf8), expected: .malformed),
        Case(name: "65 digits", content: Array((hex + "0\n").utf8), expected: .malformed),
        Case(name: "two newlines", content: Array((hex + "\n\n").utf8), expected: .malformed),
        Case(name: "a leading space", content: Array((" " + hex).utf8), expected: .malformed),
        Case(name: "a non-hex digit", content: Array(("g" + hex.dropFirst() + "\n").utf8), expected: .malformed),
        Case(name: "32 raw bytes", content: bytes, expected: .malformed),
        Case(name: "empty", content: [], expected: .malformed),
        Case(name: "67 bytes", content: Array((hex + "\n\n\n").utf8), expected: .tooLarge),
        Case(name: "readable by others (0644)", content: Array(hex.utf8), mode: 0o644, expected: .exposed),
        Case(name: "writable by others (0602)", content: Array(hex.utf8), mode: 0o602, expected: .exposed),
        Case(name: "world-everything (0666)", content: Array(hex.utf8), mode: 0o666, expected: .exposed),
    ]

    @Test(arguments: cases)
    func aKeyFileIsAcceptedOnlyAsExactly64HexDigitsOnlyItsOwnerCanRead(example: Case) throws {
        let directory = TemporaryDirectory("aasa-store-key")
        let path = directory.path + "/store.key"
        try Data(example.content).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: example.mode], ofItemAtPath: path)
        let key: StoreKey
        do {
            key = try StoreKeyFile.load(path)
        } catch {
            #expect(error.code == example.expected, "\(error)")
            #expect(error.description.hasPrefix(path + ": error: the store key file "))
            #expect(error.description.contains("; fix: "))
            #expect(!error.description.contains(Self.hex) && !error.description.contains(Self.hex.uppercased()))
            return
        }
        #expect(example.expected == nil, "accepted")
        let reference = try StoreKey(key: Self.bytes, file: "reference")
        #expect(key.keyID == reference.keyID)
        #expect(key.file == path)
        let context = Array("a.example/privkey.pem".utf8)
        #expect(try reference.open(key.seal([1, 2, 3], context: context), context: context) == [1, 2, 3])
    }

    @Test func anExposedFileIsNamedWithItsModeAndTheChmodThatFixesIt() throws {
        let directory = TemporaryDirectory("aasa-store-key")
        let path = try directory.write("store.key", Self.hex)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        let error = #expect(throws: StoreKeyFile.Failure.self) { try StoreKeyFile.load(path) }
        #expect(
            error?.description
                == "\(path): error: the store key file has mode 0644: readable by others, so other users on this "
                + "machine can open every private key in the store; it is refused; fix: chmod 600 \(path) "
                + "(Kubernetes: Secret defaultMode 0440 with the pod's fsGroup)")
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        #expect(try StoreKeyFile.load(path).keyID.count == 8)
    }

    @Test func aMissingFileSaysHowToGenerateOne() {
        let directory = TemporaryDirectory("aasa-store-key")
        let path = directory.path + "/absent.key"
        let error = #expect(throws: StoreKeyFile.Failure.self) { try StoreKeyFile.load(path) }
        #expect(error?.code == .missing)
        #expect(
            error?.description
                == "\(path): error: the store key file does not exist (or is a broken symlink); fix: generate a key "
                + "with: openssl rand -hex 32 > \(path) && chmod 600 \(path)")
    }

    @Test func theGenerationCommandInTheMessageMakesAFileThatLoads() throws {
        let directory = TemporaryDirectory("aasa-store-key")
        let path = directory.path + "/store.key"
        let made = try Command.run("sh", ["-c", "openssl rand -hex 32 > \(path) && chmod 600 \(path)"])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(try StoreKeyFile.load(path).file == path)
    }

    @Test(arguments: ["folder", "fifo", "/dev/zero"])
    func anythingButARegularFileIsRefusedUnread(kind: String) throws {
        let directory = TemporaryDirectory("aasa-store-key")
        var path = directory.path + "/store.key"
        switch kind {
        case "folder": try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        case "fifo": #expect(mkfifo(path, 0o600) == 0)
        default: path = kind
        }
        let error = #expect(throws: StoreKeyFile.Failure.self) { try StoreKeyFile.load(path) }
        #expect(error?.code == .notRegular)
        #expect(error?.description.hasPrefix(path + ": error: the store key file is ") == true)
    }

    /// A 4 GiB file (sparse) is refused from its size at once: nothing of it is read.
    @Test func aHugeFileIsRefusedFromItsSizeWithoutReadingIt() throws {
        let directory = TemporaryDirectory("aasa-store-key")
        let path = directory.path + "/store.key"
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        #expect(truncate(path, 4 << 30) == 0)
        let clock = ContinuousClock()
        var failure: StoreKeyFile.Failure?
        let elapsed = clock.measure {
            failure = #expect(throws: StoreKeyFile.Failure.self) { try StoreKeyFile.load(path) }
        }
        print("a 4 GiB key file refused after \(elapsed)")
        #expect(failure?.code == .tooLarge)
        #expect(failure?.description.contains("is 4294967296 bytes") == true)
        #expect(
            elapsed < .seconds(1), "reading 4 GiB of zeros takes seconds; a refusal from the size takes microseconds")
    }

    /// Kubernetes mounts a Secret as `store.key -> ..data/store.key`: the link is followed and the file judged.
    @Test func aSymlinkIsFollowedAndTheFileItLeadsToJudged() throws {
        let directory = TemporaryDirectory("aasa-store-key")
        let target = try directory.write("..data/store.key", Self.hex + "\n")
        let link = directory.path + "/store.key"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "..data/store.key")
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: target)
        let exposed = #expect(throws: StoreKeyFile.Failure.self) { try StoreKeyFile.load(link) }
        #expect(exposed?.code == .exposed)
        try FileManager.default.setAttributes([.posixPermissions: 0o440], ofItemAtPath: target)
        #expect(try StoreKeyFile.load(link).file == link)
        try FileManager.default.removeItem(atPath: target)
        let broken = #expect(throws: StoreKeyFile.Failure.self) { try StoreKeyFile.load(link) }
        #expect(broken?.code == .missing)
    }
}
