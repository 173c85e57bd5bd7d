/// Renders a rule the way it is written in the file, for results and near misses.
///
/// The model does not keep the file's key order, so component keys come in the order Apple documents them
/// (spec §1.5): `/`, `?`, `#`, `exclude`, `caseSensitive`, `percentEncoded`, `comment`.
enum RuleText {
    /// `{"/": "/buy/*", "exclude": true}`.
    static func component(_ component: ComponentPattern) -> String {
        var parts: [String] = []
        if let path = component.path { parts.append("\"/\": \(JSONText.quote(path))") }
        switch component.query {
        case .whole(let pattern):
            parts.append("\"?\": \(JSONText.quote(pattern))")
        case .items(let items):
            let body = items.map { "\(JSONText.quote($0.name)): \(JSONText.quote($0.pattern))" }
            parts.append("\"?\": {\(body.joined(separator: ", "))}")
        case nil:
            break
        }
        if let fragment = component.fragment { parts.append("\"#\": \(JSONText.quote(fragment))") }
        if let exclude = component.exclude { parts.append("\"exclude\": \(exclude)") }
        if let value = component.caseSensitive { parts.append("\"caseSensitive\": \(value)") }
        if let value = component.percentEncoded { parts.append("\"percentEncoded\": \(value)") }
        if let comment = component.comment { parts.append("\"comment\": \(JSONText.quote(comment))") }
        return "{" + parts.joined(separator: ", ") + "}"
    }

    /// `"NOT /help/*"`.
    static func path(_ entry: String) -> String {
        JSONText.quote(entry)
    }
}
