/// The app a test URL expects is a well-formed app ID; app IDs in the config itself are checked on the
/// generated file by ``AppleAppIDRule``.
public struct TestAppIDRule: SiteRule {
    /// Creates the rule.
    public init() {}

    /// Reports each malformed `opensApp`.
    public func check(_ site: SiteContext) -> [Diagnostic] {
        site.config.tests.enumerated().compactMap { index, test in
            guard case .opensApp(let id) = test.expectation, let problem = AppID.problem(id) else { return nil }
            return site.diagnostic(
                .error, rule: .appIDFormat, problem.message, at: .root.key("tests").index(index).key("opensApp"),
                hint: problem.hint)
        }
    }
}

/// Each universal-links entry names at least one app and has at least one rule.
///
/// An empty `components` array would hide `paths` on iOS 13+ (spec §2.7), so we never emit one.
public struct AppEntryRule: SiteRule {
    /// Creates the rule.
    public init() {}

    /// Reports entries without apps or rules.
    public func check(_ site: SiteContext) -> [Diagnostic] {
        var found: [Diagnostic] = []
        for (index, app) in (site.config.universalLinks?.apps ?? []).enumerated() {
            guard app.appIDs.isEmpty || app.rules.isEmpty else { continue }
            let path = KeyPath.universalLinksApps.index(index)
            if app.appIDs.isEmpty {
                found.append(
                    site.diagnostic(
                        .error, rule: .noApp, "this entry names no app, so iOS ignores it", at: path.key("appIDs"),
                        hint: "add \"TEAMID.bundle.id\" to \"appIDs\""))
            }
            if app.rules.isEmpty {
                found.append(
                    site.diagnostic(
                        .error, rule: .noRules, "\"rules\" is empty, so these apps open no URL",
                        at: path.key("rules"),
                        hint: "add {\"path\": \"/*\"} to claim every URL, or remove the entry"))
            }
        }
        return found
    }
}

/// Substitution variable names and values follow Apple's rules (spec §1.8).
public struct VariableRule: SiteRule {
    /// Creates the rule.
    public init() {}

    /// Reports bad names, values that nest variables, and empty lists.
    public func check(_ site: SiteContext) -> [Diagnostic] {
        var found: [Diagnostic] = []
        for variable in site.config.universalLinks?.variables ?? [] {
            let path = KeyPath.root.key("universalLinks").key("variables").key(variable.name)
            if variable.name.isEmpty || variable.name.contains(where: { "$()".contains($0) }) {
                found.append(
                    site.diagnostic(
                        .error, rule: .variableName,
                        "variable name '\(variable.name)' is empty or contains '$', '(' or ')'",
                        at: path, hint: "use a name such as \"food\" and refer to it as $(food)"))
            }
            if variable.values.isEmpty {
                found.append(
                    site.diagnostic(
                        .error, rule: .variableEmpty, "variable '\(variable.name)' has no values", at: path,
                        hint: "list at least one string"))
            }
            for (index, value) in variable.values.enumerated() where value.contains("$(") {
                found.append(
                    site.diagnostic(
                        .error, rule: .variableNested,
                        "value '\(value)' refers to another variable, which Apple does not allow",
                        at: path.index(index), hint: "write the values out in full"))
            }
        }
        return found
    }
}

/// `cacheControl` is a single header value.
public struct CacheControlRule: SiteRule {
    /// Creates the rule.
    public init() {}

    /// The most UTF-8 bytes a configured value that becomes a response header may have: far above any real
    /// `Cache-Control`, and far below what a response's head can carry, so that whatever `check` accepts is served.
    public static let maximumHeaderBytes = 1_024

    /// What is wrong with `value` as a header value (`key` names it), or `nil` when it can be sent as one.
    public static func problem(_ value: String, key: String) -> String? {
        if value.isEmpty || value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            return "\(key) must be one line of text"
        }
        if value.utf8.count > maximumHeaderBytes {
            return "\(key) is \(value.utf8.count) bytes, over the \(maximumHeaderBytes) a header value may have"
        }
        return nil
    }

    /// Reports an empty value, one with line breaks or control characters, and one over ``maximumHeaderBytes``.
    public func check(_ site: SiteContext) -> [Diagnostic] {
        guard let problem = Self.problem(site.config.cacheControl, key: "cacheControl") else { return [] }
        return [
            site.diagnostic(
                .error, rule: .cacheControl, problem, at: .root.key("cacheControl"), hint: "e.g. \"max-age=3600\"")
        ]
    }
}

extension Rule {
    /// Reported by `VariableRule`.
    public static let variableName = Rule(
        "variable-name", .error, "A variable name that is empty or contains `$`, `(`, `)`.")

    /// Reported by `VariableRule`.
    public static let variableEmpty = Rule("variable-empty", .error, "A variable with no values.")

    /// Reported by `VariableRule`.
    public static let variableNested = Rule("variable-nested", .error, "A variable value containing `$(`.")

    /// Reported by `CacheControlRule`; also by `PagesRule`.
    public static let cacheControl = Rule(
        "cache-control", .error,
        "`cacheControl` is empty, has line breaks / control characters, or is over 1,024 bytes.")

    /// The rules of what site.json's values mean (stage 3), in the order of the docs table: their part of `Rule.all`.
    package static let siteMeaningRules: [Rule] = [
        .appIDFormat,
        .duplicateApp,
        .variableName,
        .variableEmpty,
        .variableNested,
        .cacheControl,
    ]
}
