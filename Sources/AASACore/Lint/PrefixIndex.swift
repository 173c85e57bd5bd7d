/// Rules filed under a literal key, answering "which rules' keys start `text`?" by walking one path of a
/// byte trie instead of comparing with every rule (``UnreachableRule`` asks this once per rule; a 1 MiB
/// site.json holds 10⁴–10⁵ rules).
///
/// Keys compare as UTF-8 bytes, that is by Unicode scalars, as the matcher and ``GlobInclusion`` do.
struct PrefixIndex {
    private struct Node {
        var children: [UInt8: Int] = [:]
        var rules: [Int] = []
    }

    private var nodes = [Node()]

    /// Files `rule` under `key`.
    mutating func insert(_ key: String, rule: Int) {
        var node = 0
        for byte in key.utf8 {
            if let child = nodes[node].children[byte] {
                node = child
            } else {
                nodes.append(Node())
                nodes[node].children[byte] = nodes.count - 1
                node = nodes.count - 1
            }
        }
        nodes[node].rules.append(rule)
    }

    /// Every rule whose key is a prefix of `text` (the empty key included), in no particular order.
    func rules(prefixing text: String) -> [Int] {
        var found = nodes[0].rules
        var node = 0
        for byte in text.utf8 {
            guard let child = nodes[node].children[byte] else { break }
            node = child
            found += nodes[node].rules
        }
        return found
    }
}
