public import AASACore

/// The matcher fuzz target's input: a small line language that builds an ``AssociationFile`` and the URLs
/// to match, so that every byte the fuzzer changes lands in a pattern, a setting or a URL instead of
/// breaking JSON syntax. Every input means something: unknown lines are ignored.
///
/// ```
/// var food = pizza          one value of substitution variable `food` (repeat the line for more)
/// defaults                  what follows sets applinks.defaults (before any app) or the app's defaults
/// app ABCDE12345.com.x      a new details entry with appIDs and appID (`appids`/`appid`: only one of them)
/// components                the entry has a components array, even if no rule follows (spec §2.7)
/// rule                      a new component in the current entry; what follows sets it
/// / /buy/*                  the path pattern
/// ? ref=*                   the whole-query pattern
/// & name = ????             one query-dictionary item (later lines with the same name replace it)
/// # top                     the fragment pattern
/// exclude                   "exclude": true      (also `include` for false)
/// nocase                    "caseSensitive": false   (`case` for true)
/// decoded                   "percentEncoded": false  (`encoded` for true)
/// path NOT /help/*          one legacy `paths` entry of the current entry
/// url https://x.example/y   a URL to match (without any, URLs are made from the patterns)
/// ```
public struct MatchScript: Sendable, Hashable {
    /// The file the script describes.
    public var file: AssociationFile
    /// The URLs it lists, in order.
    public var urls: [String]

    /// The app a rule gets when the script names none before it.
    public static let defaultAppID = "ABCDE12345.com.example.fuzz"

    /// Reads a script; any bytes are accepted (invalid UTF-8 is repaired).
    public init(_ bytes: some Collection<UInt8>) {
        var builder = Builder()
        for line in String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline) {
            builder.apply(Substring(line))
        }
        file = builder.file
        urls = builder.urls
    }

    private struct Builder {
        enum Target {
            case domainDefaults
            case appDefaults
            case rule
            case none
        }

        var variables: [SubstitutionVariable] = []
        var domainDefaults: ComponentPattern?
        var details: [AppLinkDetails] = []
        var target = Target.none
        var urls: [String] = []

        var file: AssociationFile {
            AssociationFile(
                applinks: AppLinks(
                    apps: [], details: details, defaults: domainDefaults, substitutionVariables: variables))
        }

        mutating func apply(_ line: Substring) {
            let (word, rest) = Self.split(line)
            switch word {
            case "var":
                let parts = rest.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = String(parts[0].trimmingSpaces)
                let value = parts.count > 1 ? String(parts[1].trimmingSpaces) : ""
                // A JSON object cannot hold a name twice, so values of one name are one variable.
                if let index = variables.firstIndex(where: { $0.name == name }) {
                    variables[index].values.append(value)
                } else {
                    variables.append(SubstitutionVariable(name: name, values: [value]))
                }
            case "app": startEntry(AppLinkDetails(appID: String(rest), appIDs: [String(rest)]))
            case "appids": startEntry(AppLinkDetails(appIDs: rest.split(separator: " ").map(String.init)))
            case "appid": startEntry(AppLinkDetails(appID: String(rest)))
            case "defaults":
                if details.isEmpty {
                    domainDefaults = domainDefaults ?? ComponentPattern()
                    target = .domainDefaults
                } else {
                    details[details.count - 1].defaults = details[details.count - 1].defaults ?? ComponentPattern()
                    target = .appDefaults
                }
            case "components":
                ensureEntry()
                details[details.count - 1].components = details[details.count - 1].components ?? []
            case "rule": startRule()
            case "path":
                ensureEntry()
                details[details.count - 1].paths = (details[details.count - 1].paths ?? []) + [String(rest)]
            case "url": urls.append(String(rest))
            case "/": edit { $0.path = String(rest) }
            case "?": edit { $0.query = .whole(String(rest)) }
            case "#": edit { $0.fragment = String(rest) }
            case "&":
                let parts = rest.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let item = QueryItemPattern(
                    name: String(parts[0].trimmingSpaces),
                    pattern: parts.count > 1 ? String(parts[1].trimmingSpaces) : "")
                edit { component in
                    var items: [QueryItemPattern] = []
                    if case .items(let existing) = component.query { items = existing }
                    // One name once, as in a JSON object.
                    if let index = items.firstIndex(where: { $0.name == item.name }) {
                        items[index] = item
                    } else {
                        items.append(item)
                    }
                    component.query = .items(items)
                }
            case "exclude": edit { $0.exclude = true }
            case "include": edit { $0.exclude = false }
            case "nocase": edit { $0.caseSensitive = false }
            case "case": edit { $0.caseSensitive = true }
            case "decoded": edit { $0.percentEncoded = false }
            case "encoded": edit { $0.percentEncoded = true }
            default: break
            }
        }

        /// The first word and the rest after one space (the rest keeps further spaces: patterns may have them).
        static func split(_ line: Substring) -> (Substring, Substring) {
            guard let space = line.firstIndex(of: " ") else { return (line, "") }
            return (line[..<space], line[line.index(after: space)...])
        }

        mutating func startEntry(_ entry: AppLinkDetails) {
            details.append(entry)
            target = .none
        }

        mutating func ensureEntry() {
            if details.isEmpty {
                startEntry(AppLinkDetails(appID: MatchScript.defaultAppID, appIDs: [MatchScript.defaultAppID]))
            }
        }

        mutating func startRule() {
            ensureEntry()
            details[details.count - 1].components = (details[details.count - 1].components ?? []) + [ComponentPattern()]
            target = .rule
        }

        mutating func edit(_ change: (inout ComponentPattern) -> Void) {
            switch target {
            case .domainDefaults:
                var defaults = domainDefaults ?? ComponentPattern()
                change(&defaults)
                domainDefaults = defaults
            case .appDefaults:
                var defaults = details[details.count - 1].defaults ?? ComponentPattern()
                change(&defaults)
                details[details.count - 1].defaults = defaults
            case .rule:
                let last = details.count - 1
                var components = details[last].components ?? [ComponentPattern()]
                if components.isEmpty { components.append(ComponentPattern()) }
                change(&components[components.count - 1])
                details[last].components = components
            case .none:
                startRule()
                edit(change)
            }
        }
    }
}

extension Substring {
    /// Without spaces at either end.
    fileprivate var trimmingSpaces: Substring {
        guard let start = firstIndex(where: { $0 != " " }), let last = lastIndex(where: { $0 != " " }) else {
            return self[endIndex...]
        }
        return self[start...last]
    }
}
