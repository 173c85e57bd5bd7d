extension DomainDiff {
    /// Counts per kind, in the order of ``URLChange/Kind``: `1 web-to-app, 2 app-to-web`.
    public var kindCounts: String {
        URLChange.Kind.allCases.compactMap { kind in
            let count = changes.filter { $0.kind == kind }.count
            return count == 0 ? nil : "\(count) \(kind.rawValue)"
        }.joined(separator: ", ")
    }

    /// The most UTF-8 bytes of one value (a setting's, a service's, a class's description) a ``summary`` quotes.
    public static let maximumQuotedBytes = 200

    /// One line for a log: the counts and the first classes, or that no URL changes its answer; first
    /// why not every URL was compared (``notCompared``), when that is so. Each value it quotes is cut to
    /// ``maximumQuotedBytes`` (``UTF8Bound/cut(_:bytes:)``), whatever its size in the site.json.
    public var summary: String {
        let quoted = { (value: String) in UTF8Bound.cut(value, bytes: Self.maximumQuotedBytes) }
        var parts: [String] = []
        if let notCompared { parts.append(notCompared) }
        if changes.isEmpty {
            if isComplete { parts.append("no URL changes its answer") }
        } else {
            let first = changes.prefix(3).map { "\($0.kind.rawValue) \($0.platform): \(quoted($0.description))" }
            parts.append(
                "\(changes.count) class\(changes.count == 1 ? "" : "es") of URLs change (\(kindCounts)): "
                    + first.joined(separator: "; ") + (changes.count > 3 ? "; …" : ""))
        }
        for service in services {
            parts.append(
                "\(service.service) "
                    + (service.added.map { "+\(quoted($0))" } + service.removed.map { "-\(quoted($0))" })
                    .joined(separator: " "))
        }
        for setting in settings {
            parts.append("\(setting.name) \(setting.old.map(quoted) ?? "-") -> \(setting.new.map(quoted) ?? "-")")
        }
        return parts.joined(separator: "; ")
    }

    /// The report `aasa-server diff` prints for the domain.
    public var report: String {
        guard hasChanges || !notes.isEmpty else { return "\(domain): no URL changes its answer" }
        var counted = "\(changes.count) class\(changes.count == 1 ? "" : "es") of URLs change (\(kindCounts))"
        if changes.isEmpty { counted = "no URL changes its answer" }
        if let notCompared { counted = notCompared + (changes.isEmpty ? "" : "; " + counted) }
        var lines = ["\(domain): " + counted]
        for change in changes {
            lines.append("  \(change.kind.rawValue)  \(change.platform)  \(change.description)")
            lines.append("    was:      \(change.opensBefore)")
            lines.append("    now:      \(change.opensNow)")
            lines.append("    old rule: \(change.oldRule?.description ?? "none matched")")
            lines.append("    new rule: \(change.newRule?.description ?? "none matches")")
            for (index, example) in change.examples.enumerated() {
                lines.append((index == 0 ? "    e.g.      " : "              ") + example)
            }
        }
        for service in services {
            lines.append(
                "  \(service.service): "
                    + (service.added.map { "+ \($0)" } + service.removed.map { "- \($0)" }).joined(separator: ", "))
        }
        for setting in settings {
            lines.append("  \(setting.name): \(setting.old ?? "(none)") -> \(setting.new ?? "(none)")")
        }
        lines += notes.map { "  note: \($0)" }
        return lines.joined(separator: "\n")
    }

    /// The domain as one JSON object: `domain`, `status` (`changed` or `unchanged`), `complete` (`false` when the
    /// budget ran out: ``tooComplex``), `changes`, `services`, `settings` and `notes`.
    public var json: String {
        JSONWriter(style: .compact).string(
            .members(
                [
                    ("domain", .string(domain)), ("status", .string(hasChanges ? "changed" : "unchanged")),
                    ("complete", .bool(isComplete)),
                ] + members()))
    }

    /// `changes` (the first `limit`), `services`, `settings` and `notes`, as JSON members.
    public func members(limit: Int = .max) -> [(String, JSONValue)] {
        [
            ("changes", .array(changes.prefix(limit).map { JSONNode($0.jsonValue) })),
            ("services", .array(services.map { JSONNode($0.jsonValue) })),
            ("settings", .array(settings.map { JSONNode($0.jsonValue) })), ("notes", .strings(notes)),
        ]
    }
}
