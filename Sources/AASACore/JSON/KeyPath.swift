/// A JSON key path such as `universalLinks.apps[0].rules[2].path`, for diagnostics.
public struct KeyPath: Sendable, Hashable, CustomStringConvertible {
    /// One step of a path.
    public enum Component: Sendable, Hashable {
        case key(String)
        case index(Int)
    }

    /// The steps from the root.
    public private(set) var components: [Component]

    /// The root.
    public static let root = KeyPath([])

    /// The path made of `components`, from the root.
    init(_ components: [Component]) {
        self.components = components
    }

    /// The path of member `key` below this one.
    public func key(_ key: String) -> KeyPath {
        KeyPath(components + [.key(key)])
    }

    /// The path of element `index` below this one.
    public func index(_ index: Int) -> KeyPath {
        KeyPath(components + [.index(index)])
    }

    /// The rendered path; empty at the root.
    public var description: String {
        var text = ""
        for component in components {
            switch component {
            case .key(let key):
                let simple = !key.isEmpty && key.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "$" }
                let part = simple ? key : "\"\(key)\""
                text += text.isEmpty ? part : "." + part
            case .index(let index):
                text += "[\(index)]"
            }
        }
        return text
    }
}

extension JSONNode {
    /// Byte offset of the value at `path`, or of its deepest existing ancestor (so a diagnostic about
    /// a missing key still points at the object that lacks it).
    public func offset(of path: KeyPath) -> Int {
        var node = self
        for component in path.components {
            switch (component, node.value) {
            case (.key(let key), .object(let members)):
                guard let member = members.first(where: { $0.key == key }) else { return node.offset }
                node = member.value
            case (.index(let index), .array(let elements)) where elements.indices.contains(index):
                node = elements[index]
            default:
                return node.offset
            }
        }
        return node.offset
    }
}
