import AASACore
import AASATestSupport
import Foundation
import Logging
import Synchronization
import Testing

@testable import AASAServer

/// The packs of the store snapshot (`--store-cache`) on real files: rows read back by another pack on the same file,
/// rewritten below a tenth of dead frames, every cut of a write cut short, reads held across a rewrite, and the
/// snapshot of one file per row packed at the start.
@Suite struct SnapshotPackTests {
    private static func record(_ change: Int64, _ text: String, padding: Int = 0) -> [UInt8] {
        SnapshotRecord(
            changeID: change, changedAt: Date(timeIntervalSince1970: 1_767_225_600 + Double(change)),
            entries: [.init(name: "site.json", bytes: Array(text.utf8) + Array(repeating: 32, count: padding))]
        ).bytes
    }

    /// The rows of the pack at `path` as a new pack reads them, with the bytes cut off.
    private static func read(_ path: String) throws -> (rows: [String: [UInt8]], cutShort: Int64?) {
        let pack = SnapshotPack(path: path, maximumRecordBytes: 1 << 20)
        let (file, opened) = try pack.reader()
        var rows: [String: [UInt8]] = [:]
        for (name, slot) in opened.slots {
            let bytes = file.read(at: slot.offset + Int64(slot.recordOffset), count: slot.recordLength)
            let read = try #require(bytes, "\(name) reads")
            rows[name] = read
        }
        return (rows, opened.cutShort?.bytes)
    }

    private static func size(_ path: String) -> Int64 {
        ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? NSNumber)?.int64Value ?? -1
    }

    @Test func rowsWrittenAreReadBackByAnotherPackOnTheFile() throws {
        let folder = TemporaryDirectory("aasa-pack")
        let path = folder.path + "/domains.pack"
        let pack = SnapshotPack(path: path, maximumRecordBytes: 1 << 20)
        try pack.write(
            [
                ("a.example", Self.record(1, "a")), ("b.example", Self.record(2, "b")),
                ("c.example", Self.record(3, "c")),
            ],
            keeping: nil)
        try pack.write([("b.example", nil), ("never.example", nil), ("a.example", Self.record(4, "a2"))], keeping: nil)
        let read = try Self.read(path)
        #expect(read.rows == ["a.example": Self.record(4, "a2"), "c.example": Self.record(3, "c")])
        #expect(read.cutShort == nil)
        let slot = try #require(
            try SnapshotPack(path: path, maximumRecordBytes: 1 << 20).reader().opened.slots["a.example"])
        #expect(slot.changeID == 4 && slot.seconds == 1_767_225_604 && slot.isRecord)
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600, "its rows hold sealed keys: for the server's user alone")

        // A full listing deletes every row it does not keep.
        try pack.write([("d.example", Self.record(5, "d"))], keeping: ["c.example", "d.example"])
        #expect(try Self.read(path).rows.keys.sorted() == ["c.example", "d.example"])
    }

    @Test func rowsWrittenAgainAreRewrittenBelowATenthOfDeadFrames() throws {
        let folder = TemporaryDirectory("aasa-pack-compact")
        let path = folder.path + "/domains.pack"
        let pack = SnapshotPack(path: path, maximumRecordBytes: 1 << 20)
        let names = (0..<50).map { "tenant-\($0).example" }
        var latest: [String: [UInt8]] = [:]
        for round in 0..<20 {
            // Each round writes a third of the rows again, a row at a time.
            for name in names.enumerated().filter({ $0.offset % 3 == round % 3 }).map(\.element) {
                let record = Self.record(Int64(round), "\(name) \(round)", padding: 1000)
                latest[name] = record
                try pack.write([(name, record)], keeping: nil)
                let (file, live) = pack.size
                #expect(file == Self.size(path), "the pack knows its size")
                #expect(Double(file) <= 8 + 1.1 * Double(live), "round \(round): \(file) bytes for \(live) live")
            }
        }
        let frames = latest.reduce(0) { $0 + SnapshotFrame.overhead + $1.key.utf8.count + $1.value.count }
        #expect(pack.size.live == Int64(frames))
        #expect(try Self.read(path).rows == latest, "every row's last record")
        #expect(!FileManager.default.fileExists(atPath: SnapshotPack.temporaryPath(of: path)))
    }

    @Test func aWriteCutShortKeepsTheRowsBeforeItAndIsCutOffBeforeTheNext() throws {
        let folder = TemporaryDirectory("aasa-pack-cut")
        let path = folder.path + "/domains.pack"
        let pack = SnapshotPack(path: path, maximumRecordBytes: 1 << 20)
        // Enough rows that one written again is not yet a rewrite.
        let others = (0..<20).map { ("t\($0).example", Self.record(0, "t")) }
        try pack.write(
            others + [("a.example", Self.record(1, "a1")), ("b.example", Self.record(2, "b1"))], keeping: nil)
        let kept = Dictionary(uniqueKeysWithValues: others.map { ($0.0, $0.1) })
        let before = try #require(FileManager.default.contents(atPath: path))
        try pack.write([("a.example", Self.record(3, "a2"))], keeping: nil)
        let after = try #require(FileManager.default.contents(atPath: path))
        #expect(after.count > before.count && after.prefix(before.count) == before)

        for cut in before.count..<after.count {
            let copy = folder.path + "/cut-\(cut).pack"
            try after.prefix(cut).write(to: URL(fileURLWithPath: copy))
            let read = try Self.read(copy)
            #expect(read.rows["a.example"] == Self.record(1, "a1"), "cut at \(cut): the row as it was")
            #expect(read.rows["b.example"] == Self.record(2, "b1"))
            #expect(read.cutShort == (cut == before.count ? nil : Int64(cut - before.count)))
            #expect(Self.size(copy) == Int64(before.count), "cut off at its last whole frame")
            // The next write goes after the rows it kept.
            try SnapshotPack(path: copy, maximumRecordBytes: 1 << 20).write(
                [("b.example", Self.record(4, "b2"))], keeping: nil)
            #expect(
                try Self.read(copy).rows
                    == kept.merging(["a.example": Self.record(1, "a1"), "b.example": Self.record(4, "b2")]) { $1 })
        }

        // Bytes that are no frame at all: the same.
        var garbage = after
        garbage.append(contentsOf: Array("not a frame".utf8))
        let copy = folder.path + "/garbage.pack"
        try garbage.write(to: URL(fileURLWithPath: copy))
        let read = try Self.read(copy)
        #expect(read.rows["a.example"] == Self.record(3, "a2") && read.cutShort == 11)

        // A file that is not a pack is written anew.
        let other = folder.path + "/other.pack"
        try Data("{\"json\": true}".utf8).write(to: URL(fileURLWithPath: other))
        let anew = try Self.read(other)
        #expect(anew.rows.isEmpty && anew.cutShort == 14)
        #expect(FileManager.default.contents(atPath: other) == Data(SnapshotFrame.fileMagic))
    }

    /// A record over the pack's bound would stop every reader at its frame (every row after it lost): it is written
    /// as its row's deletion, and the rows around it read back.
    @Test func aRecordOverTheBoundDeletesItsRowAndTheRowsAfterItStay() throws {
        let folder = TemporaryDirectory("aasa-pack-bound-record")
        let path = folder.path + "/domains.pack"
        let bound = 200
        let pack = SnapshotPack(path: path, maximumRecordBytes: bound)
        let small = Self.record(1, "b")
        try pack.write([("b.example", small)], keeping: nil)
        let over = Self.record(2, "over", padding: bound)
        #expect(over.count > bound)
        try pack.write(
            [("a.example", Self.record(3, "a")), ("b.example", over), ("c.example", Self.record(4, "c"))],
            keeping: nil)
        let read = SnapshotPack(path: path, maximumRecordBytes: bound)
        let opened = try read.reader().opened
        #expect(opened.cutShort == nil, "\(String(describing: opened.cutShort))")
        #expect(opened.slots.keys.sorted() == ["a.example", "c.example"], "the row over the bound is deleted")
    }

    @Test func readsHeldAcrossARewriteKeepReadingWhatTheyRead() throws {
        let folder = TemporaryDirectory("aasa-pack-held")
        let path = folder.path + "/domains.pack"
        let pack = SnapshotPack(path: path, maximumRecordBytes: 1 << 20)
        try pack.write((0..<10).map { ("t\($0).example", Self.record(1, "first \($0)", padding: 500)) }, keeping: nil)
        let (file, opened) = try pack.reader()
        for round in 2..<6 {
            try pack.write((0..<10).map { ("t\($0).example", Self.record(Int64(round), "again \($0)")) }, keeping: nil)
        }
        #expect(pack.size.file < Int64(10 * 500), "rewritten: the first, longer frames are gone")
        for (name, slot) in opened.slots {
            let bytes = file.read(at: slot.offset + Int64(slot.recordOffset), count: slot.recordLength)
            let index = name.dropFirst().prefix { $0 != "." }
            #expect(bytes == Self.record(1, "first \(index)", padding: 500), "\(name)")
        }
    }

    @Test func aSnapshotOfOneFilePerRowIsPackedAtTheStart() throws {
        let folder = TemporaryDirectory("aasa-pack-folders")
        let cache = folder.path + "/cache"
        for sub in ["", "/domains", "/certificates"] { #expect(mkdir(cache + sub, 0o700) == 0) }
        let site = Array(#"{"webCredentials": ["ABCDE12345.com.example.app"]}"#.utf8)
        let domain = SnapshotRecord(
            changeID: 7, changedAt: Date(timeIntervalSince1970: 1_767_225_600),
            entries: [.init(name: "site.json", bytes: site), .init(name: "pages/index.html", bytes: Array("<p>".utf8))])
        try Data(domain.bytes).write(to: URL(fileURLWithPath: cache + "/domains/shop.example"))
        try Data("not a record".utf8).write(to: URL(fileURLWithPath: cache + "/domains/junk.example"))
        let certificate = SnapshotRecord(
            changeID: 8, changedAt: Date(timeIntervalSince1970: 1_767_225_601),
            entries: [.init(name: "fullchain.pem", bytes: Array("chain".utf8))])
        try Data(certificate.bytes).write(to: URL(fileURLWithPath: cache + "/certificates/shop.example"))
        try Data("half".utf8).write(to: URL(fileURLWithPath: cache + "/.domains.pack.new"))

        let snapshot = try StoreSnapshot(folder: cache, logger: Logger(label: "test"))
        for gone in ["/domains", "/certificates", "/.domains.pack.new"] {
            #expect(!FileManager.default.fileExists(atPath: cache + gone), "\(gone)")
        }
        let domains = snapshot.domainReferences(names: nil)
        #expect(domains.keys.sorted() == ["shop.example"])
        let reference = try #require(domains["shop.example"])
        #expect(reference.changeID == 7 && reference.changedAt == Date(timeIntervalSince1970: 1_767_225_600))
        guard case .content(let stored) = reference.take("shop.example") else {
            Issue.record("the packed row does not read")
            return
        }
        #expect(
            stored == StoredDomain(name: "shop.example", siteJSON: site, files: ["pages/index.html": Array("<p>".utf8)])
        )
        let certificates = snapshot.certificateReferences(names: ["shop.example", "missing.example"])
        #expect(certificates.keys.sorted() == ["shop.example"])
        guard case .content(let chain) = certificates["shop.example"]?.take("shop.example") else {
            Issue.record("the packed certificate does not read")
            return
        }
        #expect(chain.files[.chain] == Array("chain".utf8))
    }

    /// A load that reads faster than the disk writes waits once ``StoreSnapshot/maximumPendingBytes`` are queued: with
    /// no writer yet, the rows past the bound wait; the writer started, every row is written.
    @Test func rowsQueuedForTheWriterAreBounded() throws {
        let folder = TemporaryDirectory("aasa-pack-bound")
        let snapshot = try StoreSnapshot(folder: folder.path + "/cache", logger: Logger(label: "test"))
        let rowBytes = 1 << 20
        let count = StoreSnapshot.maximumPendingBytes / rowBytes + 8
        let queued = Atomic<Int>(0)
        let producer = Thread {
            for index in 0..<count {
                let domain = StoredDomain(
                    name: "t\(index).example", siteJSON: Array(repeating: UInt8(ascii: " "), count: rowBytes))
                snapshot.record(domains: [
                    domain.name: DomainRow(changeID: Int64(index + 1), changedAt: Date(), content: .success(domain))
                ])
                queued.add(1, ordering: .relaxed)
            }
        }
        producer.start()
        Wait.until("the rows up to the bound queued", seconds: 10) {
            queued.load(ordering: .relaxed) >= StoreSnapshot.maximumPendingBytes / rowBytes ? nil : "not yet"
        }
        usleep(300_000)
        #expect(queued.load(ordering: .relaxed) == StoreSnapshot.maximumPendingBytes / rowBytes, "the next one waits")
        snapshot.start()
        Wait.until("every row queued", seconds: 30) { queued.load(ordering: .relaxed) == count ? nil : "waiting" }
        snapshot.stop()
        let rows = try SnapshotPack(path: folder.path + "/cache/domains.pack", maximumRecordBytes: 1 << 26).reader()
        #expect(rows.opened.slots.count == count)
    }
}
