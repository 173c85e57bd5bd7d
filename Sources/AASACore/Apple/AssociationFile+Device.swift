extension AssociationFile {
    /// The file as iOS reads it (spec §1, §2 and §9): whatever is valid JSON gets an answer.
    ///
    /// Unknown keys, misspelled ones included, are ignored at every level, so a component with no known key matches
    /// every URL; an entry without an app is skipped (by ``URLMatcher``); a file without `applinks` matches nothing.
    /// A `?` dictionary holding a value that is not a string is discarded whole, so the component matches any query
    /// (§9, observed with swcutil). Where a known key has a type whose effect the spec does not record (`"/": 5`),
    /// nothing is guessed: that component (or list) is skipped and a note says iOS's behaviour is not documented.
    ///
    /// - Returns: the file to match, and a note for each place read that way.
    public static func readAsDevice(_ root: JSONValue) -> (file: AssociationFile, notes: [String]) {
        var reader = DeviceReader()
        let file = reader.file(root)
        return (file, reader.notes)
    }
}

/// The lenient walk behind ``AssociationFile/readAsDevice(_:)``.
private struct DeviceReader {
    var notes: [String] = []

    /// The note for a known key whose wrong type iOS's documented behaviour does not cover.
    mutating func undocumented(_ path: String, _ value: JSONValue, expected: String, skipped: String) {
        notes.append(
            "\(path) is \(value.typeName), not \(expected): iOS's behaviour here is not documented, so \(skipped) is skipped"
        )
    }

    mutating func file(_ root: JSONValue) -> AssociationFile {
        guard case .object(let members) = root else {
            notes.append("the file is \(root.typeName), not an object: it declares no service, and no URL matches")
            return AssociationFile()
        }
        var file = AssociationFile()
        for member in members where member.key == "applinks" {
            file.applinks = appLinks(member.value.value)
            break
        }
        if file.applinks == nil { notes.append("the file has no usable \"applinks\": no URL matches") }
        file.webCredentials = apps(members, "webcredentials")
        file.appClips = apps(members, "appclips")
        file.activityContinuation = apps(members, "activitycontinuation")
        file.authSrv = apps(members, "authsrv")
        return file
    }

    func apps(_ members: [JSONMember], _ service: String) -> [String]? {
        guard let value = members.first(where: { $0.key == service })?.value.value,
            case .array(let apps)? = value[member: "apps"]
        else { return nil }
        return apps.compactMap { $0.value.stringValue }
    }

    mutating func appLinks(_ value: JSONValue) -> AppLinks? {
        guard case .object = value else {
            undocumented("applinks", value, expected: "an object", skipped: "\"applinks\"")
            return nil
        }
        var links = AppLinks()
        if let defaults = value[member: "defaults"] {
            links.defaults = component(defaults, path: "applinks.defaults")
        }
        if let variables = value[member: "substitutionVariables"] {
            if case .object(let members) = variables {
                for member in members {
                    guard case .array(let values) = member.value.value else {
                        undocumented(
                            "applinks.substitutionVariables.\(member.key)", member.value.value,
                            expected: "a list of strings", skipped: "the variable")
                        continue
                    }
                    links.substitutionVariables.append(
                        SubstitutionVariable(name: member.key, values: values.compactMap { $0.value.stringValue }))
                }
            } else {
                undocumented(
                    "applinks.substitutionVariables", variables, expected: "an object",
                    skipped: "\"substitutionVariables\"")
            }
        }
        switch value[member: "details"] {
        case .array(let elements)?:
            links.details = elements.enumerated().compactMap { index, element in
                details(element.value, appID: nil, path: "applinks.details[\(index)]")
            }
        case .object(let members)?:
            // The iOS 9 beta dictionary form (spec §1.3): keys are app IDs, in no defined order.
            links.details = members.sorted { $0.key < $1.key }.compactMap { member in
                details(member.value.value, appID: member.key, path: "applinks.details.\(member.key)")
            }
        case let other?:
            undocumented("applinks.details", other, expected: "an array", skipped: "\"details\"")
        case nil:
            break
        }
        return links
    }

    mutating func details(_ value: JSONValue, appID keyed: String?, path: String) -> AppLinkDetails? {
        guard case .object = value else {
            undocumented(path, value, expected: "an object", skipped: "the entry")
            return nil
        }
        var entry = AppLinkDetails(appID: keyed)
        if keyed == nil, let appID = value[member: "appID"]?.stringValue { entry.appID = appID }
        if keyed == nil, case .array(let ids)? = value[member: "appIDs"] {
            entry.appIDs = ids.compactMap { $0.value.stringValue }
        }
        if let defaults = value[member: "defaults"] { entry.defaults = component(defaults, path: path + ".defaults") }
        switch value[member: "components"] {
        case .array(let elements)?:
            // A component that cannot be read keeps its place, so the others keep their positions in messages.
            entry.components = elements.enumerated().map { index, element in
                component(element.value, path: path + ".components[\(index)]") ?? .unreadable
            }
        case let other?:
            undocumented(path + ".components", other, expected: "an array", skipped: "\"components\"")
        case nil:
            break
        }
        switch value[member: "paths"] {
        case .array(let elements)?:
            entry.paths = elements.enumerated().compactMap { index, element in
                guard let text = element.value.stringValue else {
                    undocumented(
                        path + ".paths[\(index)]", element.value, expected: "a string", skipped: "the path")
                    return nil
                }
                return text
            }
        case let other?:
            undocumented(path + ".paths", other, expected: "an array", skipped: "\"paths\"")
        case nil:
            break
        }
        return entry
    }

    /// A component or `defaults`: known keys read, unknown ones ignored; `nil` (with a note) when a known key has
    /// a type whose effect is not documented.
    mutating func component(_ value: JSONValue, path: String) -> ComponentPattern? {
        guard case .object(let members) = value else {
            undocumented(path, value, expected: "an object", skipped: "it")
            return nil
        }
        var component = ComponentPattern()
        for member in members {
            let key = path + "." + member.key
            let value = member.value.value
            switch member.key {
            case "/", "#":
                guard let text = value.stringValue else {
                    undocumented(key, value, expected: "a string", skipped: "the component")
                    return nil
                }
                if member.key == "/" { component.path = text } else { component.fragment = text }
            case "?":
                switch value {
                case .string(let text): component.query = .whole(text)
                case .object(let items):
                    let patterns = items.compactMap { item in
                        item.value.value.stringValue.map { QueryItemPattern(name: item.key, pattern: $0) }
                    }
                    if patterns.count == items.count {
                        component.query = .items(patterns)
                    } else {
                        notes.append(
                            "\(key) holds a value that is not a string: iOS discards the whole dictionary, so the component matches any query (spec §9)"
                        )
                    }
                default:
                    undocumented(key, value, expected: "a string or an object", skipped: "the component")
                    return nil
                }
            case "exclude", "caseSensitive", "percentEncoded":
                guard case .bool(let flag) = value else {
                    undocumented(key, value, expected: "a boolean", skipped: "the component")
                    return nil
                }
                switch member.key {
                case "exclude": component.exclude = flag
                case "caseSensitive": component.caseSensitive = flag
                default: component.percentEncoded = flag
                }
            case "comment":
                component.comment = value.stringValue
            default:
                continue  // unknown keys are ignored (spec §9)
            }
        }
        return component
    }
}

extension ComponentPattern {
    /// A placeholder for a component a device cannot read: it keeps its place and never matches.
    fileprivate static var unreadable: ComponentPattern {
        var component = ComponentPattern()
        component.isUnreadable = true
        return component
    }
}
