import Testing

@testable import AASACore

/// The eight-bytes-at-a-time tests of the JSON parser's and writer's string scans agree with their byte-by-byte
/// ones: every byte value at every place among neighbours of every plain value (a borrow from one byte must neither
/// hide nor fake another), and words of random bytes.
@Suite struct ByteWordTests {
    static func disagreements(_ wordTest: (UInt64) -> Bool, _ byteTest: (UInt8) -> Bool) -> Int {
        func word(_ bytes: [UInt8]) -> UInt64 { bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) } }
        var disagreements = 0
        for fill in UInt8.min...UInt8.max where !byteTest(fill) {
            if wordTest(word([UInt8](repeating: fill, count: 8))) { disagreements += 1 }
            for place in 0..<8 {
                for byte in UInt8.min...UInt8.max {
                    var bytes = [UInt8](repeating: fill, count: 8)
                    bytes[place] = byte
                    if wordTest(word(bytes)) != byteTest(byte) { disagreements += 1 }
                }
            }
        }
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<100_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let bytes = withUnsafeBytes(of: state) { Array($0) }
            if wordTest(state) != bytes.contains(where: byteTest) { disagreements += 1 }
        }
        return disagreements
    }

    @Test func theParsersWordTestFindsExactlyTheBytesItsScanLooksAt() {
        #expect(
            Self.disagreements(JSONParser.needsLook) { byte in
                byte == 0x22 || byte == 0x5C || byte < 0x20 || byte >= 0x80
            } == 0)
    }

    @Test func theWritersWordTestFindsExactlyTheBytesItsScanLooksAt() {
        #expect(
            Self.disagreements(JSONWriter.mayNeedEscape) { byte in
                byte == 0x22 || byte == 0x5C || byte < 0x20 || byte == 0x7F || byte >= 0x80
            } == 0)
    }

    /// Strings written eight bytes at a time are escaped wherever the byte to escape falls in a word.
    @Test func stringsOfEveryLengthAreWrittenEscaped() {
        for length in 0..<24 {
            let plain = String(repeating: "a", count: length)
            for (middle, written) in [
                ("", ""), ("\"", "\\\""), ("\\", "\\\\"), ("\n", "\\n"), ("\u{7F}", "\\u007f"), ("é", "é"),
            ] {
                var out: [UInt8] = []
                JSONWriter.writeString(plain + middle + plain, into: &out)
                #expect(String(decoding: out, as: UTF8.self) == "\"" + plain + written + plain + "\"", "\(length)")
            }
        }
    }
}
