/// One entry of `dynamic_app_link_components` (spec §7.1): `/`, `?` (a dictionary), `#` and `exclude`, all
/// optional; a rule without any of them matches every URL.
public struct DynamicRule: Sendable {
    /// The path pattern.
    public var path: String?
    /// Query item name → value pattern; every entry must find an item, other items are ignored.
    public var query: [(name: String, pattern: String)]?
    /// The fragment pattern.
    public var fragment: String?
    /// Whether a match keeps the URL on the web.
    public var exclude: Bool
    /// The rule as written (compact JSON), for messages.
    public var text: String

    /// Creates a rule.
    public init(
        path: String? = nil, query: [(name: String, pattern: String)]? = nil, fragment: String? = nil,
        exclude: Bool = false, text: String
    ) {
        self.path = path
        self.query = query
        self.fragment = fragment
        self.exclude = exclude
        self.text = text
    }

    /// The keys Android knows in a rule.
    static let keys: Set<String> = ["/", "?", "#", "exclude"]

    /// Reads one rule, or says why Android would discard the whole block because of it.
    static func read(_ value: JSONValue, index: Int) -> Result<DynamicRule, DynamicRules.Discarded> {
        let text = JSONWriter(style: .compact).string(value)
        let place = "dynamic_app_link_components[\(index)]"
        guard case .object(let members) = value else {
            return .failure(.init(reason: "\(place) is \(value.typeName), not an object", keyPath: place))
        }
        var rule = DynamicRule(text: text)
        for member in members {
            let key = "\(place).\(member.key)"
            switch (member.key, member.value.value) {
            case ("/", .string(let pattern)): rule.path = pattern
            case ("#", .string(let pattern)): rule.fragment = pattern
            case ("exclude", .bool(let flag)): rule.exclude = flag
            case ("?", .object(let items)):
                var query: [(name: String, pattern: String)] = []
                for item in items {
                    guard case .string(let pattern) = item.value.value else {
                        return .failure(
                            .init(
                                reason: "\(key).\(item.key) is \(item.value.value.typeName), not a string pattern",
                                keyPath: key + "." + item.key))
                    }
                    query.append((item.key, pattern))
                }
                rule.query = query
            case ("?", .string):
                return .failure(
                    .init(
                        reason: "\(key) is a string; Android takes only a dictionary of query item patterns there",
                        keyPath: key))
            case (let name, let other) where keys.contains(name):
                return .failure(
                    .init(
                        reason:
                            "\(key) is \(other.typeName), not a \(name == "exclude" ? "boolean" : name == "?" ? "dictionary" : "string")",
                        keyPath: key))
            default:
                return .failure(
                    .init(reason: "\(key) is not a key Android knows (only /, ?, # and exclude)", keyPath: key))
            }
        }
        return .success(rule)
    }
}
