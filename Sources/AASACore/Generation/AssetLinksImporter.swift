/// `aasa-server import assetlinks.json`: Google's statement list → the `android` section of a site config.
///
/// `android_app` statements become apps (statements for the same package and permissions are merged);
/// what the android section cannot say (web targets, `include` statements, relations other than App
/// Links and sign-in sharing) is left out with a warning naming it, and anything that would make Android
/// reject an app (malformed or placeholder fingerprints, a misspelt fingerprint key) is an error.
public struct AssetLinksImporter: Sendable {
    /// The result of an import.
    public struct Output: Sendable {
        /// The android section, when there are no errors.
        public var android: AndroidConfig?
        /// Everything found, located in the imported file.
        public var diagnostics: [Diagnostic]
    }

    /// Creates an importer.
    public init() {}

    /// Whether `source` looks like an assetlinks file: a JSON array, or one object with `relation`/`target`
    /// (the first significant character, skipping whitespace, a BOM and `//` or `/* */` comments).
    public static func looksLikeAssetLinks(_ source: SourceText) -> Bool {
        let bytes = source.bytes
        var index = 0
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            case UInt8(ascii: "/") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "/"):
                while index < bytes.count && bytes[index] != 0x0A { index += 1 }
            case UInt8(ascii: "/") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "*"):
                index += 2
                while index + 1 < bytes.count
                    && !(bytes[index] == UInt8(ascii: "*") && bytes[index + 1] == UInt8(ascii: "/"))
                {
                    index += 1
                }
                index += 2
            case UInt8(ascii: "["): return true
            case UInt8(ascii: "{"):
                guard let parsed = try? JSONParser().parse(source), case .object(let members) = parsed.root.value else {
                    return false
                }
                return members.contains { $0.key == "relation" || $0.key == "target" }
            default: return false
            }
        }
        return false
    }

    /// Imports `source`. `webCredentials` says whether the target domain lists webCredentials apps, so
    /// `loginCredentials` is written only where it differs from the default that follows from them.
    public func run(_ source: SourceText, webCredentials: Bool) -> Output {
        let parsed: JSONParser.Result
        do {
            parsed = try JSONParser().parse(source)
        } catch {
            return Output(diagnostics: [error])
        }
        let reader = JSONReader(source: source)
        for diagnostic in parsed.diagnostics { reader.report(diagnostic) }
        let root = parsed.root
        var statements: [(JSONNode, KeyPath)] = []
        switch root.value {
        case .array(let elements):
            statements = elements.enumerated().map { ($0.element, KeyPath.root.index($0.offset)) }
        case .object:
            reader.report(
                .warning, rule: .assetLinksSingleObject,
                "the file is one statement, not a list; Android expects a JSON array of statements",
                at: root.offset, path: .root, hint: "the generated assetlinks.json is a list ([…])")
            statements = [(root, .root)]
        default:
            reader.report(
                .error, rule: .assetLinksStructure,
                "expected a JSON array of statements, found \(root.value.typeName)", at: root.offset, path: .root,
                hint: "assetlinks.json is [{\"relation\": […], \"target\": {…}}, …]")
        }
        if case .array(let elements) = root.value, elements.isEmpty {
            reader.report(
                .error, rule: .assetLinksEmpty, "the file has no statements: nothing to import", at: root.offset,
                path: .root, hint: "an empty list delegates nothing; add the android section by hand instead")
        }
        var apps: [AndroidApp] = []
        for (node, path) in statements {
            guard let app = readStatement(node, path: path, reader: reader, webCredentials: webCredentials) else {
                continue
            }
            // Statements for the same package and permissions are one app with several fingerprints.
            if let same = apps.firstIndex(where: {
                $0.package == app.package && $0.appLinks == app.appLinks
                    && $0.loginCredentials == app.loginCredentials && $0.rules == app.rules
            }) {
                for fingerprint in app.fingerprints where !apps[same].fingerprints.contains(fingerprint) {
                    apps[same].fingerprints.append(fingerprint)
                }
            } else {
                apps.append(app)
            }
        }
        if apps.isEmpty && !reader.diagnostics.hasErrors && !statements.isEmpty {
            reader.report(
                .error, rule: .assetLinksNoApp,
                "no statement delegates to an Android app, so there is nothing to import",
                at: root.offset, path: .root,
                hint:
                    "aasa-server's android section lists android_app targets; the warnings above say what was left out")
        }
        let diagnostics = reader.diagnostics
        return Output(android: diagnostics.hasErrors ? nil : AndroidConfig(apps: apps), diagnostics: diagnostics)
    }

    /// One statement as an Android app of the android section, or `nil` (with the reason reported) when it delegates
    /// to nothing the section can hold.
    private func readStatement(_ node: JSONNode, path: KeyPath, reader: JSONReader, webCredentials: Bool)
        -> AndroidApp?
    {
        guard let object = statementMembers(node, path: path, reader: reader) else { return nil }
        guard let relationMember = object["relation"], let targetMember = object["target"] else {
            reader.report(
                .error, rule: .missingKey, "a statement needs \"relation\" and \"target\"", at: node.offset,
                path: path)
            return nil
        }
        let relations = readRelations(relationMember, path: path.key("relation"), reader: reader)
        guard let (package, fingerprints) = readTarget(targetMember, path: path.key("target"), reader: reader),
            relations.contains(where: Self.supportedRelations.contains)
        else { return nil }
        var app = AndroidApp(package: package, fingerprints: fingerprints)
        app.appLinks = relations.contains(AssetLinksGenerator.handleAllURLs)
        let login = relations.contains(AssetLinksGenerator.getLoginCredentials)
        app.loginCredentials = login == webCredentials ? nil : login
        if let extensions = object["relation_extensions"] {
            app.rules = readExtensions(extensions.value, path: path.key("relation_extensions"), reader: reader)
        }
        return app
    }

    /// The relations the android section holds: App Links and sign-in sharing.
    private static let supportedRelations = [
        AssetLinksGenerator.handleAllURLs, AssetLinksGenerator.getLoginCredentials,
    ]

    /// A statement's `relation`, `target` and `relation_extensions`; `nil` for an `include` statement (not fetched)
    /// or one that is not an object. Other keys Android ignores are reported and left out.
    private func statementMembers(_ node: JSONNode, path: KeyPath, reader: JSONReader) -> JSONObject? {
        guard case .object(let members) = node.value else {
            reader.report(
                .error, rule: .wrongType, "expected a statement object, found \(node.value.typeName)",
                at: node.offset, path: path)
            return nil
        }
        if let include = members.first(where: { $0.key == "include" }) {
            let target = if case .string(let url) = include.value.value { " (\(url))" } else { "" }
            reader.report(
                .warning, rule: .assetLinksInclude,
                "include statement\(target) left out: aasa-server does not fetch other statement lists",
                at: include.keyOffset, path: path.key("include"),
                hint: "copy the included file's android_app statements into this file and import again")
            return nil
        }
        for member in members where !["relation", "target", "relation_extensions"].contains(member.key) {
            reader.report(
                .warning, rule: .assetLinksUnknownKey,
                "Android ignores \"\(member.key)\" in a statement, so it is not imported", at: member.keyOffset,
                path: path.key(member.key),
                hint: member.key == "paths"
                    ? "Android 15 dynamic rules go in the app's \"rules\" (relation_extensions in assetlinks.json)"
                    : "remove it")
        }
        guard
            let object = reader.object(
                JSONNode(
                    .object(members.filter { ["relation", "target", "relation_extensions"].contains($0.key) }),
                    offset: node.offset),
                path: path, known: ["relation", "target", "relation_extensions"])
        else { return nil }
        return object
    }

    /// The relation strings of a statement; each one the android section cannot hold is reported as left out.
    private func readRelations(_ relationMember: JSONMember, path: KeyPath, reader: JSONReader) -> [String] {
        let relations = reader.strings(relationMember.value, path: path) ?? []
        for (index, relation) in relations.enumerated() where !Self.supportedRelations.contains(relation) {
            var offset = relationMember.value.offset
            if case .array(let items) = relationMember.value.value, items.indices.contains(index) {
                offset = items[index].offset
            }
            reader.report(
                .warning, rule: .assetLinksRelation,
                "relation \"\(relation)\" left out: the android section supports App Links (handle_all_urls) and "
                    + "sign-in sharing (get_login_creds)",
                at: offset,
                path: path.index(index),
                hint: "serve this statement from elsewhere if you still need it")
        }
        return relations
    }

    /// The Android app a statement's target names, with its fingerprints; `nil` for a web target or a target
    /// without a usable package.
    private func readTarget(_ targetMember: JSONMember, path targetPath: KeyPath, reader: JSONReader)
        -> (package: String, fingerprints: [String])?
    {
        guard case .object(let targetMembers) = targetMember.value.value else {
            reader.report(
                .error, rule: .wrongType, "expected a target object, found \(targetMember.value.value.typeName)",
                at: targetMember.value.offset, path: targetPath)
            return nil
        }
        let namespace = targetMembers.first { $0.key == "namespace" }
        if case .string("web") = namespace?.value.value {
            let site = targetMembers.first { $0.key == "site" }.flatMap { member -> String? in
                if case .string(let text) = member.value.value { return text } else { return nil }
            }
            reader.report(
                .warning, rule: .assetLinksWebTarget,
                "web target\(site.map { " \($0)" } ?? "") left out: the android section delegates to Android apps only",
                at: targetMember.value.offset, path: targetPath,
                hint: "website-to-website delegation is not supported; serve that statement from elsewhere")
            return nil
        }
        guard
            let target = reader.object(
                targetMember.value, path: targetPath, known: ["namespace", "package_name", "sha256_cert_fingerprints"])
        else { return nil }
        if let namespace, case .string(let name) = namespace.value.value, name != "android_app" {
            reader.report(
                .warning, rule: .assetLinksNamespace,
                "namespace \"\(name)\" is not \"android_app\", so Android ignores this statement; it is imported as "
                    + "an android_app statement for \(packageName(target) ?? "its package")",
                at: namespace.value.offset, path: targetPath.key("namespace"),
                hint:
                    "the generated file says \"android_app\"; remove the app from the android section if it should not verify"
            )
        } else if namespace == nil {
            reader.report(
                .error, rule: .missingKey, "target has no \"namespace\"", at: targetMember.value.offset,
                path: targetPath, hint: "add \"namespace\": \"android_app\"")
        }
        guard let packageMember = target["package_name"],
            let package = reader.string(packageMember.value, path: targetPath.key("package_name"))
        else {
            if target["package_name"] == nil {
                reader.report(
                    .error, rule: .missingKey, "target has no \"package_name\"", at: targetMember.value.offset,
                    path: targetPath, hint: "add the app's applicationId")
            }
            return nil
        }
        if let problem = AndroidAppRule.packageProblem(package) {
            reader.report(
                .error, rule: .androidPackage, problem, at: packageMember.value.offset,
                path: targetPath.key("package_name"))
        }
        guard let fingerprintsMember = target["sha256_cert_fingerprints"] else {
            if !reader.diagnostics.contains(where: {
                $0.keyPath?.hasPrefix(targetPath.description) == true && $0.rule == .unknownKey
            }) {
                reader.report(
                    .error, rule: .missingKey,
                    "target has no \"sha256_cert_fingerprints\", so \(package) never verifies",
                    at: targetMember.value.offset, path: targetPath,
                    hint: "add the SHA-256 fingerprints of its signing certificates")
            }
            return nil
        }
        let fingerprints = readFingerprints(
            fingerprintsMember, path: targetPath.key("sha256_cert_fingerprints"), reader: reader)
        return (package, fingerprints)
    }

    /// The fingerprints of a target, normalised to Android's form; malformed ones are errors.
    private func readFingerprints(_ fingerprintsMember: JSONMember, path fingerprintsPath: KeyPath, reader: JSONReader)
        -> [String]
    {
        var fingerprints: [String] = []
        if let elements = reader.array(fingerprintsMember.value, path: fingerprintsPath) {
            for (index, element) in elements.enumerated() {
                guard let text = reader.string(element, path: fingerprintsPath.index(index)) else { continue }
                if let problem = CertificateFingerprint.problem(text) {
                    reader.report(
                        .error, rule: .androidFingerprint, problem, at: element.offset,
                        path: fingerprintsPath.index(index),
                        hint: "use the SHA-256 fingerprint of the signing certificate: 32 hex pairs such as 14:6D:E9:…")
                } else if let normalized = CertificateFingerprint.normalized(text) {
                    if normalized != text {
                        reader.report(
                            .warning, rule: .androidFingerprintForm,
                            "fingerprint '\(text)' is not in Android's upper-case colon-separated form; imported as \(normalized)",
                            at: element.offset, path: fingerprintsPath.index(index))
                    }
                    if !fingerprints.contains(normalized) { fingerprints.append(normalized) }
                }
            }
        }
        return fingerprints
    }

    private func packageName(_ target: JSONObject) -> String? {
        if case .string(let name) = target["package_name"]?.value.value { return name }
        return nil
    }

    private func readExtensions(_ node: JSONNode, path: KeyPath, reader: JSONReader) -> [ComponentPattern]? {
        guard case .object(let members) = node.value else {
            reader.report(
                .error, rule: .wrongType, "expected an object keyed by relation, found \(node.value.typeName)",
                at: node.offset, path: path)
            return nil
        }
        var rules: [ComponentPattern]?
        for member in members {
            let memberPath = path.key(member.key)
            guard member.key == AssetLinksGenerator.handleAllURLs else {
                reader.report(
                    .warning, rule: .assetLinksRelation, "extension for \"\(member.key)\" left out",
                    at: member.keyOffset, path: memberPath)
                continue
            }
            guard let object = reader.object(member.value, path: memberPath, known: ["dynamic_app_link_components"]),
                let components = object["dynamic_app_link_components"],
                let elements = reader.array(components.value, path: memberPath.key("dynamic_app_link_components"))
            else { continue }
            // Android discards the whole block for one rule it cannot read (spec §7.1): the app's intent filters
            // decide. Importing the rules it could read would open URLs Android leaves to them, so none are.
            for (index, element) in elements.enumerated() {
                guard case .failure(let discarded) = DynamicRule.read(element.value, index: index) else { continue }
                reader.report(
                    .warning, rule: .androidDynamicRules,
                    "Android discards all these dynamic rules (\(discarded.reason)), so the app's intent filters decide; the import leaves them all out",
                    at: element.offset, path: memberPath.key("dynamic_app_link_components").index(index),
                    hint: "fix the rule, then give the app its dynamic rules in the android section's \"rules\"")
                return nil
            }
            rules = elements.enumerated().compactMap { index, element in
                ComponentPattern.read(
                    element, path: memberPath.key("dynamic_app_link_components").index(index), reader: reader,
                    spelling: .apple)
            }
        }
        return rules
    }
}

extension Rule {
    /// Reported by `AssetLinksImporter`.
    public static let androidFingerprintForm = Rule(
        "android-fingerprint-form", .warning,
        "`import` of an assetlinks.json: a fingerprint not in Android's upper-case colon-separated form, imported normalised."
    )

    /// Reported by `AssetLinksImporter`.
    public static let assetLinksStructure = Rule(
        "assetlinks-structure", .error,
        "`import` of an assetlinks.json that is not a JSON array of statements, has no statements, or delegates to no Android app."
    )

    /// Reported by `AssetLinksImporter`.
    public static let assetLinksEmpty = Rule(
        "assetlinks-empty", .error,
        "`import` of an assetlinks.json that is not a JSON array of statements, has no statements, or delegates to no Android app."
    )

    /// Reported by `AssetLinksImporter`.
    public static let assetLinksNoApp = Rule(
        "assetlinks-no-app", .error,
        "`import` of an assetlinks.json that is not a JSON array of statements, has no statements, or delegates to no Android app."
    )

    /// Reported by `AssetLinksImporter`.
    public static let assetLinksSingleObject = Rule(
        "assetlinks-single-object", .warning,
        "`import` of an assetlinks.json: one statement instead of a list, an `include` (not fetched), a key Android ignores, a relation other than App Links and sign-in sharing, a namespace Android ignores, or a web target; each left out or imported as the message says."
    )

    /// Reported by `AssetLinksImporter`.
    public static let assetLinksInclude = Rule(
        "assetlinks-include", .warning,
        "`import` of an assetlinks.json: one statement instead of a list, an `include` (not fetched), a key Android ignores, a relation other than App Links and sign-in sharing, a namespace Android ignores, or a web target; each left out or imported as the message says."
    )

    /// Reported by `AssetLinksImporter`.
    public static let assetLinksUnknownKey = Rule(
        "assetlinks-unknown-key", .warning,
        "`import` of an assetlinks.json: one statement instead of a list, an `include` (not fetched), a key Android ignores, a relation other than App Links and sign-in sharing, a namespace Android ignores, or a web target; each left out or imported as the message says."
    )

    /// Reported by `AssetLinksImporter`.
    public static let assetLinksRelation = Rule(
        "assetlinks-relation", .warning,
        "`import` of an assetlinks.json: one statement instead of a list, an `include` (not fetched), a key Android ignores, a relation other than App Links and sign-in sharing, a namespace Android ignores, or a web target; each left out or imported as the message says."
    )

    /// Reported by `AssetLinksImporter`.
    public static let assetLinksNamespace = Rule(
        "assetlinks-namespace", .warning,
        "`import` of an assetlinks.json: one statement instead of a list, an `include` (not fetched), a key Android ignores, a relation other than App Links and sign-in sharing, a namespace Android ignores, or a web target; each left out or imported as the message says."
    )

    /// Reported by `AssetLinksImporter`.
    public static let assetLinksWebTarget = Rule(
        "assetlinks-web-target", .warning,
        "`import` of an assetlinks.json: one statement instead of a list, an `include` (not fetched), a key Android ignores, a relation other than App Links and sign-in sharing, a namespace Android ignores, or a web target; each left out or imported as the message says."
    )

    /// The rules of assetlinks.json files given to `import`, in the order of the docs table: their part of `Rule.all`.
    package static let assetLinksImportRules: [Rule] = [
        .androidFingerprintForm,
        .assetLinksStructure,
        .assetLinksEmpty,
        .assetLinksNoApp,
        .assetLinksSingleObject,
        .assetLinksInclude,
        .assetLinksUnknownKey,
        .assetLinksRelation,
        .assetLinksNamespace,
        .assetLinksWebTarget,
    ]
}
