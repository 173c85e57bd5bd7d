import AASACore

/// JSON values compared as values: object members in any order, numbers by value (`1` and `1.0` alike).
enum JSONEquivalence {
    /// `value` with every object's members sorted by key, so equal values are equal `JSONValue`s.
    static func canonical(_ value: JSONValue) -> JSONValue {
        switch value {
        case .object(let members):
            let sorted = members.map { JSONMember(key: $0.key, value: JSONNode(canonical($0.value.value))) }
                .sorted { $0.key < $1.key }
            return .object(sorted)
        case .array(let elements):
            return .array(elements.map { JSONNode(canonical($0.value)) })
        default:
            return value
        }
    }

    static func equivalent(_ a: JSONValue, _ b: JSONValue) -> Bool { canonical(a) == canonical(b) }

    /// The compact text of `value` in canonical form, for sets and messages.
    static func text(_ value: JSONValue) -> String { JSONWriter(style: .compact).string(canonical(value)) }

    /// How an Apple-format copy differs from what is served, by service and app entry: `+` only in the copy,
    /// `-` only in what is served.
    static func associationDifferences(served: JSONValue, copy: JSONValue) -> [String] {
        func members(_ value: JSONValue) -> [String: JSONValue] {
            guard case .object(let list) = value else { return [:] }
            return Dictionary(list.map { ($0.key, $0.value.value) }, uniquingKeysWith: { first, _ in first })
        }
        let ours = members(served)
        let theirs = members(copy)
        var differences: [String] = []
        for key in Set(ours.keys).union(theirs.keys).sorted() {
            switch (ours[key], theirs[key]) {
            case (nil, _?): differences.append("+\(key): the copy declares it, the served file does not")
            case (_?, nil): differences.append("-\(key): the served file declares it, the copy does not")
            case (let mine?, let other?) where !equivalent(mine, other):
                if key == "applinks" {
                    differences += entries(mine, other)
                } else {
                    let old = Set(apps(other))
                    let new = Set(apps(mine))
                    let change =
                        new.subtracting(old).sorted().map { "-\($0)" } + old.subtracting(new).sorted().map { "+\($0)" }
                    differences.append("\(key).apps: " + (change.isEmpty ? "differs" : change.joined(separator: " ")))
                }
            default: break
            }
        }
        return differences
    }

    private static func apps(_ service: JSONValue) -> [String] {
        (service[member: "apps"]?.arrayValue ?? []).compactMap(\.stringValue)
    }

    /// The `applinks.details` entries that differ, named by their apps.
    private static func entries(_ served: JSONValue, _ copy: JSONValue) -> [String] {
        func ordered(_ applinks: JSONValue) -> [String] {
            guard case .object(let members) = applinks,
                case .array(let list)? = members.first(where: { $0.key == "details" })?.value.value
            else { return [] }
            return list.map { text($0.value) }
        }
        func details(_ applinks: JSONValue) -> [String: String] {
            guard case .object(let members) = applinks,
                case .array(let list)? = members.first(where: { $0.key == "details" })?.value.value
            else { return [:] }
            var result: [String: String] = [:]
            for entry in list {
                guard case .object(let fields) = entry.value else { continue }
                var ids: [String] = []
                for field in fields where field.key == "appIDs" || field.key == "appID" {
                    switch field.value.value {
                    case .string(let id): ids.append(id)
                    case .array(let list):
                        ids += list.compactMap { if case .string(let t) = $0.value { t } else { nil } }
                    default: break
                    }
                }
                var key = Array(Set(ids)).sorted().joined(separator: ",")
                // Two entries for the same apps are told apart by their order.
                var occurrence = 2
                while result[key] != nil {
                    key = Array(Set(ids)).sorted().joined(separator: ",") + " (entry \(occurrence))"
                    occurrence += 1
                }
                result[key] = text(entry.value)
            }
            return result
        }
        let ours = details(served)
        let theirs = details(copy)
        var differences: [String] = []
        for apps in Set(ours.keys).union(theirs.keys).sorted() {
            switch (ours[apps], theirs[apps]) {
            case (nil, _?): differences.append("+applinks entry for \(apps)")
            case (_?, nil): differences.append("-applinks entry for \(apps)")
            case (let mine?, let other?) where mine != other: differences.append("applinks rules of \(apps) differ")
            default: break
            }
        }
        if differences.isEmpty {
            let (mine, other) = (ordered(served), ordered(copy))
            differences.append(
                mine != other && mine.sorted() == other.sorted()
                    ? "applinks entries are in another order (the first matching entry decides which app opens a URL)"
                    : "applinks settings (defaults, substitution variables) differ")
        }
        return differences
    }
}
