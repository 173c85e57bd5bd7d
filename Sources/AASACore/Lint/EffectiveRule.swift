/// A rule as a modern client evaluates it: defaults applied, legacy `paths` turned into path rules,
/// in the order iOS searches (entries in array order, rules top to bottom; spec §1.7, §2.2, §2.7).
struct EffectiveRule {
    /// Where the rule is: its details entry, whether among the legacy `paths`, and its index there.
    var place: (entry: Int, legacy: Bool, index: Int)
    /// Apple key path of the rule (`applinks.details[i].components[j]` or `…paths[j]`), made for a finding.
    var path: KeyPath {
        KeyPath.applinksDetails.index(place.entry).key(place.legacy ? "paths" : "components").index(place.index)
    }
    /// The pattern with `/`, `?`, `#` and `exclude` inherited from `defaults`.
    var pattern: ComponentPattern
    var caseSensitive: Bool
    var percentEncoded: Bool
    /// The apps of the rule's details entry.
    var apps: Set<String>
    var exclude: Bool { pattern.exclude == true }

    /// Every rule of `file` that a modern client can reach, in search order. Entries naming no app are
    /// skipped, as iOS skips them.
    static func all(in file: AssociationFile) -> [EffectiveRule] {
        guard let applinks = file.applinks else { return [] }
        let domainDefaults = applinks.defaults
        var rules: [EffectiveRule] = []
        for (entryIndex, details) in applinks.details.enumerated() where !details.modernAppIDs.isEmpty {
            // One set for every rule of the entry: copies share its storage.
            let apps = Set(details.modernAppIDs)
            func flags(_ rule: ComponentPattern?) -> (Bool, Bool) {
                (
                    rule?.caseSensitive ?? details.defaults?.caseSensitive ?? domainDefaults?.caseSensitive ?? true,
                    rule?.percentEncoded ?? details.defaults?.percentEncoded ?? domainDefaults?.percentEncoded ?? true
                )
            }
            if let components = details.components {
                for (index, component) in components.enumerated() {
                    let pattern = AssociationImporter.inherit(component, from: details.defaults, then: domainDefaults)
                    let (caseSensitive, percentEncoded) = flags(component)
                    rules.append(
                        EffectiveRule(
                            place: (entryIndex, false, index), pattern: pattern,
                            caseSensitive: caseSensitive, percentEncoded: percentEncoded,
                            apps: apps))
                }
            } else {
                let (caseSensitive, percentEncoded) = flags(nil)
                for (index, legacy) in (details.paths ?? []).enumerated() {
                    rules.append(
                        EffectiveRule(
                            place: (entryIndex, true, index),
                            pattern: AssociationImporter.rule(fromLegacyPath: legacy),
                            caseSensitive: caseSensitive, percentEncoded: percentEncoded,
                            apps: apps))
                }
            }
        }
        return rules
    }
}

extension StringProtocol {
    /// Whether this pattern matches everything it is compared with: only `*` (spec §2.1).
    var isCatchAll: Bool { !isEmpty && allSatisfy { $0 == "*" } }

    /// Whether this pattern uses a substitution variable: holds `$(` (spec §2.5). Over the UTF-8 bytes: the lint
    /// asks it of every rule at every load.
    var usesVariable: Bool {
        // In place where the bytes are contiguous (a native string's): the view's iterator checked every index.
        func holdsMarker(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
            bytes.indices.dropFirst().contains { bytes[$0 - 1] == UInt8(ascii: "$") && bytes[$0] == UInt8(ascii: "(") }
        }
        return utf8.withContiguousStorageIfAvailable(holdsMarker) ?? Array(utf8).withUnsafeBufferPointer(holdsMarker)
    }
}
