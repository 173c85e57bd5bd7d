/// The URL being matched, with each part prepared once per form a rule asks for (spec §2.5, §2.6).
///
/// A part can be needed raw or percent-decoded, and case-sensitive or folded; each form is computed on first
/// use and cached, so 500 rules against one URL decode and fold it at most once per form.
final class MatchSubject {
    let url: MatchURL
    private var paths = Forms<[UInt32]>()
    private var queries = Forms<[UInt32]>()
    private var fragments = Forms<[UInt32]>()
    private var items = Forms<[QueryItem]>()

    /// The forms of one part, by slot (raw or decoded, as written or folded), held in place: a subject is made for
    /// every URL matched, and four arrays of slots were four allocations each time.
    private struct Forms<Value> {
        private var forms: (Value?, Value?, Value?, Value?)

        init() { forms = (nil, nil, nil, nil) }

        subscript(slot: Int) -> Value? {
            get {
                switch slot {
                case 0: forms.0
                case 1: forms.1
                case 2: forms.2
                default: forms.3
                }
            }
            set {
                switch slot {
                case 0: forms.0 = newValue
                case 1: forms.1 = newValue
                case 2: forms.2 = newValue
                default: forms.3 = newValue
                }
            }
        }
    }

    /// One query item, decoded (spec §1.6, §2.6), and folded when asked for case-insensitively.
    struct QueryItem {
        var name: String
        var value: [UInt32]
        /// `true` for `?flag` (no `=`), which counts as `""` (spec §2.4).
        var valueless: Bool
    }

    init(_ url: MatchURL) {
        self.url = url
    }

    private static func slot(_ percentEncoded: Bool, _ caseSensitive: Bool) -> Int {
        (percentEncoded ? 0 : 2) + (caseSensitive ? 0 : 1)
    }

    private static func prepare(_ text: String, percentEncoded: Bool, caseSensitive: Bool) -> [UInt32] {
        // Apple: percentEncoded false compares against the decoded component (spec §2.6).
        let decoded = percentEncoded ? text : PercentEncoding.decode(text)
        let scalars = decoded.unicodeScalars.map(\.value)
        return caseSensitive ? scalars : CaseFolding.fold(scalars)
    }

    /// The path as a path pattern sees it: end slashes stripped after decoding (spec §2.1).
    func path(percentEncoded: Bool, caseSensitive: Bool) -> [UInt32] {
        let slot = Self.slot(percentEncoded, caseSensitive)
        if let cached = paths[slot] { return cached }
        var value = Self.prepare(url.path, percentEncoded: percentEncoded, caseSensitive: caseSensitive)
        WildcardPatternCompiler.stripSlashes(&value)
        paths[slot] = value
        return value
    }

    /// The whole query; an absent query is `""` (spec §2.3).
    func query(percentEncoded: Bool, caseSensitive: Bool) -> [UInt32] {
        let slot = Self.slot(percentEncoded, caseSensitive)
        if let cached = queries[slot] { return cached }
        let value = Self.prepare(url.query ?? "", percentEncoded: percentEncoded, caseSensitive: caseSensitive)
        queries[slot] = value
        return value
    }

    /// The fragment; an absent fragment is `""` (spec §2.3).
    func fragment(percentEncoded: Bool, caseSensitive: Bool) -> [UInt32] {
        let slot = Self.slot(percentEncoded, caseSensitive)
        if let cached = fragments[slot] { return cached }
        let value = Self.prepare(url.fragment ?? "", percentEncoded: percentEncoded, caseSensitive: caseSensitive)
        fragments[slot] = value
        return value
    }

    /// Query items split like `URLComponents.queryItems`: on `&`, name and value at the first `=`, both
    /// percent-decoded, `+` left as `+` (spec §2.6). Empty pieces (`a&&b`) are skipped; they have no name to
    /// match. Always decoded, whatever `percentEncoded` says (spec §2.6).
    func queryItems(caseSensitive: Bool) -> [QueryItem] {
        let slot = caseSensitive ? 0 : 1
        if let cached = items[slot] { return cached }
        var result: [QueryItem] = []
        for piece in (url.query ?? "").split(separator: "&", omittingEmptySubsequences: true) {
            let name: Substring
            let value: Substring
            if let equals = piece.firstIndex(of: "=") {
                name = piece[..<equals]
                value = piece[piece.index(after: equals)...]
            } else {
                name = piece
                value = ""
            }
            let decodedName = PercentEncoding.decode(String(name))
            let scalars = PercentEncoding.decode(String(value)).unicodeScalars.map(\.value)
            result.append(
                QueryItem(
                    name: caseSensitive ? decodedName : CaseFolding.fold(decodedName),
                    value: caseSensitive ? scalars : CaseFolding.fold(scalars),
                    valueless: !piece.contains("=")))
        }
        items[slot] = result
        return result
    }
}
