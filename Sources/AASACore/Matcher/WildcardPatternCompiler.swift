/// Turns pattern text into a ``WildcardPattern`` (spec §2.1, §1.8).
struct WildcardPatternCompiler: Sendable {
    /// What a pattern is compared against; decides the slash rules.
    enum Target: Sendable, Hashable {
        /// The URL path: leading and trailing `/` are insignificant and `x/*` also matches `x` (spec §2.1).
        case path
        /// A query string, query item value or fragment: compared exactly.
        case other
    }

    /// A problem with one pattern, before it is tied to a place in the file.
    struct Problem: Sendable, Hashable {
        var severity: PatternDiagnostic.Severity
        var code: PatternDiagnostic.Code
        var variable: String?
        var message: String
    }

    /// The result of compiling one pattern: the pattern unless an error prevented it, its step width (what it
    /// charges to the file's ``PatternLimits/maximumDomainWidth``), and any problems.
    struct Output: Sendable {
        var pattern: WildcardPattern?
        var problems: [Problem]
        var width = 0
        /// Its automaton states (what it charges to ``PatternLimits/maximumDomainStates``).
        var states = 0
    }

    /// The variables in scope; `nil` in legacy mode, where `$(` is literal text (iOS 12 predates variables).
    let variables: SubstitutionTable?

    /// One element of a pattern: a run of `*` is one `.star` (consecutive `*` match what one does, spec §2.1).
    enum Token: Hashable, Sendable {
        case literal(UInt32)
        case one
        case star
        case variable(String)
    }

    /// Compiles `source`. Every limit of ``PatternLimits`` is checked before the automaton is built; a pattern over
    /// one gets an error and no automaton, as does one whose width is over `allowedWidth` (what is left of its
    /// file's ``PatternLimits/maximumDomainWidth``).
    func compile(
        _ source: String, caseSensitive: Bool, percentEncoded: Bool, target: Target,
        allowedWidth: Int = PatternLimits.maximumDomainWidth, allowedStates: Int = PatternLimits.maximumDomainStates
    ) -> Output {
        var problems: [Problem] = []
        func refuse(_ code: PatternDiagnostic.Code, _ message: String) -> Output {
            problems.append(Problem(severity: .error, code: code, variable: nil, message: message))
            return Output(pattern: nil, problems: problems)
        }
        let length = source.unicodeScalars.count
        if length > PatternLimits.maximumLength {
            return refuse(
                .patternTooLong,
                "pattern '\(Self.shortened(source))' has \(length) characters; the limit is \(PatternLimits.maximumLength): match the varying part with a wildcard such as '*' instead of spelling it out"
            )
        }
        var scalars = source.unicodeScalars.map(\.value)
        if target == .path {
            // Apple: slashes at both ends of a path are not significant (spec §2.1, observed with swcutil).
            Self.stripSlashes(&scalars)
        }
        if percentEncoded && scalars.contains(where: { $0 >= 0x80 }) {
            // Apple: with percentEncoded true the URL is compared in its percent-encoded ASCII form (spec §2.6).
            problems.append(
                Problem(
                    severity: .warning, code: .nonASCIIPatternWhileEncoded, variable: nil,
                    message:
                        "pattern '\(source)' contains non-ASCII characters but percentEncoded is true, so it never matches; percent-encode them (UTF-8) or set \"percentEncoded\": false"
                ))
        }
        var tokens: [Token] = []
        tokens.reserveCapacity(scalars.count)
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == 0x2A {
                // Spec §2.1: `*` matches any run, so a run of them matches what one does.
                if tokens.last != .star { tokens.append(.star) }
            } else if scalar == 0x3F {
                tokens.append(.one)
            } else if scalar == 0x24, variables != nil, index + 1 < scalars.count, scalars[index + 1] == 0x28 {
                // Apple: `$(` always starts a substitution variable; there is no escape (spec §2.1).
                guard let close = scalars[(index + 2)...].firstIndex(of: 0x29) else {
                    problems.append(
                        Problem(
                            severity: .error, code: .unterminatedVariable, variable: nil,
                            message: "pattern '\(source)' has '$(' without a closing ')'"))
                    return Output(pattern: nil, problems: problems)
                }
                let name = String(
                    String.UnicodeScalarView(scalars[(index + 2)..<close].compactMap(Unicode.Scalar.init)))
                tokens.append(.variable(name))
                index = close + 1
                continue
            } else {
                tokens.append(.literal(caseSensitive ? scalar : CaseFolding.fold(scalar)))
            }
            index += 1
        }

        var alternatives: [String: VariableAlternation] = [:]
        var uses = 0
        for case .variable(let name) in tokens {
            uses += 1
            guard alternatives[name] == nil else { continue }
            if name.isEmpty {
                problems.append(
                    Problem(
                        severity: .error, code: .emptyVariableName, variable: name,
                        message: "pattern '\(source)' contains '$()', which names no variable"))
            } else if variables?.invalidNames.contains(name) == true {
                problems.append(
                    Problem(
                        severity: .error, code: .invalidVariableUsed, variable: name,
                        message: "pattern '\(source)' uses $(\(name)), whose definition is invalid"))
            } else if let alternation = variables?.alternation(name, caseSensitive: caseSensitive) {
                alternatives[name] = alternation
            } else {
                problems.append(
                    Problem(
                        severity: .error, code: .unknownVariable, variable: name,
                        message:
                            "pattern '\(source)' uses $(\(name)), which is neither defined in substitutionVariables nor built in (alpha, upper, lower, alnum, digit, xdigit, region, lang)"
                    ))
            }
        }
        if problems.contains(where: { $0.severity == .error }) {
            return Output(pattern: nil, problems: problems)
        }
        let shown = Self.shortened(source)
        if uses > PatternLimits.maximumVariableUses {
            return refuse(
                .patternTooComplex,
                "pattern '\(shown)' uses variables \(uses) times; the limit is \(PatternLimits.maximumVariableUses): split it into several rules"
            )
        }
        let wildcards = tokens.reduce(0) { total, token in
            switch token {
            case .literal: total
            case .one, .star: total + 1
            case .variable(let name): total + (alternatives[name]?.wildcards ?? 0)
            }
        }
        if wildcards > PatternLimits.maximumWildcards {
            return refuse(
                .patternTooComplex,
                "pattern '\(shown)' has \(wildcards) wildcards (counting those in the values of the variables it uses); the limit is \(PatternLimits.maximumWildcards): one '*' matches any run, so fewer usually say the same"
            )
        }
        let (states, width) = Self.cost(of: tokens, alternatives: alternatives)
        if width > PatternLimits.maximumWidth {
            return refuse(
                .patternTooComplex,
                "pattern '\(shown)' has a step width of \(width) automaton states; the limit is \(PatternLimits.maximumWidth): shorten the parts after its first wildcard, or use fewer or smaller variables"
            )
        }
        if states > PatternLimits.maximumStates {
            return refuse(
                .patternTooComplex,
                "pattern '\(shown)' compiles to \(states) automaton states; the limit is \(PatternLimits.maximumStates): use fewer or smaller variables"
            )
        }
        if width > allowedWidth || states > allowedStates {
            let (what, limit) =
                width > allowedWidth
                ? ("step width \(width)", "a total width of \(PatternLimits.maximumDomainWidth)")
                : ("\(states) states", "a total of \(PatternLimits.maximumDomainStates)")
            return refuse(
                .rulesTooComplex,
                "pattern '\(shown)' (\(what)) takes the file's patterns over \(limit) automaton states, which bounds what one URL costs to match: merge rules, or end patterns with '*' after a literal start (such patterns cost nothing)"
            )
        }
        return Output(
            pattern: Self.build(source: source, tokens: tokens, alternatives: alternatives, target: target),
            problems: problems, width: width, states: states)
    }

    /// The pattern as messages show it: at most 64 characters.
    private static func shortened(_ source: String) -> String {
        source.unicodeScalars.count <= 64
            ? source : String(String.UnicodeScalarView(source.unicodeScalars.prefix(61))) + "..."
    }

    /// Whether `tokens` compare directly (``WildcardPattern/Shape``): literals, then at most a `*`.
    private static func isDirect(_ tokens: [Token]) -> Bool {
        let literals = tokens.prefix { if case .literal = $0 { true } else { false } }.count
        return literals >= tokens.count - 1 && (literals == tokens.count || tokens.last == .star)
    }

    /// What `tokens` cost once compiled, counted before anything is built; both 0 when they compare directly.
    ///
    /// - `states`: the automaton states they compile to (``PatternLimits/maximumStates``): 1 per literal or `?`, 2
    ///   per `*` (a fork and a loop), what each variable's values add.
    /// - `width`: the most states one URL character can visit (``PatternLimits/maximumWidth``): every state is
    ///   visited at most once per character, a `*` counts its fork, its loop and the state after it, and a variable
    ///   what ``VariableAlternation/width`` says.
    ///
    /// Both count the accept state and the fork that lets `x/*` match `x` (spec §2.1).
    static func cost(of tokens: [Token], alternatives: [String: VariableAlternation]) -> (states: Int, width: Int) {
        if isDirect(tokens) { return (0, 0) }
        var states = 2
        var width = 2
        for token in tokens {
            switch token {
            case .literal, .one:
                states += 1
                width += 1
            case .star:
                states += 2
                width += 3
            case .variable(let name):
                states += alternatives[name]?.states ?? 0
                width += alternatives[name]?.width ?? 0
            }
        }
        return (states, width)
    }

    /// Drops leading and trailing `/` (spec §2.1); the same is done to the URL path.
    static func stripSlashes(_ scalars: inout [UInt32]) {
        let slash: UInt32 = 0x2F
        guard let first = scalars.firstIndex(where: { $0 != slash }) else {
            scalars.removeAll()
            return
        }
        let last = scalars.lastIndex(where: { $0 != slash })!
        if first != 0 || last != scalars.count - 1 {
            scalars = Array(scalars[first...last])
        }
    }

    private static func build(
        source: String, tokens: [Token], alternatives: [String: VariableAlternation], target: Target
    ) -> WildcardPattern {
        // Apple: a path pattern ending in `/*` also matches its bare prefix (spec §2.1): `buy/*` matches
        // `buy`. We read "ends in `/*`" as a `/` followed only by `*`s, so `buy/**` behaves the same. The bare
        // prefix is a path pattern too, so its end slashes do not count either: `buy//*` also matches `buy`
        // (the spec is silent on slashes doubled before the `*`; this is the reading consistent with §2.1).
        // `optionalSlashAt` is the first of the slashes the bare prefix leaves out.
        var optionalSlashAt: Int?
        if target == .path, let lastNonStar = tokens.lastIndex(where: { $0 != .star }), lastNonStar < tokens.count - 1,
            tokens[lastNonStar] == .literal(0x2F)
        {
            var first = lastNonStar
            while first > 0, tokens[first - 1] == .literal(0x2F) { first -= 1 }
            optionalSlashAt = first
        }

        if isDirect(tokens) {
            var literals: [UInt32] = []
            literals.reserveCapacity(tokens.count)
            for case .literal(let value) in tokens { literals.append(value) }
            let shape: WildcardPattern.Shape =
                literals.count == tokens.count
                ? .exact(literals) : .prefix(literals, bare: optionalSlashAt.map { Array(literals[..<$0]) })
            return WildcardPattern(
                source: source, shape: shape, kinds: [], operands: [], nexts: [], forkTargets: [], classes: [],
                start: 0, requiredPrefix: [])
        }

        var program = ProgramBuilder(capacity: 2 * tokens.count + 2)
        let accept = program.append(.accept, 0, 0)
        var next = accept
        var index = tokens.count - 1
        if let slash = optionalSlashAt {
            for token in tokens[slash...].reversed() {
                next = program.emit(token: token, next: next, alternatives: alternatives)
            }
            next = program.fork([next, accept])
            index = slash - 1
        }
        while index >= 0 {
            next = program.emit(token: tokens[index], next: next, alternatives: alternatives)
            index -= 1
        }
        return WildcardPattern(
            source: source, shape: .automaton, kinds: program.kinds, operands: program.operands, nexts: program.nexts,
            forkTargets: program.forkTargets, classes: program.classes, start: next,
            requiredPrefix: tokens.prefix { if case .literal = $0 { true } else { false } }.map { token in
                if case .literal(let value) = token { return value }
                return 0
            })
    }

    /// Accumulates NFA instructions; every instruction points forward to an already-built continuation.
    private struct ProgramBuilder {
        var kinds: [WildcardPattern.Kind] = []
        var operands: [UInt32] = []
        var nexts: [Int32] = []
        var forkTargets: [Int32] = []
        var classes: [ScalarSet] = []

        /// Room for `capacity` instructions: a token takes one or two.
        init(capacity: Int) {
            kinds.reserveCapacity(capacity)
            operands.reserveCapacity(capacity)
            nexts.reserveCapacity(capacity)
        }

        mutating func append(_ kind: WildcardPattern.Kind, _ operand: UInt32, _ next: Int32) -> Int32 {
            kinds.append(kind)
            operands.append(operand)
            nexts.append(next)
            return Int32(kinds.count - 1)
        }

        mutating func fork(_ targets: [Int32]) -> Int32 {
            let first = UInt32(forkTargets.count)
            forkTargets.append(contentsOf: targets)
            return append(.fork, first, Int32(targets.count))
        }

        /// `*` is a fork into "consume one character and come back" or "go on".
        mutating func star(next: Int32) -> Int32 {
            let loopIndex = Int32(kinds.count)
            // The fork is appended first so the `any` can point back at it.
            let first = UInt32(forkTargets.count)
            forkTargets.append(contentsOf: [loopIndex + 1, next])
            _ = append(.fork, first, 2)
            _ = append(.any, 0, loopIndex)
            return loopIndex
        }

        mutating func emit(token: Token, next: Int32, alternatives: [String: VariableAlternation]) -> Int32 {
            switch token {
            case .literal(let value): return append(.scalar, value, next)
            case .one: return append(.any, 0, next)
            case .star: return star(next: next)
            case .variable(let name):
                guard let alternation = alternatives[name] else { return fork([]) }
                return self.alternation(alternation, next: next)
            }
        }

        /// `$(name)`: one of the values. Values sharing a prefix share states (a trie), so `$(lang)` costs a
        /// few dozen live states per character rather than hundreds. Variables whose values are all single
        /// literal characters (`$(digit)`, …) become one character-set state.
        mutating func alternation(_ alternation: VariableAlternation, next: Int32) -> Int32 {
            switch alternation.form {
            case .scalarSet(let set):
                classes.append(set)
                return append(.scalarSet, UInt32(classes.count - 1), next)
            case .trie(let trie):
                return emit(trie: trie, node: 0, next: next)
            }
        }

        private mutating func emit(trie: VariableAlternation.Trie, node: Int, next: Int32) -> Int32 {
            var targets: [Int32] = []
            for (token, child) in trie.nodes[node].children {
                let childEntry = emit(trie: trie, node: child, next: next)
                targets.append(emit(token: token, next: childEntry, alternatives: [:]))
            }
            if trie.nodes[node].terminal { targets.append(next) }
            return targets.count == 1 ? targets[0] : fork(targets)
        }
    }
}
