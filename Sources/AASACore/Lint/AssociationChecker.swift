/// `check --aasa`: every finding about an Apple-format file a user brings, whatever produced it.
public struct AssociationChecker: Sendable {
    /// The rules run after the file is read.
    public var linter: AssociationLinter

    /// Creates a checker with the standard rules.
    public init(linter: AssociationLinter = .standard) {
        self.linter = linter
    }

    /// Parses, reads and lints `source`: JSON and structure, app IDs, rules, patterns and size.
    public func check(_ source: SourceText) -> [Diagnostic] {
        var diagnostics: [Diagnostic] = []
        let size = source.bytes.count
        if size > AssociationGenerator.sizeLimit {
            diagnostics.append(
                source.diagnostic(
                    .error, rule: .fileSize,
                    "the file is \(size) bytes; Apple stops reading at \(AssociationGenerator.sizeLimit) (spec §3.5)",
                    at: 0, hint: "remove whitespace and merge rules with wildcards"))
        } else if size > AssociationGenerator.sizeWarning {
            diagnostics.append(
                source.diagnostic(
                    .warning, rule: .fileSize,
                    "the file is \(size) bytes, close to Apple's limit of \(AssociationGenerator.sizeLimit)", at: 0,
                    hint: "merge rules with wildcards before adding more"))
        }
        let (file, root, parsed) = AssociationFile.parse(source)
        diagnostics += parsed
        guard let file, let root else { return diagnostics }
        let context = AssociationContext.file(file, source: source, root: root)
        diagnostics += linter.lint(context)
        diagnostics += URLMatcher.diagnostics(for: file, in: context)
        return diagnostics
    }
}

extension PatternDiagnostic {
    /// The Apple key path the problem is about, down to the pattern's key.
    var keyPath: KeyPath {
        let applinks = KeyPath.root.key("applinks")
        func keyed(_ path: KeyPath, _ key: String) -> KeyPath {
            key.hasPrefix("?[") ? path.key("?").key(String(key.dropFirst(2).dropLast())) : path.key(key)
        }
        switch location {
        case .component(let details, let component, let key):
            return keyed(applinks.key("details").index(details).key("components").index(component), key)
        case .path(let details, let index): return applinks.key("details").index(details).key("paths").index(index)
        case .detailsDefaults(let details, let key):
            return keyed(applinks.key("details").index(details).key("defaults"), key)
        case .domainDefaults(let key): return keyed(applinks.key("defaults"), key)
        case .substitutionVariable(let name): return applinks.key("substitutionVariables").key(name)
        }
    }
}

extension URLMatcher {
    /// The matcher's pattern problems as diagnostics of `context` (unknown `$(variable)`, a pattern that
    /// can never match, …), leaving out those in `skipping`.
    static func diagnostics(
        for file: AssociationFile, in context: AssociationContext, skipping: Set<PatternDiagnostic.Code> = []
    ) -> [Diagnostic] {
        URLMatcher(file: file).diagnostics(in: context, skipping: skipping)
    }

    /// This matcher's pattern problems as diagnostics of `context`, leaving out those in `skipping`.
    func diagnostics(in context: AssociationContext, skipping: Set<PatternDiagnostic.Code> = []) -> [Diagnostic] {
        compileDiagnostics.compactMap { problem in
            guard !skipping.contains(problem.code) else { return nil }
            return context.diagnostic(
                problem.severity == .error ? .error : .warning, rule: problem.code.rule, problem.message,
                at: problem.keyPath)
        }
    }
}
