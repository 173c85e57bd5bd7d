import Testing

@testable import AASAServer

/// The pages the API read are kept once each and read again only when their validator moves, within a bound of
/// bytes and of pages.
@Suite struct SharedPageReadsTests {
    @Test func aPageIsReadOnceUntilItsValidatorMovesAndEveryReadSharesItsBytes() throws {
        let reads = SharedPageReads()
        var validator = "v1"
        var loads = 0
        func read() throws -> PageDocument? {
            try reads.page("shop.example", "a.html", validator: { validator }) {
                loads += 1
                return PageDocument(bytes: Array(repeating: UInt8(loads), count: 1_000), revision: "r\(loads)")
            }
        }
        let first = try #require(try read())
        let second = try #require(try read())
        #expect(loads == 1 && second == first)
        #expect(
            first.bytes.withUnsafeBufferPointer { $0.baseAddress }
                == second.bytes.withUnsafeBufferPointer { $0.baseAddress })
        validator = "v2"
        #expect(try read()?.revision == "r2")
        #expect(loads == 2 && reads.kept == (1_000, 1))
        // Gone: nothing kept, and nothing read.
        #expect(
            try reads.page("shop.example", "a.html", validator: { nil }) {
                Issue.record("read"); return nil
            } == nil)
        #expect(reads.kept == (0, 0))
    }

    @Test func manySmallPagesAndFewLargeOnesStayWithinTheBounds() throws {
        let reads = SharedPageReads()
        for index in 0..<(SharedPageReads.maximumEntries + 500) {
            _ = try reads.page("d\(index % 7).example", "p\(index).html", validator: { "v" }) {
                PageDocument(bytes: [1, 2, 3], revision: "r")
            }
        }
        #expect(reads.kept == (3 * SharedPageReads.maximumEntries, SharedPageReads.maximumEntries))
        let large = SharedPageReads.maximumBytes / 2
        for index in 0..<3 {
            _ = try reads.page("big.example", "p\(index).bin", validator: { "v" }) {
                PageDocument(bytes: [UInt8](repeating: 0, count: large), revision: "r")
            }
        }
        #expect(reads.kept.bytes <= SharedPageReads.maximumBytes)
        // One over the whole bound is served, never kept.
        let huge = try reads.page("big.example", "huge.bin", validator: { "v" }) {
            PageDocument(bytes: [UInt8](repeating: 0, count: SharedPageReads.maximumBytes + 1), revision: "r")
        }
        #expect(huge?.bytes.count == SharedPageReads.maximumBytes + 1)
        #expect(reads.kept.bytes <= SharedPageReads.maximumBytes)
    }
}
