/// A JSON key path such as `universalLinks.apps[0].rules[2].path`, for diagnostics.
///
/// Readers make a path for every key they read, and almost none ever names a finding: a path is its last step and a
/// reference to its parent's, so a step below costs one small allocation, never a copy of the steps above it.
public struct KeyPath: Sendable, Hashable, CustomStringConvertible {
    /// One step of a path.
    public enum Component: Sendable, Hashable {
        case key(String)
        case index(Int)
    }

    /// The last step and the path above it; `nil` at the root.
    private final class Step: Sendable {
        let parent: Step?
        let component: Component
        let depth: Int

        init(parent: Step?, component: Component) {
            self.parent = parent
            self.component = component
            depth = (parent?.depth ?? 0) + 1
        }
    }

    private let last: Step?

    /// The root.
    public static let root = KeyPath(last: nil)

    private init(last: Step?) {
        self.last = last
    }

    /// The path made of `components`, from the root.
    init(_ components: [Component]) {
        var last: Step?
        for component in components { last = Step(parent: last, component: component) }
        self.last = last
    }

    /// The steps from the root.
    public var components: [Component] {
        var components = [Component]()
        components.reserveCapacity(last?.depth ?? 0)
        var step = last
        while let current = step {
            components.append(current.component)
            step = current.parent
        }
        components.reverse()
        return components
    }

    /// The path of member `key` below this one.
    public func key(_ key: String) -> KeyPath {
        KeyPath(last: Step(parent: last, component: .key(key)))
    }

    /// The path of element `index` below this one.
    public func index(_ index: Int) -> KeyPath {
        KeyPath(last: Step(parent: last, component: .index(index)))
    }

    public static func == (left: KeyPath, right: KeyPath) -> Bool {
        var (a, b) = (left.last, right.last)
        guard a?.depth == b?.depth else { return false }
        while let x = a, let y = b {
            if x === y { return true }
            guard x.component == y.component else { return false }
            (a, b) = (x.parent, y.parent)
        }
        return true
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(components)
    }

    /// The rendered path; empty at the root. Each key is shown as an excerpt (``LogEscaping/excerpt(_:limit:)``): a
    /// path is at most as deep as the parser allows, so however long a tenant's keys, a finding's path is a few
    /// kilobytes at most, and one made for each of thousands of findings below one long key costs each its own.
    public var description: String {
        var text = ""
        for component in components {
            switch component {
            case .key(let key):
                let shown = LogEscaping.excerpt(key)
                let simple = !shown.isEmpty && shown.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "$" }
                let part = simple ? shown : "\"\(shown)\""
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

extension KeyPath {
    // The parents of the paths that rules and generators name for every entry of every domain, made once: a path
    // below them costs its own steps only.

    /// `applinks.details`, in an association file.
    static let applinksDetails = root.key("applinks").key("details")
    /// `universalLinks.apps`, in a site.json.
    static let universalLinksApps = root.key("universalLinks").key("apps")
    /// `android.apps`, in a site.json.
    static let androidApps = root.key("android").key("apps")
    /// `tests`, in a site.json.
    static let tests = root.key("tests")
    /// The app lists of an association file other than `applinks`, in the order its lint reports them.
    static let serviceAppLists = ["webcredentials", "appclips", "activitycontinuation", "authsrv"].map {
        root.key($0).key("apps")
    }
}
