/// `check --assetlinks`: what Android 15+ would silently throw away in an assetlinks.json (spec §7.1). A dynamic
/// block that is empty, malformed, or one of two for a package is discarded whole, and the app's intent filters
/// decide instead: each is an error naming the package and the key.
public struct AssetLinksChecker: Sendable {
    /// Creates a checker.
    public init() {}

    /// The findings about `source`: JSON errors, then each package's discarded block.
    public func check(_ source: SourceText) -> [Diagnostic] {
        let parsed: JSONParser.Result
        do {
            parsed = try JSONParser().parse(source)
        } catch {
            return [error]
        }
        var diagnostics = parsed.diagnostics
        let root = parsed.root.value
        for package in DynamicRules.packages(in: root) {
            let rules = DynamicRules(package: package, in: root)
            if case .discarded(let discarded) = rules.block {
                diagnostics.append(
                    Diagnostic(
                        .error, rule: .androidDynamicRules,
                        "\(package): \(discarded.reason): Android 15+ discards all of its dynamic rules, and its intent filters decide",
                        file: source.name, keyPath: discarded.keyPath,
                        hint:
                            "write each rule with only \"/\", \"?\" (an object of item patterns), \"#\" and \"exclude\""
                    ))
            }
            for note in rules.notes {
                diagnostics.append(
                    Diagnostic(
                        .error, rule: .androidDynamicRules, note, file: source.name,
                        hint: "keep one dynamic_app_link_components block per package"))
            }
        }
        return diagnostics
    }
}

extension Rule {
    /// Reported by `AssetLinksChecker`; also by `AssetLinksGenerator`, `AssetLinksImporter`.
    public static let androidDynamicRules = Rule(
        "android-dynamic-rules", .error,
        "Android 15+ discards a `dynamic_app_link_components` block whole: it is empty, not a list, has a string `?`, a key Android does not know, a value of the wrong type, or a package has two blocks; the app's intent filters decide instead (error, `check --assetlinks`). A warning when no rule of an `android` app can be generated: its list is left out."
    )
}
