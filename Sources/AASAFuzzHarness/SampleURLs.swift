public import AASACore

/// URLs made from a file's own patterns, so that differential checks compare answers on URLs that match
/// (and nearly match) rules rather than only on random text that matches nothing.
public enum SampleURLs {
    /// The host every sample URL uses.
    public static let host = "fuzz.example"

    /// Up to `limit` URLs: each rule's patterns with wildcards filled in two ways (`*` empty and `*` as
    /// `x/y`), plus a few fixed ones.
    public static func make(for file: AssociationFile, limit: Int = 48) -> [String] {
        var urls = ["https://\(host)/", "https://\(host)/a/b?c=d#e", "/"]
        guard let applinks = file.applinks else { return urls }
        let variables = Dictionary(
            applinks.substitutionVariables.map { ($0.name, $0.values) }, uniquingKeysWith: { first, _ in first })
        var components: [ComponentPattern] = applinks.defaults.map { [$0] } ?? []
        for details in applinks.details {
            components += details.defaults.map { [$0] } ?? []
            components += details.components ?? []
            components += (details.paths ?? []).map {
                ComponentPattern(path: $0.hasPrefix("NOT ") ? String($0.dropFirst(4)) : $0)
            }
        }
        for component in components {
            for star in ["", "x/y"] where urls.count < limit {
                func fill(_ pattern: String) -> String { instantiate(pattern, star: star, variables: variables) }
                var url = "https://\(host)"
                let path = component.path.map(fill) ?? "/p"
                url += path.hasPrefix("/") ? path : "/" + path
                switch component.query {
                case .whole(let pattern): url += "?" + fill(pattern)
                case .items(let items):
                    url += "?" + items.map { "\($0.name)=\(fill($0.pattern))" }.joined(separator: "&")
                case nil: break
                }
                if let fragment = component.fragment { url += "#" + fill(fragment) }
                urls.append(url)
            }
        }
        return urls
    }

    /// `pattern` with `*` replaced by `star`, `?` by `q`, and `$(name)` by one of its values (or a sample of a
    /// built-in), so the text usually matches the pattern.
    static func instantiate(_ pattern: String, star: String, variables: [String: [String]]) -> String {
        let builtIn = [
            "alpha": "a", "upper": "A", "lower": "a", "alnum": "0", "digit": "7", "xdigit": "f", "region": "US",
            "lang": "en",
        ]
        var result = ""
        var rest = Substring(pattern)
        while let first = rest.first {
            if rest.hasPrefix("$("), let close = rest.firstIndex(of: ")") {
                let name = String(rest[rest.index(rest.startIndex, offsetBy: 2)..<close])
                let value = variables[name]?.first ?? builtIn[name] ?? "v"
                result += value.map { $0 == "*" ? star : $0 == "?" ? "q" : String($0) }.joined()
                rest = rest[rest.index(after: close)...]
                continue
            }
            switch first {
            case "*": result += star
            case "?": result += "q"
            default: result.append(first)
            }
            rest = rest.dropFirst()
        }
        return result
    }
}
