extension AssociationFile {
    /// Service keys at the top level (spec §1.1; `authsrv` for Platform SSO, §9).
    static let serviceKeys = ["applinks", "webcredentials", "appclips", "activitycontinuation", "authsrv"]
    /// Keys of a `components[]` or `defaults` dictionary (spec §1.5).

    /// Parses and reads an Apple-format file from bytes: a signed (CMS) file, invalid JSON and structural
    /// problems are all reported with their position. Returns the parsed root too, to locate later findings.
    public static func parse(_ source: SourceText) -> (
        file: AssociationFile?, root: JSONNode?, diagnostics: [Diagnostic]
    ) {
        if let signed = ImportPipeline.signedFileProblem(source) { return (nil, nil, [signed]) }
        let parsed: JSONParser.Result
        do {
            parsed = try JSONParser().parse(source)
        } catch {
            return (nil, nil, [error])
        }
        let reader = JSONReader(source: source)
        let file = read(parsed.root, reader: reader)
        let diagnostics = parsed.diagnostics + reader.diagnostics
        return (diagnostics.hasErrors ? nil : file, parsed.root, diagnostics)
    }

    /// Reads an Apple-format file, reporting every structural problem with its position.
    ///
    /// Returns `nil` when the file is unusable; warnings and errors are in `reader.diagnostics`.
    /// The legacy dictionary form of `details` (spec §1.3) is accepted and turned into an array in
    /// sorted key order, since a JSON object has no order.
    public static func read(_ root: JSONNode, reader: JSONReader) -> AssociationFile? {
        let errorsBefore = reader.diagnostics.errors.count
        let inApplinks = "it belongs inside \"applinks\""
        guard
            let top = reader.object(
                root, path: .root, known: serviceKeys, what: "a JSON object",
                misplaced: [
                    "details": inApplinks,
                    "apps": "it belongs inside a service, e.g. \"webcredentials\": {\"apps\": […]}",
                ])
        else { return nil }
        var file = AssociationFile()
        if let member = top["applinks"] {
            file.applinks = readAppLinks(member.value, path: .root.key("applinks"), reader: reader)
        }
        file.webCredentials = readService(top["webcredentials"], name: "webcredentials", reader: reader)
        file.appClips = readService(top["appclips"], name: "appclips", reader: reader)
        file.activityContinuation = readService(
            top["activitycontinuation"], name: "activitycontinuation", reader: reader)
        file.authSrv = readService(top["authsrv"], name: "authsrv", reader: reader)
        if top.isEmpty, reader.diagnostics.errors.count == errorsBefore {
            reader.report(
                .error, rule: .noServices, "the file declares no service", at: root.offset, path: .root,
                hint: "add \"applinks\", \"webcredentials\", \"appclips\", \"activitycontinuation\" or \"authsrv\"")
        }
        return reader.diagnostics.errors.count == errorsBefore ? file : nil
    }

    private static func readService(_ member: JSONMember?, name: String, reader: JSONReader) -> [String]? {
        guard let member else { return nil }
        let path = KeyPath.root.key(name)
        guard let object = reader.object(member.value, path: path, known: ["apps"]) else { return nil }
        guard let apps = object["apps"] else {
            reader.report(
                .error, rule: .missingKey, "\"\(name)\" has no \"apps\" list", at: member.value.offset, path: path,
                hint: "write \"\(name)\": {\"apps\": [\"TEAMID.bundle.id\"]}")
            return nil
        }
        return reader.strings(apps.value, path: path.key("apps"))
    }

    private static func readAppLinks(_ node: JSONNode, path: @autoclosure () -> KeyPath, reader: JSONReader)
        -> AppLinks?
    {
        let topLevel = "move it out of \"applinks\" to the top level of the file"
        let inDetails = "it belongs inside a \"details\" entry"
        guard
            let object = reader.object(
                node, path: path(), known: ["apps", "details", "defaults", "substitutionVariables"],
                misplaced: [
                    "webcredentials": topLevel, "appclips": topLevel, "activitycontinuation": topLevel,
                    "authsrv": topLevel,
                    "components": inDetails, "paths": inDetails, "appID": inDetails, "appIDs": inDetails,
                ])
        else { return nil }
        var links = AppLinks()
        if let apps = object["apps"] {
            links.apps = reader.strings(apps.value, path: path().key("apps"))
            if let list = links.apps, !list.isEmpty {
                reader.report(
                    .warning, rule: .legacyAppsNotEmpty,
                    "\"applinks.apps\" must be an empty array; it lists \(list.count) value(s) that no iOS version reads",
                    at: apps.value.offset, path: path().key("apps"),
                    hint: "write \"apps\": [] and list apps in \"details\"")
            }
        }
        if let defaults = object["defaults"] {
            links.defaults = readComponent(defaults.value, path: path().key("defaults"), reader: reader)
        }
        if let variables = object["substitutionVariables"] {
            links.substitutionVariables = readVariables(
                variables.value, path: path().key("substitutionVariables"), reader: reader)
        }
        if let details = object["details"] {
            links.details = readDetailsList(details.value, path: path().key("details"), reader: reader)
        } else {
            reader.report(
                .warning, rule: .missingKey, "\"applinks\" has no \"details\": no URL opens an app", at: node.offset,
                path: path())
        }
        return links
    }

    private static func readVariables(_ node: JSONNode, path: @autoclosure () -> KeyPath, reader: JSONReader)
        -> [SubstitutionVariable]
    {
        guard case .object(let members) = node.value else {
            reader.report(
                .error, rule: .wrongType, "expected an object of string lists, found \(node.value.typeName)",
                at: node.offset, path: path())
            return []
        }
        return members.compactMap { member in
            guard let values = reader.strings(member.value, path: path().key(member.key)) else { return nil }
            return SubstitutionVariable(name: member.key, values: values)
        }
    }

    private static func readDetailsList(_ node: JSONNode, path: @autoclosure () -> KeyPath, reader: JSONReader)
        -> [AppLinkDetails]
    {
        switch node.value {
        case .array(let elements):
            return elements.enumerated().compactMap { index, element in
                readDetails(element, appID: nil, path: path().index(index), reader: reader)
            }
        case .object(let members):
            // Legacy iOS 9 beta form: {"TEAM.app": {"paths": [...]}} (spec §1.3). Order is undefined, so sort.
            reader.report(
                .warning, rule: .detailsDictionary,
                "\"details\" uses the iOS 9 beta dictionary form; the order between apps is undefined",
                at: node.offset, path: path(), hint: "use an array of {\"appID\": …, \"paths\": […]} entries")
            return members.sorted { $0.key < $1.key }.compactMap { member in
                readDetails(member.value, appID: member.key, path: path().key(member.key), reader: reader)
            }
        default:
            reader.report(
                .error, rule: .wrongType, "expected an array, found \(node.value.typeName)", at: node.offset,
                path: path())
            return []
        }
    }

    private static func readDetails(
        _ node: JSONNode, appID keyedAppID: String?, path: @autoclosure () -> KeyPath, reader: JSONReader
    )
        -> AppLinkDetails?
    {
        let known =
            keyedAppID == nil
            ? ["appID", "appIDs", "components", "paths", "defaults"] : ["paths", "components", "defaults"]
        guard let object = reader.object(node, path: path(), known: known) else { return nil }
        var details = AppLinkDetails(appID: keyedAppID)
        if let member = object["appID"] { details.appID = reader.string(member.value, path: path().key("appID")) }
        if let member = object["appIDs"] { details.appIDs = reader.strings(member.value, path: path().key("appIDs")) }
        if let member = object["paths"] { details.paths = reader.strings(member.value, path: path().key("paths")) }
        if let member = object["defaults"] {
            details.defaults = readComponent(member.value, path: path().key("defaults"), reader: reader)
        }
        if let member = object["components"], let elements = reader.array(member.value, path: path().key("components"))
        {
            details.components = elements.enumerated().compactMap { index, element in
                readComponent(element, path: path().key("components").index(index), reader: reader)
            }
        }
        return details
    }

    /// Reads one `components[]` entry or `defaults` dictionary.
    static func readComponent(_ node: JSONNode, path: @autoclosure () -> KeyPath, reader: JSONReader)
        -> ComponentPattern?
    {
        ComponentPattern.read(node, path: path(), reader: reader, spelling: .apple)
    }
}

extension AssociationFile {
    /// The compact bytes we serve, written from the file without a tree between.
    public var compactBytes: [UInt8] {
        var output = CompactJSONOutput()
        write(to: &output)
        return output.bytes
    }

    /// Writes the file as Apple's JSON, keys in a fixed order so output is deterministic (spec §3.5, §8 item 6).
    public func write(to output: inout some JSONOutput) {
        output.beginObject()
        if let applinks {
            output.key("applinks")
            applinks.write(to: &output)
        }
        for (key, apps) in appServices {
            guard let apps else { continue }
            output.key(key)
            output.beginObject()
            output.member("apps", strings: apps)
            output.endObject()
        }
        output.endObject()
    }
}

extension AppLinks {
    /// Writes `applinks` as Apple's JSON.
    public func write(to output: inout some JSONOutput) {
        output.beginObject()
        output.member("apps", strings: apps)
        if let defaults {
            output.key("defaults")
            defaults.write(to: &output, spelling: .apple)
        }
        if !substitutionVariables.isEmpty {
            output.key("substitutionVariables")
            output.beginObject()
            for variable in substitutionVariables { output.member(variable.name, strings: variable.values) }
            output.endObject()
        }
        output.key("details")
        output.beginArray()
        for entry in details { entry.write(to: &output) }
        output.endArray()
        output.endObject()
    }
}

extension AppLinkDetails {
    /// Writes one `details[]` entry as Apple's JSON.
    public func write(to output: inout some JSONOutput) {
        output.beginObject()
        output.member("appID", appID)
        output.member("appIDs", strings: appIDs)
        if let defaults {
            output.key("defaults")
            defaults.write(to: &output, spelling: .apple)
        }
        if let components {
            output.key("components")
            output.beginArray()
            for component in components { component.write(to: &output, spelling: .apple) }
            output.endArray()
        }
        output.member("paths", strings: paths)
        output.endObject()
    }
}

extension Rule {
    /// Reported by `AssociationFile`.
    public static let detailsDictionary = Rule(
        "details-dictionary", .warning,
        "An Apple file's `details` uses the iOS 9 beta dictionary form, in which the order between apps is undefined (`check --aasa`, `import`)."
    )

    /// Reported by `AssociationFile`.
    public static let legacyAppsNotEmpty = Rule(
        "legacy-apps-not-empty", .warning,
        "An Apple file's `applinks.apps` is not an empty array; no iOS version reads it (`check --aasa`, `import`).")

    /// Reported by `AssociationFile`.
    public static let noServices = Rule(
        "no-services", .error,
        "An Apple file declares no service (`applinks`, `webcredentials`, `appclips`, `activitycontinuation`, `authsrv`)."
    )

    /// The rules of Apple-format files read by `check --aasa` and `import`, in the order of the docs table: their part
    /// of `Rule.all`.
    package static let appleFileRules: [Rule] = [
        .detailsDictionary,
        .legacyAppsNotEmpty,
        .noServices,
        .emptyComponents,
        .defaultsPattern,
        .invalidVariableName,
        .variableValueContainsVariable,
        .invalidVariableUsed,
        .signedFile,
        .legacyAppIDs,
    ]
}
