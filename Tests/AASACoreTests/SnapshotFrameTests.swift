import Foundation
import Testing

@testable import AASACore

@Suite struct SnapshotFrameTests {
    /// CRC-32 computed a bit at a time, as its definition reads.
    private static func bitwise(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
        }
        return ~crc
    }

    @Test func crc32IsZlibs() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum([UInt8]()) == 0)
        #expect(CRC32.checksum(Array("The quick brown fox jumps over the lazy dog".utf8)) == 0x414F_A339)
        var generator = SystemRandomNumberGenerator()
        for count in [1, 7, 8, 9, 63, 64, 65, 1000, 4099] {
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(CRC32.checksum(bytes) == Self.bitwise(bytes), "\(count) bytes")
            let split = count / 3
            let continued = CRC32.checksum(bytes[split...], continuing: CRC32.checksum(bytes[..<split]))
            #expect(continued == Self.bitwise(bytes), "\(count) bytes in two parts")
        }
    }

    @Test func framesReadBackAndAWriteCutShortEndsThem() {
        let first = SnapshotFrame(put: "shop.example", record: Array("record one".utf8))
        let second = SnapshotFrame(delete: "links.example")
        let third = SnapshotFrame(put: "é.example", record: Array(repeating: 7, count: 300))
        let whole = SnapshotFrame.fileMagic + first.bytes + second.bytes + third.bytes
        let read = SnapshotFrame.frames(in: whole, maximumRecordBytes: 1 << 20)
        #expect(read.frames.map(\.frame) == [first, second, third])
        #expect(read.frames.map(\.offset) == [8, 8 + first.bytes.count, 8 + first.bytes.count + second.bytes.count])
        #expect(read.validEnd == whole.count && read.problem == nil)
        #expect(first.bytes.count == SnapshotFrame.overhead + 12 + 10)

        // Every cut inside the last frame keeps the two before it.
        let lastStart = whole.count - third.bytes.count
        for cut in lastStart..<whole.count {
            let cutShort = SnapshotFrame.frames(in: Array(whole[..<cut]), maximumRecordBytes: 1 << 20)
            #expect(cutShort.frames.map(\.frame) == [first, second], "cut at \(cut)")
            #expect(cutShort.validEnd == lastStart)
            if cut == lastStart {
                #expect(cutShort.problem == nil, "the frames before it are whole")
            } else {
                #expect(cutShort.problem?.contains("cut short") == true, "cut at \(cut): \(cutShort.problem ?? "")")
            }
        }
        // A bit flipped in the last frame's record fails its check.
        var flipped = whole
        flipped[whole.count - 10] ^= 0x10
        let checked = SnapshotFrame.frames(in: flipped, maximumRecordBytes: 1 << 20)
        #expect(checked.frames.count == 2 && checked.problem == "a frame fails its CRC-32")
    }

    @Test func whatIsNotAFrameIsNamed() {
        let frame = SnapshotFrame(put: "shop.example", record: Array(repeating: 1, count: 100)).bytes
        #expect(
            SnapshotFrame.parse(frame[...], maximumRecordBytes: 99)
                == .invalid("a frame's record of 100 bytes is over 99"))
        var kind = frame
        kind[0] = 3
        #expect(SnapshotFrame.parse(kind[...], maximumRecordBytes: 1000) == .invalid("a frame's kind is 3, not 1 or 2"))
        var deletion = frame
        deletion[0] = SnapshotFrame.Kind.delete.rawValue
        #expect(SnapshotFrame.parse(deletion[...], maximumRecordBytes: 1000) == .invalid("a deletion holds a record"))
        #expect(SnapshotFrame.parse(frame[..<5], maximumRecordBytes: 1000) == .incomplete(needed: 7))
        #expect(SnapshotFrame.parse(frame[..<20], maximumRecordBytes: 1000) == .incomplete(needed: frame.count))
        #expect(
            SnapshotFrame.frames(in: Array("AASASNP1".utf8), maximumRecordBytes: 10).problem
                == "not a pack of the store snapshot")
        #expect(!SnapshotFrame.canName("") && !SnapshotFrame.canName(String(repeating: "a", count: 65_536)))
    }

    @Test func aRecordsRawRevisionIsItsHeadUnchecked() throws {
        let record = SnapshotRecord(
            changeID: 42, changedAt: Date(timeIntervalSince1970: 1_767_225_600), entries: [.init(name: "a", bytes: [1])]
        )
        let raw = try SnapshotRecord.rawRevision(head: Array(record.bytes.prefix(SnapshotRecord.headLength)))
        #expect(raw.changeID == 42 && raw.seconds == 1_767_225_600)
        var nan = record.bytes
        for index in 0..<8 {
            nan[16 + index] = UInt8(truncatingIfNeeded: Double.nan.bitPattern >> UInt64(56 - 8 * index))
        }
        let unchecked = try SnapshotRecord.rawRevision(head: nan)
        #expect(unchecked.seconds.isNaN)
        #expect(throws: SnapshotRecord.Failure.self) {
            try SnapshotRecord.revision(changeID: 42, seconds: unchecked.seconds)
        }
        #expect(throws: SnapshotRecord.Failure.notARecord) {
            try SnapshotRecord.rawRevision(head: Array("AASAPAK1".utf8))
        }
    }
}
