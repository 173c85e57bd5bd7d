/// A problem found while compiling a file's patterns (spec §1.8): the `check` command reports these.
///
/// Errors mean a pattern cannot be compiled; that rule then never matches (our decision: Apple does not say
/// what a client does with such a rule, and "never matches" cannot open URLs the author did not intend).
public struct PatternDiagnostic: Sendable, Hashable, CustomStringConvertible {
    /// How serious the problem is.
    public enum Severity: String, Sendable, Hashable {
        /// The pattern cannot be compiled; its rule never matches.
        case error
        /// The pattern works but probably not as intended.
        case warning
    }

    /// A stable identifier for the kind of problem.
    public enum Code: String, Sendable, Hashable {
        /// `$(name)` names no substitution variable and no built-in.
        case unknownVariable = "unknown-variable"
        /// `$(` without a closing `)`.
        case unterminatedVariable = "unterminated-variable"
        /// `$()`.
        case emptyVariableName = "empty-variable-name"
        /// A variable name containing `$`, `(` or `)`, or empty (spec §1.8).
        case invalidVariableName = "invalid-variable-name"
        /// A variable value containing `$(` (spec §1.8: values may not use other variables).
        case variableValueContainsVariable = "variable-value-contains-variable"
        /// A pattern uses a variable whose definition is invalid.
        case invalidVariableUsed = "invalid-variable-used"
        /// A user variable has the name of a built-in and replaces it.
        case variableShadowsBuiltIn = "variable-shadows-built-in"
        /// A variable name is defined twice.
        case duplicateVariable = "duplicate-variable"
        /// A non-ASCII pattern under `percentEncoded: true` can never match (spec §2.6).
        case nonASCIIPatternWhileEncoded = "non-ascii-pattern-while-percent-encoded"
        /// A pattern over ``PatternLimits/maximumLength`` characters.
        case patternTooLong = "pattern-too-long"
        /// A pattern over ``PatternLimits/maximumWildcards``, ``PatternLimits/maximumVariableUses``,
        /// ``PatternLimits/maximumWidth`` or ``PatternLimits/maximumStates``.
        case patternTooComplex = "pattern-too-complex"
        /// A variable over ``PatternLimits/maximumVariableValues`` values or ``PatternLimits/maximumVariableBytes``.
        case variableTooLarge = "variable-too-large"
        /// The file's patterns together over ``PatternLimits/maximumDomainWidth`` or
        /// ``PatternLimits/maximumDomainStates``.
        case rulesTooComplex = "rules-too-complex"

        /// The rule of the catalogue this problem is reported under.
        public var rule: Rule {
            switch self {
            case .unknownVariable: .unknownVariable
            case .unterminatedVariable: .unterminatedVariable
            case .emptyVariableName: .emptyVariableName
            case .invalidVariableName: .invalidVariableName
            case .variableValueContainsVariable: .variableValueContainsVariable
            case .invalidVariableUsed: .invalidVariableUsed
            case .variableShadowsBuiltIn: .variableShadowsBuiltIn
            case .duplicateVariable: .duplicateVariable
            case .nonASCIIPatternWhileEncoded: .nonASCIIPatternWhilePercentEncoded
            case .patternTooLong: .patternTooLong
            case .patternTooComplex: .patternTooComplex
            case .variableTooLarge: .variableTooLarge
            case .rulesTooComplex: .rulesTooComplex
            }
        }
    }

    /// Where in the file the problem is.
    public enum Location: Sendable, Hashable {
        /// `applinks.details[d].components[c]`, key `/`, `#`, `?` or `?[name]` for a query item.
        case component(detailsIndex: Int, componentIndex: Int, key: String)
        /// `applinks.details[d].paths[p]`.
        case path(detailsIndex: Int, pathIndex: Int)
        /// `applinks.details[d].defaults`, key as for a component.
        case detailsDefaults(detailsIndex: Int, key: String)
        /// `applinks.defaults`, key as for a component.
        case domainDefaults(key: String)
        /// `applinks.substitutionVariables[name]`.
        case substitutionVariable(String)
    }

    /// Error or warning.
    public var severity: Severity
    /// The stable code.
    public var code: Code
    /// Where the pattern is written.
    public var location: Location
    /// The variable concerned, if any.
    public var variable: String?
    /// What is wrong and how to fix it.
    public var message: String

    /// Creates a diagnostic.
    public init(severity: Severity, code: Code, location: Location, variable: String? = nil, message: String) {
        self.severity = severity
        self.code = code
        self.location = location
        self.variable = variable
        self.message = message
    }

    /// `applinks.details[]` index, when the problem is inside a details entry.
    public var detailsIndex: Int? {
        switch location {
        case .component(let d, _, _), .path(let d, _), .detailsDefaults(let d, _): return d
        case .domainDefaults, .substitutionVariable: return nil
        }
    }

    /// Index into `components` (or into `paths` for a path entry), when the problem is in one rule.
    public var componentIndex: Int? {
        switch location {
        case .component(_, let c, _): return c
        case .path(_, let p): return p
        case .detailsDefaults, .domainDefaults, .substitutionVariable: return nil
        }
    }

    /// The key holding the pattern: `/`, `#`, `?`, `?[name]`, `paths`, or `substitutionVariables`.
    public var key: String {
        switch location {
        case .component(_, _, let key), .detailsDefaults(_, let key), .domainDefaults(let key): return key
        case .path: return "paths"
        case .substitutionVariable: return "substitutionVariables"
        }
    }

    /// A JSON-path-like location, e.g. `applinks.details[0].components[2]["/"]`.
    public var path: String {
        func keyed(_ key: String) -> String {
            key.hasPrefix("?[") ? "[\"?\"]" + key.dropFirst() : "[\"\(key)\"]"
        }
        switch location {
        case .component(let d, let c, let key): return "applinks.details[\(d)].components[\(c)]\(keyed(key))"
        case .path(let d, let p): return "applinks.details[\(d)].paths[\(p)]"
        case .detailsDefaults(let d, let key): return "applinks.details[\(d)].defaults\(keyed(key))"
        case .domainDefaults(let key): return "applinks.defaults\(keyed(key))"
        case .substitutionVariable(let name): return "applinks.substitutionVariables[\"\(name)\"]"
        }
    }

    /// `applinks.details[0].components[2]["/"]: error: [unknown-variable] …`.
    public var description: String {
        "\(path): \(severity.rawValue): [\(code.rawValue)] \(message)"
    }
}

extension Rule {
    /// Reported by `WildcardPatternCompiler`, as a ``PatternDiagnostic`` code.
    public static let unknownVariable = Rule(
        "unknown-variable", .error, "`$(name)` names no variable in `variables` and no built-in.")

    /// Reported by `WildcardPatternCompiler`, as a ``PatternDiagnostic`` code.
    public static let unterminatedVariable = Rule("unterminated-variable", .error, "`$(` without `)`, or `$()`.")

    /// Reported by `WildcardPatternCompiler`, as a ``PatternDiagnostic`` code.
    public static let emptyVariableName = Rule("empty-variable-name", .error, "`$(` without `)`, or `$()`.")

    /// Reported by `SubstitutionTable`, as a ``PatternDiagnostic`` code.
    public static let variableShadowsBuiltIn = Rule(
        "variable-shadows-built-in", .warning, "A variable in `variables` replaces a built-in such as `digit`.")

    /// Reported by `SubstitutionTable`, as a ``PatternDiagnostic`` code.
    public static let duplicateVariable = Rule(
        "duplicate-variable", .warning, "A variable defined twice; the last definition wins.")

    /// Reported by `WildcardPatternCompiler`, as a ``PatternDiagnostic`` code.
    public static let nonASCIIPatternWhilePercentEncoded = Rule(
        "non-ascii-pattern-while-percent-encoded", .warning,
        "A non-ASCII pattern under `percentEncoded: true` can never match; percent-encode it or set `percentEncoded: false`."
    )

    /// Reported by `WildcardPatternCompiler`, as a ``PatternDiagnostic`` code; also by `AndroidPatternLimitRule`,
    /// `BannerExcludeLimitRule`.
    public static let patternTooLong = Rule(
        "pattern-too-long", .error, "A pattern over 1,024 characters (see Pattern limits).")

    /// Reported by `WildcardPatternCompiler`, as a ``PatternDiagnostic`` code; also by `AndroidPatternLimitRule`,
    /// `BannerExcludeLimitRule`.
    public static let patternTooComplex = Rule(
        "pattern-too-complex", .error,
        "A pattern over 32 wildcards, 8 variable uses, a step width of 512 or 4,096 automaton states, or banner exclusions over 4,096 characters together (see Pattern limits)."
    )

    /// Reported by `SubstitutionTable`, as a ``PatternDiagnostic`` code.
    public static let variableTooLarge = Rule(
        "variable-too-large", .error,
        "A variable over 1,024 values or 16,384 bytes of values; no pattern using it is compiled (see Pattern limits).")

    /// Reported by `WildcardPatternCompiler`, as a ``PatternDiagnostic`` code.
    public static let rulesTooComplex = Rule(
        "rules-too-complex", .error,
        "The file's patterns together over a step width of 16,384 or 65,536 automaton states (see Pattern limits).")

    /// Reported by `SubstitutionTable`, as a ``PatternDiagnostic`` code.
    public static let invalidVariableName = Rule(
        "invalid-variable-name", .error,
        "An Apple file's substitution variable has a malformed name, a value that uses another variable, or a pattern uses such a broken variable."
    )

    /// Reported by `SubstitutionTable`, as a ``PatternDiagnostic`` code.
    public static let variableValueContainsVariable = Rule(
        "variable-value-contains-variable", .error,
        "An Apple file's substitution variable has a malformed name, a value that uses another variable, or a pattern uses such a broken variable."
    )

    /// Reported by `WildcardPatternCompiler`, as a ``PatternDiagnostic`` code.
    public static let invalidVariableUsed = Rule(
        "invalid-variable-used", .error,
        "An Apple file's substitution variable has a malformed name, a value that uses another variable, or a pattern uses such a broken variable."
    )

    /// The rules of compiling patterns and substitution variables (stage 5), in the order of the docs table: their part
    /// of `Rule.all`.
    package static let patternRules: [Rule] = [
        .unknownVariable,
        .unterminatedVariable,
        .emptyVariableName,
        .variableShadowsBuiltIn,
        .duplicateVariable,
        .nonASCIIPatternWhilePercentEncoded,
        .patternTooLong,
        .patternTooComplex,
        .variableTooLarge,
        .rulesTooComplex,
    ]
}
