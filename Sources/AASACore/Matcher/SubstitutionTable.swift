/// The substitution variables a file's patterns can use: the file's own plus Apple's built-ins (spec §1.8).
struct SubstitutionTable: Sendable {
    /// Name → values. User variables are already merged over the built-ins.
    private(set) var values: [String: [String]]
    /// Problems in the variable definitions themselves (names with `$()`, values with `$(`, shadowing).
    private(set) var diagnostics: [PatternDiagnostic] = []
    /// Names whose definition is invalid; a pattern using one fails to compile.
    private(set) var invalidNames: Set<String> = []
    /// Each valid variable's values read once, case-sensitive and folded, shared by every pattern that uses it.
    private var alternations: [String: (sensitive: VariableAlternation, folded: VariableAlternation)] = [:]

    /// The values of `name` as patterns read them, or `nil` when it is undefined or invalid.
    func alternation(_ name: String, caseSensitive: Bool) -> VariableAlternation? {
        guard let pair = alternations[name] ?? Self.builtInAlternations[name] else { return nil }
        return caseSensitive ? pair.sensitive : pair.folded
    }

    /// The built-ins read once per process.
    private static let builtInAlternations = builtIns.mapValues { values in
        (
            VariableAlternation(values: values, caseSensitive: true),
            VariableAlternation(values: values, caseSensitive: false)
        )
    }

    /// The predefined variables (spec §1.8). Single-character classes list one string per character.
    static let builtIns: [String: [String]] = {
        let upper = (UInt8(ascii: "A")...UInt8(ascii: "Z")).map { String(UnicodeScalar($0)) }
        let lower = (UInt8(ascii: "a")...UInt8(ascii: "z")).map { String(UnicodeScalar($0)) }
        let digit = (UInt8(ascii: "0")...UInt8(ascii: "9")).map { String(UnicodeScalar($0)) }
        return [
            "alpha": upper + lower,
            "upper": upper,
            "lower": lower,
            "alnum": upper + lower + digit,
            "digit": digit,
            "xdigit": digit + ["A", "B", "C", "D", "E", "F", "a", "b", "c", "d", "e", "f"],
            "region": ISOCodeTables.regionCodes,
            "lang": ISOCodeTables.languageCodes,
        ]
    }()

    /// Builds the table for `variables` (the file's `applinks.substitutionVariables`).
    ///
    /// Decisions where Apple is silent (spec §1.8):
    /// - A user variable named like a built-in **replaces** it for this file, the way a JSON author would
    ///   expect a definition to take effect; `check` gets a warning because the file then means something
    ///   different on a client that resolves built-ins first.
    /// - A name defined twice: the later definition wins, as with duplicate keys in a JSON object; warning.
    /// - A name containing `$`, `(` or `)`, or a value containing `$(`, makes the variable invalid: it is
    ///   reported as an error and every pattern that uses it fails to compile (it never matches).
    /// - So does a variable over ``PatternLimits/maximumVariableValues`` values or
    ///   ``PatternLimits/maximumVariableBytes`` bytes: its values are counted before they are read.
    init(variables: [SubstitutionVariable]) {
        values = Self.builtIns
        var seen: Set<String> = []
        for variable in variables {
            let location = PatternDiagnostic.Location.substitutionVariable(variable.name)
            if seen.contains(variable.name) {
                diagnostics.append(
                    PatternDiagnostic(
                        severity: .warning, code: .duplicateVariable, location: location, variable: variable.name,
                        message:
                            "substitution variable '\(variable.name)' is defined more than once; the last definition is used"
                    ))
            } else if Self.builtIns[variable.name] != nil {
                diagnostics.append(
                    PatternDiagnostic(
                        severity: .warning, code: .variableShadowsBuiltIn, location: location, variable: variable.name,
                        message:
                            "substitution variable '\(variable.name)' replaces Apple's built-in $(\(variable.name)); rename it to avoid surprises"
                    ))
            }
            seen.insert(variable.name)
            invalidNames.remove(variable.name)
            values[variable.name] = variable.values
            if variable.name.isEmpty || variable.name.contains(where: { $0 == "$" || $0 == "(" || $0 == ")" }) {
                invalidNames.insert(variable.name)
                diagnostics.append(
                    PatternDiagnostic(
                        severity: .error, code: .invalidVariableName, location: location, variable: variable.name,
                        message:
                            "substitution variable name '\(variable.name)' must be non-empty and may not contain '$', '(' or ')'"
                    ))
            }
            let bytes = variable.values.reduce(0) { $0 + $1.utf8.count }
            if variable.values.count > PatternLimits.maximumVariableValues || bytes > PatternLimits.maximumVariableBytes
            {
                invalidNames.insert(variable.name)
                let over =
                    variable.values.count > PatternLimits.maximumVariableValues
                    ? "has \(variable.values.count) values; the limit is \(PatternLimits.maximumVariableValues)"
                    : "has \(bytes) bytes of values; the limit is \(PatternLimits.maximumVariableBytes)"
                diagnostics.append(
                    PatternDiagnostic(
                        severity: .error, code: .variableTooLarge, location: location, variable: variable.name,
                        message:
                            "substitution variable '\(variable.name)' \(over), so no pattern that uses it is compiled; split it, or match the varying part with a wildcard such as '?*'"
                    ))
                continue
            }
            for value in variable.values where value.contains("$(") {
                invalidNames.insert(variable.name)
                diagnostics.append(
                    PatternDiagnostic(
                        severity: .error, code: .variableValueContainsVariable, location: location,
                        variable: variable.name,
                        message:
                            "value '\(value)' of substitution variable '\(variable.name)' contains '$('; values may not use other variables"
                    ))
            }
        }
        for variable in variables where !invalidNames.contains(variable.name) && alternations[variable.name] == nil {
            // The last definition of a name is the one in force (`values`), whichever position it had.
            let values = values[variable.name] ?? []
            alternations[variable.name] = (
                VariableAlternation(values: values, caseSensitive: true),
                VariableAlternation(values: values, caseSensitive: false)
            )
        }
    }
}
