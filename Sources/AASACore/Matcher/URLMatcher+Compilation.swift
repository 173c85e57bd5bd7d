extension URLMatcher {
    /// Builds the evaluated entries and the diagnostics for one file.
    struct Compilation {
        let file: AssociationFile
        let mode: MatchMode
        let compiler: WildcardPatternCompiler
        /// Where patterns without variables are taken from and kept (``SharedPatterns/shared`` but in tests).
        let patterns: SharedPatterns
        private(set) var entries: [Entry] = []
        private(set) var notes: [String] = []
        private(set) var diagnostics: [PatternDiagnostic] = []
        private var reported: Set<PatternDiagnostic> = []
        /// The patterns with variables compiled for this file (the others are ``patterns``').
        private var cache: [SharedPatterns.Key: WildcardPatternCompiler.Output] = [:]
        /// What is left of ``PatternLimits/maximumDomainWidth``: each pattern a rule uses is charged its width,
        /// before it is built.
        private var allowedWidth = PatternLimits.maximumDomainWidth
        /// What is left of ``PatternLimits/maximumDomainStates``, charged the same way.
        private var allowedStates = PatternLimits.maximumDomainStates

        /// The width charged so far.
        var width: Int { PatternLimits.maximumDomainWidth - allowedWidth }
        /// The states charged so far.
        var states: Int { PatternLimits.maximumDomainStates - allowedStates }

        /// A pattern with where it is written and, if inherited, which `defaults` it comes from.
        private struct Located {
            var source: String
            var location: PatternDiagnostic.Location
            var inheritedFrom: String?
        }

        init(file: AssociationFile, mode: MatchMode, patterns: SharedPatterns) {
            self.file = file
            self.mode = mode
            self.patterns = patterns
            if mode == .modern {
                let table = SubstitutionTable(variables: file.applinks?.substitutionVariables ?? [])
                compiler = WildcardPatternCompiler(variables: table)
                for diagnostic in table.diagnostics { report(diagnostic) }
            } else {
                // iOS 12 and earlier predate substitution variables (spec §1.9): `$(` is literal there.
                compiler = WildcardPatternCompiler(variables: nil)
            }
        }

        mutating func run() {
            guard let applinks = file.applinks else { return }
            switch mode {
            case .modern: runModern(applinks)
            case .legacy: runLegacy(applinks)
            }
        }

        private mutating func runModern(_ applinks: AppLinks) {
            let domain = applinks.defaults
            // Compile the defaults' own patterns too, so their problems are reported even when every
            // component overrides them.
            if let domain {
                checkDefaults(
                    domain, caseSensitive: domain.caseSensitive ?? true, percentEncoded: domain.percentEncoded ?? true,
                    location: { .domainDefaults(key: $0) })
            }
            for (detailsIndex, details) in applinks.details.enumerated() {
                let app = details.defaults
                if let app {
                    checkDefaults(
                        app, caseSensitive: app.caseSensitive ?? domain?.caseSensitive ?? true,
                        percentEncoded: app.percentEncoded ?? domain?.percentEncoded ?? true,
                        location: { .detailsDefaults(detailsIndex: detailsIndex, key: $0) })
                }
                var rules: [CompiledRule] = []
                if let components = details.components {
                    // Apple: `paths` is ignored when `components` is present, even empty (spec §2.7).
                    for (index, component) in components.enumerated() where !component.isUnreadable {
                        rules.append(
                            modernRule(component, index: index, detailsIndex: detailsIndex, app: app, domain: domain))
                    }
                } else if let paths = details.paths {
                    // Our decision (spec silent): a modern client reads an entry without `components` by its
                    // `paths`, each as a path-only rule that takes caseSensitive/percentEncoded from the
                    // defaults and may use substitution variables; `/`, `?`, `#` and `exclude` from defaults
                    // are not applied, since a path string carries its own.
                    for (index, entry) in paths.enumerated() {
                        rules.append(
                            pathRule(
                                entry, index: index, detailsIndex: detailsIndex,
                                caseSensitive: app?.caseSensitive ?? domain?.caseSensitive ?? true,
                                percentEncoded: app?.percentEncoded ?? domain?.percentEncoded ?? true))
                    }
                }
                let appIDs = details.modernAppIDs
                if appIDs.isEmpty {
                    // Apple (swcutil, observed): an entry naming no app is ignored (spec §9).
                    notes.append("applinks.details[\(detailsIndex)] names no app (no appIDs or appID) and is ignored")
                    continue
                }
                entries.append(Entry(detailsIndex: detailsIndex, appIDs: appIDs, rules: rules))
            }
        }

        private mutating func runLegacy(_ applinks: AppLinks) {
            for (detailsIndex, details) in applinks.details.enumerated() {
                // iOS 12 and earlier read only `appID` and `paths` (spec §1.3, §2.7).
                guard let appID = details.appID else {
                    notes.append(
                        "applinks.details[\(detailsIndex)] has no appID; iOS 12 and earlier ignore it (appIDs is iOS 13+)"
                    )
                    continue
                }
                guard let paths = details.paths else {
                    if details.components != nil {
                        notes.append(
                            "applinks.details[\(detailsIndex)] has components but no paths; iOS 12 and earlier match nothing for it"
                        )
                    }
                    continue
                }
                // Legacy paths are case-sensitive and compared in percent-encoded form: `defaults` arrived
                // with iOS 13.5/14 (spec §1.9, §2.5, §2.8).
                let rules = paths.enumerated().map { index, entry in
                    pathRule(entry, index: index, detailsIndex: detailsIndex, caseSensitive: true, percentEncoded: true)
                }
                entries.append(Entry(detailsIndex: detailsIndex, appIDs: [appID], rules: rules))
            }
        }

        private mutating func checkDefaults(
            _ defaults: ComponentPattern, caseSensitive: Bool, percentEncoded: Bool,
            location: (String) -> PatternDiagnostic.Location
        ) {
            var errors: [String] = []
            if let path = defaults.path {
                _ = part(
                    Located(source: path, location: location("/")), caseSensitive: caseSensitive,
                    percentEncoded: percentEncoded, target: .path, errors: &errors)
            }
            if let fragment = defaults.fragment {
                _ = part(
                    Located(source: fragment, location: location("#")), caseSensitive: caseSensitive,
                    percentEncoded: percentEncoded, target: .other, errors: &errors)
            }
            switch defaults.query {
            case .whole(let pattern):
                _ = part(
                    Located(source: pattern, location: location("?")), caseSensitive: caseSensitive,
                    percentEncoded: percentEncoded, target: .other, errors: &errors)
            case .items(let items):
                for item in items {
                    _ = part(
                        Located(source: item.pattern, location: location("?[\(item.name)]")),
                        caseSensitive: caseSensitive, percentEncoded: true, target: .other, errors: &errors)
                }
            case nil:
                break
            }
        }

        private mutating func modernRule(
            _ component: ComponentPattern, index: Int, detailsIndex: Int, app: ComponentPattern?,
            domain: ComponentPattern?
        ) -> CompiledRule {
            // Apple: the more specific level wins: component, then details[].defaults, then applinks.defaults,
            // then the built-in `true` (spec §1.7, §2.5).
            let caseSensitive = component.caseSensitive ?? app?.caseSensitive ?? domain?.caseSensitive ?? true
            let percentEncoded = component.percentEncoded ?? app?.percentEncoded ?? domain?.percentEncoded ?? true
            // Apple (swcutil, observed): `/`, `?`, `exclude` in defaults apply to components that do not set
            // them (spec §1.7). We treat `#` the same way: Apple calls defaults "a subclass of components" and
            // nothing distinguishes `#` from `/` and `?` there.
            var appFrom: String { "applinks.details[\(detailsIndex)].defaults" }
            func pick<Value>(_ key: String, _ value: (ComponentPattern) -> Value?) -> (
                Value, PatternDiagnostic.Location, String?
            )? {
                if let own = value(component) {
                    return (own, .component(detailsIndex: detailsIndex, componentIndex: index, key: key), nil)
                }
                if let app, let inherited = value(app) {
                    return (inherited, .detailsDefaults(detailsIndex: detailsIndex, key: key), appFrom)
                }
                if let domain, let inherited = value(domain) {
                    return (inherited, .domainDefaults(key: key), "applinks.defaults")
                }
                return nil
            }

            var errors: [String] = []
            let path = pick("/", \.path).map { source, location, from in
                part(
                    Located(source: source, location: location, inheritedFrom: from), caseSensitive: caseSensitive,
                    percentEncoded: percentEncoded, target: .path, errors: &errors)
            }
            let fragment = pick("#", \.fragment).map { source, location, from in
                part(
                    Located(source: source, location: location, inheritedFrom: from), caseSensitive: caseSensitive,
                    percentEncoded: percentEncoded, target: .other, errors: &errors)
            }
            var query: CompiledRule.QueryPart?
            if let (pattern, location, from) = pick("?", \.query) {
                switch pattern {
                case .whole(let source):
                    query = .whole(
                        part(
                            Located(source: source, location: location, inheritedFrom: from),
                            caseSensitive: caseSensitive, percentEncoded: percentEncoded, target: .other,
                            errors: &errors))
                case .items(let items):
                    query = .items(
                        items.map { item in
                            let itemLocation: PatternDiagnostic.Location
                            switch location {
                            case .detailsDefaults(let d, _):
                                itemLocation = .detailsDefaults(detailsIndex: d, key: "?[\(item.name)]")
                            case .domainDefaults: itemLocation = .domainDefaults(key: "?[\(item.name)]")
                            default:
                                itemLocation = .component(
                                    detailsIndex: detailsIndex, componentIndex: index, key: "?[\(item.name)]")
                            }
                            // Apple: query items are compared decoded, as URLQueryItem gives them (spec §2.6),
                            // so their patterns are compiled as for decoded text whatever percentEncoded says.
                            // Our decision (spec §2.5 silent): item names follow caseSensitive like values.
                            let compiled = part(
                                Located(source: item.pattern, location: itemLocation, inheritedFrom: from),
                                caseSensitive: caseSensitive, percentEncoded: false, target: .other, errors: &errors)
                            return CompiledRule.ItemPart(
                                name: item.name,
                                comparableName: caseSensitive ? item.name : CaseFolding.fold(item.name),
                                part: compiled)
                        })
                }
            }
            let exclude = component.exclude ?? app?.exclude ?? domain?.exclude ?? false
            return CompiledRule(
                detailsIndex: detailsIndex, ruleIndex: index, kind: .component, written: .component(component),
                exclude: exclude, caseSensitive: caseSensitive, percentEncoded: percentEncoded, path: path,
                query: query, fragment: fragment, compileErrors: errors)
        }

        private mutating func pathRule(
            _ entry: String, index: Int, detailsIndex: Int, caseSensitive: Bool, percentEncoded: Bool
        ) -> CompiledRule {
            // Apple: `NOT ` (capital NOT and one space) marks an exclusion (spec §1.3, §2.8).
            let exclude = entry.hasPrefix("NOT ")
            let source = exclude ? String(entry.dropFirst(4)) : entry
            var errors: [String] = []
            let path = part(
                Located(source: source, location: .path(detailsIndex: detailsIndex, pathIndex: index)),
                caseSensitive: caseSensitive, percentEncoded: percentEncoded, target: .path, errors: &errors)
            return CompiledRule(
                detailsIndex: detailsIndex, ruleIndex: index, kind: .path, written: .path(entry),
                exclude: exclude, caseSensitive: caseSensitive, percentEncoded: percentEncoded, path: path,
                query: nil, fragment: nil, compileErrors: errors)
        }

        /// Compiles (or reuses) one pattern and reports its problems once, at the place it is written.
        private mutating func part(
            _ located: Located, caseSensitive: Bool, percentEncoded: Bool, target: WildcardPatternCompiler.Target,
            errors: inout [String]
        ) -> CompiledRule.Part {
            let key = SharedPatterns.Key(
                source: located.source, caseSensitive: caseSensitive, percentEncoded: percentEncoded, target: target)
            // A pattern without variables compiles the same in every file: it is kept for all of them. One with
            // variables depends on this file's, and is kept for this file only.
            let shared = SharedPatterns.isShareable(located.source) ? patterns : nil
            let cached = if let shared { shared.output(for: key) } else { cache[key] }
            var output: WildcardPatternCompiler.Output
            if let cached, cached.width <= allowedWidth, cached.states <= allowedStates {
                output = cached
            } else {
                output = compiler.compile(
                    located.source, caseSensitive: caseSensitive, percentEncoded: percentEncoded, target: target,
                    allowedWidth: allowedWidth, allowedStates: allowedStates)
                if !output.problems.contains(where: { $0.code == .rulesTooComplex }) {
                    if let shared { shared.keep(output, for: key) } else { cache[key] = output }
                }
            }
            allowedWidth -= output.width
            allowedStates -= output.states
            for problem in output.problems {
                report(
                    PatternDiagnostic(
                        severity: problem.severity, code: problem.code, location: located.location,
                        variable: problem.variable, message: problem.message))
                if problem.severity == .error { errors.append(problem.message) }
            }
            return CompiledRule.Part(
                source: located.source, pattern: output.pattern, inheritedFrom: located.inheritedFrom)
        }

        private mutating func report(_ diagnostic: PatternDiagnostic) {
            if reported.insert(diagnostic).inserted { diagnostics.append(diagnostic) }
        }
    }
}
