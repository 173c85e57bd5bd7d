/// Finds which of a fixed list of tokens occur in a text, in one pass over it: each byte is compared only with the
/// tokens that start with it, so a `User-Agent` is read once however many tokens the visitor table has.
struct TokenScanner: Sendable {
    /// A token to find.
    struct Token: Sendable {
        /// Its bytes; lowercase ASCII when ``ignoringCase``.
        let bytes: [UInt8]
        /// Whether ASCII case is ignored.
        let ignoringCase: Bool
    }

    /// Which tokens were found: bit `i` for token `i`.
    typealias Found = UInt64

    private let tokens: [Token]
    /// The tokens that may start at a byte, by that byte.
    private let starting: [[Int]]

    /// A scanner for `tokens` (at most 64, none empty).
    init(_ tokens: [Token]) {
        precondition(tokens.count <= Found.bitWidth && tokens.allSatisfy { !$0.bytes.isEmpty })
        self.tokens = tokens
        var starting = [[Int]](repeating: [], count: 256)
        for (index, token) in tokens.enumerated() {
            let first = token.bytes[0]
            starting[Int(first)].append(index)
            if token.ignoringCase, first >= 0x61, first <= 0x7A { starting[Int(first - 0x20)].append(index) }
        }
        self.starting = starting
    }

    /// The tokens found in `text`.
    func scan(_ text: UnsafeRawBufferPointer) -> Found {
        var found: Found = 0
        for start in 0..<text.count {
            for index in starting[Int(text[start])] where found & (1 << index) == 0 {
                if matches(tokens[index], text, at: start) { found |= 1 << index }
            }
        }
        return found
    }

    /// The bits of the tokens at `indices`.
    static func mask(_ indices: Range<Int>) -> Found {
        indices.reduce(0) { $0 | (1 << $1) }
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
