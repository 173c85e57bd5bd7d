/// What one comparison of two versions of a domain (``DomainDiff``) may build and do, and what it has used so far.
///
/// Everything the comparison makes that grows with its input is charged here before it is made: each automaton
/// state, edge and ε-closure entry (``PartAutomaton``, Apple and Android, and their encoded forms), each edge list
/// and bit set of the product of automata, each state of the product walked with its witness text, each branch of
/// the split of the URL space, each combination of query item values, each class of URLs found with its examples;
/// and the elementary steps between them. Once a limit would be passed the charge throws, the comparison stops at
/// once, and its result says so ("not compared: too complex"): it never grows past the budget.
///
/// `aasa-server diff`, `aasa-server cdn` and the reload's comparison all use ``Limits/standard``.
public struct ComparisonBudget: Sendable {
    /// The most a comparison may use of each resource.
    public struct Limits: Sendable, Hashable {
        /// Automaton states, states of their product walked, branches of the split of the URL space, classes of
        /// URLs found.
        public var states: Int
        /// Automaton edges, ε-closure entries, and the edges of their product (each target its closure reaches).
        public var edges: Int
        /// The memory of all of the above held at once, estimated from their layouts (array headers counted): what
        /// one walk of a product builds is given back when the walk ends, but what it found.
        public var bytes: Int
        /// Elementary steps: a product state read over one symbol, an ε-edge followed, an example URL matched.
        public var steps: Int

        /// Limits of each resource.
        public init(states: Int, edges: Int, bytes: Int, steps: Int) {
            self.states = states
            self.edges = edges
            self.bytes = bytes
            self.steps = steps
        }

        /// The one bound of `diff`, `cdn` and the reload: a few seconds (release) and a few tens of megabytes at
        /// most. Real files stay well below: each corpus file against itself and its import uses under a tenth of
        /// every limit (ComparisonBudgetTests), and the costliest real edit seen (057.json without its first rule)
        /// a fifth of the steps and a twentieth of the bytes.
        public static let standard = Limits(states: 250_000, edges: 2_000_000, bytes: 24 << 20, steps: 100_000_000)
    }

    /// A resource of ``Limits``.
    public enum Resource: String, Sendable, Hashable {
        case states, edges, bytes, steps
    }

    /// Why a comparison stopped: the resource whose limit it reached.
    public struct Exhausted: Error, Sendable, Hashable, CustomStringConvertible {
        public var resource: Resource
        public var limit: Int

        /// `the limit of 2000000 edges`.
        public var description: String { "the limit of \(limit) \(resource.rawValue)" }
    }

    public let limits: Limits
    /// What has been charged so far.
    public private(set) var states = 0
    public private(set) var edges = 0
    public private(set) var bytes = 0
    public private(set) var steps = 0
    /// The limit reached, once one is: every later charge throws it too.
    public private(set) var exhausted: Exhausted?

    /// A budget with nothing used yet.
    public init(_ limits: Limits = .standard) {
        self.limits = limits
    }

    /// Charges what is about to be built or done; throws, charging nothing, when that would pass a limit.
    mutating func charge(states: Int = 0, edges: Int = 0, bytes: Int = 0, steps: Int = 0) throws(Exhausted) {
        if let exhausted { throw exhausted }
        if states > limits.states - self.states { try stop(.states, limits.states) }
        if edges > limits.edges - self.edges { try stop(.edges, limits.edges) }
        if bytes > limits.bytes - self.bytes { try stop(.bytes, limits.bytes) }
        if steps > limits.steps - self.steps { try stop(.steps, limits.steps) }
        self.states += states
        self.edges += edges
        self.bytes += bytes
        self.steps += steps
    }

    private mutating func stop(_ resource: Resource, _ limit: Int) throws(Exhausted) -> Never {
        let reached = Exhausted(resource: resource, limit: limit)
        exhausted = reached
        throw reached
    }

    /// Gives back `bytes` charged for what has been freed.
    mutating func release(bytes: Int) {
        self.bytes -= min(max(bytes, 0), self.bytes)
    }

    /// The bytes of an array of `count` elements of `Element`: its elements and its header.
    static func bytes<Element>(_ count: Int, of _: Element.Type) -> Int {
        arrayHeader + count * MemoryLayout<Element>.stride
    }

    /// What a heap-allocated array or set costs beyond its elements (header and allocator rounding).
    static let arrayHeader = 48
}
