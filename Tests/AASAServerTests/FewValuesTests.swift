import Testing

@testable import AASAServer

/// The watcher's one-or-more sets behave as sets: one value, more, and back to one or none.
@Suite struct FewValuesTests {
    @Test func insertsAndRemovesAsASet() throws {
        var values = FewValues(3)
        values.insert(3)
        #expect(Array(values) == [3])
        values.insert(5)
        values.insert(7)
        #expect(Set(values) == [3, 5, 7])
        let fewer = try #require(values.removing(5))
        #expect(Set(fewer) == [3, 7])
        let one = try #require(fewer.removing(3))
        #expect(Array(one) == [7])
        #expect(one.removing(7) == nil)
        #expect(one.removing(8).map(Array.init) == [7], "removing what it does not hold keeps it")
    }
}
