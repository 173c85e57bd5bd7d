/// Typed, position-aware access to a parsed document that collects every finding instead of stopping
/// at the first (decoding is separate from validation, but both report file, line, key).
public final class JSONReader {
    /// The document's source, for positions.
    public let source: SourceText
    /// Everything found so far, in the order found.
    public private(set) var diagnostics: [Diagnostic] = []

    /// Creates a reader over `source`.
    public init(source: SourceText) {
        self.source = source
    }

    /// Records a finding at `offset`.
    public func report(
        _ severity: Diagnostic.Severity, rule: Rule, _ message: String, at offset: Int, path: KeyPath,
        hint: String? = nil
    ) {
        diagnostics.append(
            source.diagnostic(severity, rule: rule, message, at: offset, keyPath: path.description, hint: hint))
    }

    /// Records an already-built finding.
    public func report(_ diagnostic: Diagnostic) {
        diagnostics.append(diagnostic)
    }

    private func wrongType(_ node: JSONNode, expected: String, path: KeyPath, hint: String? = nil) {
        report(
            .error, rule: .wrongType, "expected \(expected), found \(node.value.typeName)", at: node.offset,
            path: path, hint: hint)
    }

    /// The members of an object, after reporting unknown keys; `nil` (reported) if not an object. Of a repeated
    /// key (which ``JSONParser`` reports), the first is kept.
    ///
    /// `known` lists every accepted key; an unknown key gets a "did you mean" from this list.
    /// `misplaced` maps keys that belong at another level to the hint saying where.
    ///
    /// `path`, like every reading's here, is made only for a finding: a document read without one makes no key path
    /// (each step of one is an allocation, and a site.json reads dozens of values at every load).
    public func object(
        _ node: JSONNode, path: @autoclosure () -> KeyPath, known: [String], what: String = "object",
        misplaced: [String: String] = [:]
    ) -> JSONObject? {
        guard case .object(let members) = node.value else {
            wrongType(node, expected: what, path: path())
            return nil
        }
        // Nearly every object holds only known keys: it is read as parsed, without a copy of its members.
        guard let firstUnknown = members.firstIndex(where: { !known.containsKey($0.key) }) else {
            return JSONObject(members)
        }
        var result = JSONObject()
        result.members.reserveCapacity(members.count)
        result.members.append(contentsOf: members[..<firstUnknown])
        // Only unknown keys are remembered apart, to report each once, under the object's path made once.
        let objectPath = path()
        var unknown: Set<JSONKey> = []
        for member in members[firstUnknown...] {
            // The parser has already reported the repeat (`duplicate-key`); the first one is read.
            guard known.containsKey(member.key) else {
                guard unknown.insert(JSONKey(text: member.key)).inserted else { continue }
                let memberPath = objectPath.key(member.key)
                var hint = "remove it"
                if let elsewhere = misplaced[member.key] {
                    hint = elsewhere
                } else if let suggestion = Self.suggestion(for: member.key, among: known) {
                    hint = "did you mean \"\(suggestion)\"?"
                } else {
                    hint += "; known keys here: " + known.filter { !$0.hasPrefix("$") }.joined(separator: ", ")
                }
                report(
                    .error, rule: .unknownKey, "unknown key \"\(member.key)\"", at: member.keyOffset,
                    path: memberPath, hint: hint)
                continue
            }
            result.members.append(member)
        }
        return result
    }

    /// A setting written `true`/`false` or as an object of `known` keys (`"hsts"`, `"signing"`): the flag, or the
    /// object's members after reporting unknown keys; `nil` (reported, with `hint`) for any other type.
    public func flagOrObject(_ node: JSONNode, path: @autoclosure () -> KeyPath, known: [String], hint: String)
        -> FlagOrObject?
    {
        switch node.value {
        case .bool(let flag): return .flag(flag)
        case .object: return object(node, path: path(), known: known).map(FlagOrObject.object)
        default:
            wrongType(node, expected: "true, false or an object", path: path(), hint: hint)
            return nil
        }
    }

    /// What ``flagOrObject(_:path:known:hint:)`` found.
    public enum FlagOrObject {
        case flag(Bool)
        case object(JSONObject)
    }

    /// A string value, or `nil` (reported) if it is another type.
    public func string(_ node: JSONNode, path: @autoclosure () -> KeyPath) -> String? {
        guard case .string(let text) = node.value else {
            wrongType(node, expected: "a string", path: path())
            return nil
        }
        return text
    }

    /// A boolean value, or `nil` (reported) if it is another type.
    public func bool(_ node: JSONNode, path: @autoclosure () -> KeyPath) -> Bool? {
        guard case .bool(let flag) = node.value else {
            let hint: String? =
                if case .string(let text) = node.value, text == "true" || text == "false" {
                    "write \(text) without quotes"
                } else { nil }
            wrongType(node, expected: "true or false", path: path(), hint: hint)
            return nil
        }
        return flag
    }

    /// The elements of an array, or `nil` (reported) if it is another type.
    public func array(_ node: JSONNode, path: @autoclosure () -> KeyPath) -> [JSONNode]? {
        guard case .array(let elements) = node.value else {
            let hint: String? = if case .string = node.value { "wrap the value in [ ]" } else { nil }
            wrongType(node, expected: "an array", path: path(), hint: hint)
            return nil
        }
        return elements
    }

    /// An array of strings; elements of other types are reported and skipped.
    public func strings(_ node: JSONNode, path: @autoclosure () -> KeyPath) -> [String]? {
        guard let elements = array(node, path: path()) else { return nil }
        return elements.enumerated().compactMap { index, element in string(element, path: path().index(index)) }
    }

    /// The closest known key to an unknown one: same letters in another case, or within two edits.
    public static func suggestion(for key: String, among known: [String]) -> String? {
        if let sameCase = known.first(where: { $0.lowercased() == key.lowercased() }) { return sameCase }
        let scored = known.map { ($0, editDistance($0.lowercased(), key.lowercased())) }
        guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= max(1, min(2, key.count / 3)) else { return nil }
        return best.0
    }

    /// Levenshtein distance between two short strings.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = previous
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}

extension Rule {
    /// Reported by `JSONReader`.
    public static let unknownKey = Rule(
        "unknown-key", .error, "A key aasa-server does not know at that level (typo, Apple's key name, or wrong level)."
    )

    /// Reported by `JSONReader`; also by `AssociationFile`, `ComponentPattern`, `BannerConfig`, `HSTSConfig`,
    /// `SigningConfig`, `SiteConfig`, `AssetLinksImporter`.
    public static let wrongType = Rule(
        "wrong-type", .error, "E.g. a number where a string is expected, `\"true\"` instead of `true`.")
}
