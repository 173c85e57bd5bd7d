extension ComponentPattern {
    /// The key names of a component's three URL parts: Apple's (`/`, `?`, `#`) in the association file,
    /// or the plain words (`path`, `query`, `fragment`) that site.json uses for the same thing.
    public struct Spelling: Sendable {
        let path: String
        let query: String
        let fragment: String
        /// Every key a component may have in this spelling.
        let keys: [String]

        init(path: String, query: String, fragment: String) {
            self.path = path
            self.query = query
            self.fragment = fragment
            keys = [path, query, fragment, "exclude", "comment", "caseSensitive", "percentEncoded"]
        }

        /// Apple's keys (spec §1.5).
        public static let apple = Spelling(path: "/", query: "?", fragment: "#")
        /// site.json's keys.
        public static let site = Spelling(path: "path", query: "query", fragment: "fragment")
    }

    /// Reads one component (or Apple `defaults` dictionary) spelled with `spelling`, reporting problems.
    static func read(_ node: JSONNode, path: @autoclosure () -> KeyPath, reader: JSONReader, spelling: Spelling)
        -> ComponentPattern?
    {
        guard let object = reader.object(node, path: path(), known: spelling.keys) else { return nil }
        var component = ComponentPattern()
        func string(_ key: String) -> String? { object[key].flatMap { reader.string($0.value, path: path().key(key)) } }
        func bool(_ key: String) -> Bool? { object[key].flatMap { reader.bool($0.value, path: path().key(key)) } }
        component.path = string(spelling.path)
        component.fragment = string(spelling.fragment)
        component.comment = string("comment")
        component.exclude = bool("exclude")
        component.caseSensitive = bool("caseSensitive")
        component.percentEncoded = bool("percentEncoded")
        if let member = object[spelling.query] {
            func queryPath() -> KeyPath { path().key(spelling.query) }
            switch member.value.value {
            case .string(let pattern): component.query = .whole(pattern)
            case .object(let items):
                component.query = .items(
                    items.compactMap { item in
                        reader.string(item.value, path: queryPath().key(item.key)).map {
                            QueryItemPattern(name: item.key, pattern: $0)
                        }
                    })
            default:
                reader.report(
                    .error, rule: .wrongType,
                    "expected a string (whole query) or an object (item name → pattern), found \(member.value.value.typeName)",
                    at: member.value.offset, path: queryPath())
            }
        }
        return component
    }

    /// The component as JSON in `spelling`, keys in a fixed order.
    public func jsonValue(spelling: Spelling) -> JSONValue {
        var tree = JSONTreeOutput()
        write(to: &tree, spelling: spelling)
        return tree.value
    }

    /// Writes the component as JSON in `spelling` (``jsonValue(spelling:)``).
    public func write(to output: inout some JSONOutput, spelling: Spelling) {
        output.beginObject()
        output.member(spelling.path, path)
        switch query {
        case .whole(let pattern):
            output.member(spelling.query, pattern)
        case .items(let items):
            output.key(spelling.query)
            output.beginObject()
            for item in items { output.member(item.name, item.pattern) }
            output.endObject()
        case nil: break
        }
        output.member(spelling.fragment, fragment)
        output.member("exclude", exclude)
        output.member("caseSensitive", caseSensitive)
        output.member("percentEncoded", percentEncoded)
        output.member("comment", comment)
        output.endObject()
    }
}
