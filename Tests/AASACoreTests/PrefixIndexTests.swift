import Testing

@testable import AASACore

/// The unreachable-rule check's prefix index answers as comparing every key would, as a list of a few keys and as a
/// trie once it holds more than ``PrefixIndex/flatLimit``.
@Suite struct PrefixIndexTests {
    @Test func answersAsComparingEveryKeyWould() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = ["a", "b", "/", "é", ""]
        func word() -> String {
            (0..<Int.random(in: 0...4, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }
                .joined()
        }
        var index = PrefixIndex()
        var keys: [String] = []
        for rule in 0..<(PrefixIndex.flatLimit * 3) {
            let key = word()
            index.insert(key, rule: rule)
            keys.append(key)
            for _ in 0..<20 {
                let text = word() + word()
                let expected = keys.indices.filter { text.utf8.starts(with: keys[$0].utf8) }
                #expect(index.rules(prefixing: text).sorted() == expected, "\(keys) \(text)")
            }
        }
    }
}
