import AASACore
import Testing

/// SipHash as the reference implementation computes it, and the stamps made with it.
@Suite struct SipHashTests {
    /// The reference key, bytes 00…0f.
    private let key: (UInt64, UInt64) = (0x0706_0504_0302_0100, 0x0f0e_0d0c_0b0a_0908)

    /// SipHash-2-4 of bytes 00…(n-1) under the reference key: the first entries of the reference `vectors.h`, and
    /// the paper's worked example (fifteen bytes, appendix A).
    @Test(
        arguments: [(0, 0x726f_db47_dd0e_0e31), (1, 0x74f8_39c5_93dc_67fd), (15, 0xa129_ca61_49be_45e5)]
            as [(
                Int, UInt64
            )])
    func theReferenceVectors(length: Int, expected: UInt64) {
        let message = (0..<length).map { UInt8($0) }
        let hash = message.withUnsafeBytes {
            SipHash(key: key, compressionRounds: 2, finalizationRounds: 4).hash($0)
        }
        #expect(hash == expected)
    }

    @Test func everyLengthAndEveryByteCounts() {
        var seen: Set<UInt64> = []
        let sip = SipHash(key: key)
        for length in 0...40 {
            let message = [UInt8](repeating: 0, count: length)
            #expect(seen.insert(message.withUnsafeBytes { sip.hash($0) }).inserted, "\(length) zero bytes")
        }
        let base = (0..<40).map { UInt8($0) }
        for index in base.indices {
            var changed = base
            changed[index] ^= 1
            #expect(seen.insert(changed.withUnsafeBytes { sip.hash($0) }).inserted, "byte \(index) flipped")
        }
    }

    @Test func stampsTellFilesApart() {
        let file = Array("{\"legacyFormat\": false}\n".utf8)
        #expect(ContentStamp(file) == ContentStamp(file))
        #expect(ContentStamp(file) != ContentStamp(file + [0x20]))
        #expect(ContentStamp(file) != ContentStamp(Array(file.reversed())))
        #expect(ContentStamp([]).length == 0)
    }
}
