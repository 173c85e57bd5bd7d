/// What Android 15+ takes from an assetlinks.json for one package (spec §7.1): the `dynamic_app_link_components`
/// of the package's `handle_all_urls` statement, or why it has none to apply.
public struct DynamicRules: Sendable {
    /// The relation whose statement carries the rules.
    public static let relation = "delegate_permission/common.handle_all_urls"

    /// Why Android discards the whole block and lets the app's intent filters decide.
    public struct Discarded: Error, Sendable, Hashable {
        /// What is wrong, naming the key.
        public var reason: String
        /// Where in the file, e.g. `[0].relation_extensions.….dynamic_app_link_components[2].?`.
        public var keyPath: String
    }

    /// What the file holds for the package.
    public enum Block: Sendable {
        /// The package has no `handle_all_urls` statement: Android does not verify it for this host.
        case notDelegated
        /// The statement has no dynamic rules: the app's intent filters decide.
        case absent
        /// A block Android discards (malformed or empty): the intent filters decide.
        case discarded(Discarded)
        /// The rules, in order.
        case rules([DynamicRule])
    }

    /// The package.
    public var package: String
    /// Its block.
    public var block: Block
    /// Remarks: a second block for the package (Android does not say which one it uses).
    public var notes: [String]

    /// Every `android_app` package the file names in a `handle_all_urls` statement, in file order.
    public static func packages(in root: JSONValue) -> [String] {
        var packages: [String] = []
        for statement in (root.arrayValue ?? []) where statement.delegates {
            if let package = statement.package, !packages.contains(package) { packages.append(package) }
        }
        return packages
    }

    /// The rules `root` (an assetlinks.json document) gives `package`.
    public init(package: String, in root: JSONValue) {
        self.package = package
        notes = []
        let statements = (root.arrayValue ?? []).enumerated().filter {
            $0.element.delegates && $0.element.package == package
        }
        guard !statements.isEmpty else {
            block = .notDelegated
            return
        }
        let blocks = statements.compactMap { index, statement in
            statement[member: "relation_extensions"]?[member: Self.relation]?[member: "dynamic_app_link_components"].map
            {
                (index, $0)
            }
        }
        guard let (statement, first) = blocks.first else {
            block = .absent
            return
        }
        if blocks.count > 1 {
            notes.append(
                "\(package) has \(blocks.count) dynamic_app_link_components blocks; which one Android uses is not guaranteed (evaluated: the first)"
            )
        }
        block = Self.read(first)
        if case .discarded(var discarded) = block {
            discarded.keyPath = "[\(statement)].relation_extensions.\(Self.relation).\(discarded.keyPath)"
            block = .discarded(discarded)
        }
    }

    /// Reads a `dynamic_app_link_components` value.
    static func read(_ value: JSONValue) -> Block {
        guard case .array(let elements) = value else {
            return .discarded(
                Discarded(
                    reason: "dynamic_app_link_components is \(value.typeName), not an array",
                    keyPath: "dynamic_app_link_components"))
        }
        guard !elements.isEmpty else {
            return .discarded(
                Discarded(reason: "dynamic_app_link_components is empty", keyPath: "dynamic_app_link_components"))
        }
        var rules: [DynamicRule] = []
        for (index, element) in elements.enumerated() {
            switch DynamicRule.read(element.value, index: index) {
            case .success(let rule): rules.append(rule)
            case .failure(let discarded): return .discarded(discarded)
            }
        }
        return .rules(rules)
    }
}

extension JSONValue {
    /// Whether this statement delegates `handle_all_urls`.
    fileprivate var delegates: Bool {
        guard case .array(let relations)? = self[member: "relation"] else { return false }
        return relations.contains { $0.value == .string(DynamicRules.relation) }
    }

    /// The `package_name` of an `android_app` target.
    fileprivate var package: String? {
        guard let target = self[member: "target"], target[member: "namespace"] == .string("android_app"),
            case .string(let name)? = target[member: "package_name"]
        else { return nil }
        return name
    }
}
