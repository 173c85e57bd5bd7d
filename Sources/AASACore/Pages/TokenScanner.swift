/// Finds which groups of tokens occur in a text, in one pass over it: each byte is compared only with the tokens that
/// start with it, so a `User-Agent` is read once however many tokens the visitor table has.
struct TokenScanner: Sendable {
    /// A token to find.
    struct Token: Sendable {
        /// Its bytes; lowercase ASCII when ``ignoringCase``.
        let bytes: [UInt8]
        /// Whether ASCII case is ignored.
        let ignoringCase: Bool

        /// `text`'s bytes, found as written.
        init(_ text: String, ignoringCase: Bool = false) {
            bytes = Array(text.utf8)
            self.ignoringCase = ignoringCase
        }
    }

    /// Which groups were found: bit `i` for group `i`.
    typealias Found = UInt64

    /// Every token, with the group it belongs to.
    private let tokens: [(token: Token, group: Int)]
    /// The tokens that may start at a byte, by that byte.
    private let starting: [[Int]]

    /// A scanner for `groups` (at most 64), each a list of tokens any one of which finds the group.
    init(groups: [[Token]]) {
        precondition(groups.count <= Found.bitWidth && groups.joined().allSatisfy { !$0.bytes.isEmpty })
        tokens = groups.enumerated().flatMap { group, tokens in tokens.map { ($0, group) } }
        var starting = [[Int]](repeating: [], count: 256)
        for (index, entry) in tokens.enumerated() {
            let first = entry.token.bytes[0]
            starting[Int(first)].append(index)
            if entry.token.ignoringCase, first >= 0x61, first <= 0x7A { starting[Int(first - 0x20)].append(index) }
        }
        self.starting = starting
    }

    /// The groups found in `text`.
    func scan(_ text: UnsafeRawBufferPointer) -> Found {
        var found: Found = 0
        for start in 0..<text.count {
            for index in starting[Int(text[start])] {
                let (token, group) = tokens[index]
                if found & (1 << group) == 0 && matches(token, text, at: start) { found |= 1 << group }
            }
        }
        return found
    }

    private func matches(_ token: Token, _ text: UnsafeRawBufferPointer, at start: Int) -> Bool {
        guard start + token.bytes.count <= text.count else { return false }
        for (offset, byte) in token.bytes.enumerated() {
            var candidate = text[start + offset]
            if token.ignoringCase && candidate >= 0x41 && candidate <= 0x5A { candidate |= 0x20 }
            if candidate != byte { return false }
        }
        return true
    }
}
