/// Rules filed under a literal key, answering "which rules' keys start `text`?" by walking one path of a
/// byte trie instead of comparing with every rule (``UnreachableRule`` asks this once per rule; a 1 MiB
/// site.json holds 10⁴–10⁵ rules).
///
/// Up to ``flatLimit`` keys are kept in a list and compared one by one: a typical file has a handful of rules,
/// and a trie node (a dictionary) for each byte of each key cost more than comparing them, at every load of
/// every domain. The trie is built when the list outgrows that.
///
/// Keys compare as UTF-8 bytes, that is by Unicode scalars, as the matcher and ``GlobInclusion`` do.
struct PrefixIndex {
    private struct Node {
        var children: [UInt8: Int] = [:]
        var rules: [Int] = []
    }

    /// Keys kept in a list before the trie is built.
    static let flatLimit = 32

    private var flat: [(key: String, rule: Int)] = []
    /// Empty until the list outgrows ``flatLimit``.
    private var nodes: [Node] = []

    /// Files `rule` under `key`.
    mutating func insert(_ key: String, rule: Int) {
        guard nodes.isEmpty else { return insertInTrie(key, rule: rule) }
        flat.append((key, rule))
        guard flat.count > Self.flatLimit else { return }
        nodes = [Node()]
        for (key, rule) in flat { insertInTrie(key, rule: rule) }
        flat = []
    }

    /// Whether no rule was filed.
    var isEmpty: Bool { flat.isEmpty && nodes.isEmpty }

    /// Every rule whose key is a prefix of `text` (the empty key included), in no particular order.
    func rules(prefixing text: String) -> [Int] {
        var found: [Int] = []
        collect(prefixing: text, into: &found)
        return found
    }

    /// Appends to `found` every rule whose key is a prefix of `text` (the empty key included), in no particular
    /// order: a caller asking for every rule of a file in turn reuses one list.
    func collect(prefixing text: String, into found: inout [Int]) {
        guard !nodes.isEmpty else {
            for entry in flat where text.utf8.starts(with: entry.key.utf8) { found.append(entry.rule) }
            return
        }
        found += nodes[0].rules
        var node = 0
        for byte in text.utf8 {
            guard let child = nodes[node].children[byte] else { break }
            node = child
            found += nodes[node].rules
        }
    }

    private mutating func insertInTrie(_ key: String, rule: Int) {
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
}
