import Testing

@testable import AASAServer

/// The watcher's descriptor map behaves as a dictionary of descriptors, and lets go of pages it no longer needs.
@Suite struct DescriptorMapTests {
    @Test func agreesWithADictionaryOverRandomSteps() {
        var map = DescriptorMap<Int>()
        var reference: [Int32: Int] = [:]
        var generator = SystemRandomNumberGenerator()
        // Descriptors as inotify hands them out (counting up, some retired), and a few far away or negative.
        var next: Int32 = 1
        for step in 0..<20_000 {
            let descriptor: Int32
            switch Int.random(in: 0..<10, using: &generator) {
            case 0..<4:
                descriptor = next
                next += 1
            case 4..<8: descriptor = Int32.random(in: max(1, next - 3000)...next, using: &generator)
            case 8: descriptor = Int32.random(in: -2048...(-1), using: &generator)
            default: descriptor = Int32.random(in: 1_000_000...1_010_000, using: &generator)
            }
            if Bool.random(using: &generator) {
                map[descriptor] = step
                reference[descriptor] = step
            } else {
                #expect(map.removeValue(forKey: descriptor) == reference.removeValue(forKey: descriptor))
            }
            #expect(map[descriptor] == reference[descriptor])
        }
        #expect(map.count == reference.count)
        for (descriptor, value) in reference { #expect(map[descriptor] == value) }
        for descriptor in Int32(-3000)...next where reference[descriptor] == nil { #expect(map[descriptor] == nil) }
    }

    @Test func emptiesWhenEveryValueIsRemoved() {
        var map = DescriptorMap<String>()
        for descriptor in Int32(1)...5000 { map[descriptor] = "\(descriptor)" }
        #expect(map.count == 5000)
        map[17] = "again"
        #expect(map.count == 5000 && map[17] == "again")
        for descriptor in Int32(1)...5000 { map[descriptor] = nil }
        map[1] = nil
        #expect(map.count == 0 && map[1] == nil && map.pageCount == 0)
    }
}
