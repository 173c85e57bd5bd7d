/// What changes for one domain between two versions of its config: the classes of URLs whose answer changes on
/// each platform, the apps of the other services, and the serving settings clients notice.
///
/// "No change" means no URL changes its answer: rules reordered where they cannot overlap, a pattern split in
/// two, or a setting moved into `defaults` compare equal, because the comparison is made on what the rules
/// match (``SemanticDiff``), not on how they are written.
public struct DomainDiff: Sendable {
    public var domain: String
    /// Classes of URLs whose answer changes, per platform in order (iOS 13+, iOS 9-12, then Android packages).
    public var changes: [URLChange] = []
    /// Apps added to or removed from a service.
    public var services: [ServiceChange] = []
    /// Serving settings that changed.
    public var settings: [SettingChange] = []
    /// What limits the comparison, when something does (said, never hidden).
    public var notes: [String] = []
    /// What the comparison used, all platforms together, and the limit it reached if it did.
    public private(set) var budget: ComparisonBudget

    /// What the summary, the report and the notes say of a comparison whose budget ran out.
    public static let tooComplex = "not compared: too complex"

    /// Why not every URL was compared (``tooComplex`` when the budget ran out), or `nil` when every URL was: the
    /// changes listed are real, but there may be more.
    public private(set) var notCompared: String?

    /// Whether every URL was compared.
    public var isComplete: Bool { notCompared == nil }

    /// A comparison not made, for `reason` (`not compared: <reason>` leads its summary).
    public init(notComparedDomain domain: String, because reason: String) {
        self.domain = domain
        budget = ComparisonBudget()
        notCompared = "not compared: " + reason
        notes = [notCompared!]
    }

    /// Whether anything a client sees changes.
    public var hasChanges: Bool { !changes.isEmpty || !services.isEmpty || !settings.isEmpty }

    /// Compares `old` with `new`. iOS 13+ always; iOS 9-12 when `legacy`; Android 15+ for each package that has
    /// dynamic rules on both sides. Example URLs use `host`. `limits` bound the whole comparison, all platforms
    /// together (``ComparisonBudget``); a platform not compared within them gets a note saying ``tooComplex``.
    public init(
        domain: String, old: DiffSide, new: DiffSide, legacy: Bool = false, host: String? = nil,
        limits: ComparisonBudget.Limits = .standard
    ) {
        self.domain = domain
        budget = ComparisonBudget(limits)
        let host = host ?? domain
        var modes: [MatchMode] = [.modern]
        if legacy { modes.append(.legacy) }
        for mode in modes {
            let platform = mode == .modern ? "iOS 13+" : "iOS 9-12"
            // One matcher per version: its compiled rules are what is compared, and it checks the examples.
            let oldMatcher = URLMatcher(file: old.file, mode: mode)
            let newMatcher = URLMatcher(file: new.file, mode: mode)
            do {
                try compare(
                    DecisionList(apple: oldMatcher, budget: &budget), DecisionList(apple: newMatcher, budget: &budget),
                    platform: platform, old: old, new: new, host: host, package: nil
                ) { url in
                    (
                        Self.answer(oldMatcher.match(url, nearMissLimit: 0)),
                        Self.answer(newMatcher.match(url, nearMissLimit: 0))
                    )
                }
            } catch {
                noteTooComplex(platform, error)
            }
        }
        compareAndroid(old: old, new: new, host: host)
        compareServices(old: old, new: new)
        // Only settings both sides know: an Apple-format file says nothing of signing or cacheControl.
        for name in Set(old.settings.keys).intersection(new.settings.keys).sorted()
        where old.settings[name] != new.settings[name] {
            settings.append(SettingChange(name: name, old: old.settings[name], new: new.settings[name]))
        }
        // A credential endpoint URL added, changed or removed: each side knows them all, absent ones included.
        if let before = old.endpoints, let after = new.endpoints {
            for name in Set(before.keys).union(after.keys).sorted() where before[name] != after[name] {
                settings.append(SettingChange(name: name, old: before[name], new: after[name]))
            }
        }
    }

    private static func answer(_ result: MatchResult) -> LinkAnswer {
        result.verdict == .match ? .app(result.appIDs) : .web
    }

    /// `iOS 13+: not compared: too complex (the comparison reached the limit of 2000000 edges)`.
    private mutating func noteTooComplex(_ platform: String, _ exhausted: ComparisonBudget.Exhausted) {
        notCompared = Self.tooComplex
        notes.append(
            "\(platform): \(Self.tooComplex) (the comparison reached \(exhausted); the changes listed are real, but there may be more)"
        )
    }

    /// The classes of URLs whose answer changes from `before` to `after`, each described and with examples the
    /// matchers confirm (`check`); throws when the budget runs out, having listed what it could.
    private mutating func compare(
        _ before: DecisionList, _ after: DecisionList, platform: String, old: DiffSide, new: DiffSide, host: String,
        package: String?, check: (String) -> (LinkAnswer, LinkAnswer)
    ) throws(ComparisonBudget.Exhausted) {
        var diff = SemanticDiff(old: before, new: after, budget: budget)
        let found = diff.run()
        budget = diff.budget
        if let exhausted = diff.exhausted { throw exhausted }
        // Matching an example URL reads each of its scalars through, at most, every automaton of both versions.
        let matchCost = before.stateCount + after.stateCount + 1
        func confirmed(_ url: String, _ item: SemanticDiff.Found) throws(ComparisonBudget.Exhausted) -> Bool {
            try budget.charge(steps: (url.utf8.count + 1) * matchCost)
            let (was, now) = check(url)
            return Self.same(was, item.from) && Self.same(now, item.to)
        }
        if diff.incomplete {
            notes.append(
                "\(platform): the rules overlap too much to compare them all; the changes listed are real, but there may be more"
            )
        }

        if diff.readsQueryBothWays {
            notes.append(
                "\(platform): rules read both the whole query and query items, compared as independent conditions; a class no URL falls into has no example"
            )
        }
        for item in found {
            let oldRule = item.oldRule.map { before.rules[$0] }
            let newRule = item.newRule.map { after.rules[$0] }
            // The class as listed: its description (from the rules' patterns), examples and rule references.
            let written = [oldRule, newRule].compactMap { $0 }.reduce(0) { total, rule in
                rule.patterns.values.reduce(total + rule.text.utf8.count) { $0 + $1.utf8.count }
            }
            try budget.charge(bytes: 512 + 3 * written, steps: written)
            var description = ChangeDescription.describe(
                [oldRule, newRule].compactMap { $0 }, android: package != nil)
            if oldRule == nil { description += ", which no rule matched before" }
            if newRule == nil { description += ", which no rule matches now" }
            // Every example is checked with the matchers of both versions before it is shown.
            var examples: [String] = []
            for example in item.examples {
                let url = Self.url(example, host: host, diff: diff)
                try budget.charge(bytes: 2 * url.utf8.count)
                guard !examples.contains(url) else { continue }
                if try confirmed(url, item) { examples.append(url) }
            }
            // A class of one path (`/p` alone) still has many URLs: vary what no rule of the class reads, and
            // keep what the matchers confirm, for two or three examples.
            if let first = examples.first, examples.count < 2 {
                let variants = [
                    first.contains("?") || first.contains("#") ? nil : first + "?utm_source=review",
                    first.contains("#") ? nil : first + "#top",
                ]
                for variant in variants.compactMap({ $0 }) where examples.count < 3 {
                    if try confirmed(variant, item) { examples.append(variant) }
                }
            }
            if examples.isEmpty {
                notes.append("\(platform): no example of “\(description)” could be confirmed with the matcher")
            }
            changes.append(
                URLChange(
                    platform: platform, kind: URLChange.kind(from: item.from, to: item.to),
                    from: Self.apps(item.from), to: Self.apps(item.to), description: description, examples: examples,
                    oldRule: oldRule.map { old.reference($0, package: package) },
                    newRule: newRule.map { new.reference($0, package: package) }))
        }
    }

    private static func apps(_ answer: LinkAnswer) -> [String] {
        if case .app(let apps) = answer { return apps }
        return []
    }

    private static func same(_ a: LinkAnswer, _ b: LinkAnswer) -> Bool {
        Set(apps(a)) == Set(apps(b)) && (a == .web) == (b == .web)
    }

    /// A URL from the texts the diff chose for each part.
    private static func url(_ example: [URLPart: [[UInt32]]], host: String, diff: SemanticDiff) -> String {
        var url = "https://\(host)"
        let spaces = diff.spaces
        if let path = example[.path]?.first, let space = spaces[.path] {
            let text = space.urlText(path)
            url += space.shape == .trimmedPath ? "/" + text : (text.isEmpty ? "/" : text)
        } else {
            url += "/"
        }
        var query: [String] = []
        if let whole = example[.query]?.first, let space = spaces[.query], !whole.isEmpty {
            query.append(space.urlText(whole))
        }
        for (part, values) in example.sorted(by: { $0.key < $1.key }) {
            guard case .item(let name) = part, let space = spaces[part] else { continue }
            let encodedName = PartSpace(shape: .free, encoded: false, part: space.part).urlText(
                name.unicodeScalars.map(\.value))
            // Apple reads an absent item as "": leave it out rather than write `name=`, unless a rule reads every
            // spelling of the name (then an empty item and none differ).
            if values == [[]] && diff.old.itemReading == .everyInstance && !diff.spelledParts.contains(part) {
                continue
            }
            query += values.map { "\(encodedName)=\(space.urlText($0))" }
        }
        if !query.isEmpty { url += "?" + query.joined(separator: "&") }
        if let fragment = example[.fragment]?.first, let space = spaces[.fragment], !fragment.isEmpty {
            url += "#" + space.urlText(fragment)
        }
        return url
    }

    private mutating func compareAndroid(old: DiffSide, new: DiffSide, host: String) {
        let before = old.assetLinks.map { DynamicRules.packages(in: $0) } ?? []
        let after = new.assetLinks.map { DynamicRules.packages(in: $0) } ?? []
        for package in before.filter(after.contains) {
            guard let oldRoot = old.assetLinks, let newRoot = new.assetLinks else { continue }
            let oldRules = DynamicRules(package: package, in: oldRoot)
            let newRules = DynamicRules(package: package, in: newRoot)
            let platform = "Android 15+ (\(package))"
            let lists: (DecisionList?, DecisionList?)
            do {
                lists = (
                    try DecisionList(android: oldRules, budget: &budget),
                    try DecisionList(android: newRules, budget: &budget)
                )
            } catch {
                noteTooComplex(platform, error)
                continue
            }
            switch lists {
            case (let was?, let now?):
                let oldMatcher = AndroidMatcher(assetLinks: oldRoot, packages: [package])
                let newMatcher = AndroidMatcher(assetLinks: newRoot, packages: [package])
                do {
                    try compare(was, now, platform: platform, old: old, new: new, host: host, package: package) {
                        url in
                        (Self.answer(oldMatcher.match(url)), Self.answer(newMatcher.match(url)))
                    }
                } catch {
                    noteTooComplex(platform, error)
                }
            case (nil, nil):
                continue
            case (let was, let now):
                settings.append(
                    SettingChange(
                        name: "\(package) dynamic rules", old: Self.blockSummary(oldRules, was),
                        new: Self.blockSummary(newRules, now)))
            }
        }
    }

    private static func answer(_ result: AndroidMatchResult) -> LinkAnswer {
        result.verdict == .match ? .app(result.packages) : .web
    }

    private static func blockSummary(_ rules: DynamicRules, _ list: DecisionList?) -> String {
        if let list { return "\(list.rules.count) rule\(list.rules.count == 1 ? "" : "s")" }
        if case .discarded(let discarded) = rules.block {
            return "discarded by Android (\(discarded.reason)): the app's intent filters decide"
        }
        return "none: the app's intent filters decide"
    }

    private mutating func compareServices(old: DiffSide, new: DiffSide) {
        for ((key, was), (_, now)) in zip(old.file.appServices, new.file.appServices) {
            let change = ServiceChange(service: key, old: was ?? [], new: now ?? [])
            if !change.added.isEmpty || !change.removed.isEmpty { services.append(change) }
        }
        let oldAndroid = AndroidTargets(old.assetLinks)
        let newAndroid = AndroidTargets(new.assetLinks)
        let packages = ServiceChange(service: "android packages", old: oldAndroid.packages, new: newAndroid.packages)
        if !packages.added.isEmpty || !packages.removed.isEmpty { services.append(packages) }
        for package in oldAndroid.packages where newAndroid.packages.contains(package) {
            let change = ServiceChange(
                service: "android fingerprints (\(package))", old: oldAndroid.fingerprints[package] ?? [],
                new: newAndroid.fingerprints[package] ?? [])
            if !change.added.isEmpty || !change.removed.isEmpty { services.append(change) }
        }
    }
}

/// Apps added to and removed from one service (`webcredentials`, `appclips`, `activitycontinuation`,
/// `authsrv`, Android packages or one package's certificate fingerprints).
public struct ServiceChange: Sendable, Hashable {
    public var service: String
    public var added: [String]
    public var removed: [String]

    init(service: String, old: [String], new: [String]) {
        self.service = service
        added = new.filter { !old.contains($0) }
        removed = old.filter { !new.contains($0) }
    }

    var jsonValue: JSONValue {
        .members([("service", .string(service)), ("added", .strings(added)), ("removed", .strings(removed))])
    }
}

/// A serving setting that changed (`legacy form`, `signing`, `cacheControl`, a package's dynamic rules block, a
/// credential endpoint's URL such as `passkeys.enroll` or `changePassword`).
public struct SettingChange: Sendable, Hashable {
    public var name: String
    /// `nil` when the setting is not known on that side.
    public var old: String?
    public var new: String?

    var jsonValue: JSONValue {
        .members([
            ("setting", .string(name)), ("old", old.map(JSONValue.string) ?? .null),
            ("new", new.map(JSONValue.string) ?? .null),
        ])
    }
}

/// The Android apps an assetlinks.json names, with their certificate fingerprints, in file order.
struct AndroidTargets {
    var packages: [String] = []
    var fingerprints: [String: [String]] = [:]

    init(_ root: JSONValue?) {
        for statement in root?.arrayValue ?? [] {
            guard let target = statement[member: "target"], let package = target[member: "package_name"]?.stringValue
            else { continue }
            if !packages.contains(package) { packages.append(package) }
            for fingerprint in target[member: "sha256_cert_fingerprints"]?.arrayValue ?? [] {
                guard let text = fingerprint.stringValue, !(fingerprints[package]?.contains(text) ?? false) else {
                    continue
                }
                fingerprints[package, default: []].append(text)
            }
        }
    }
}
