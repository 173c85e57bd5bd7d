/// Reads what a site serves at `/.well-known/passkey-endpoints` and `/.well-known/change-password` into site.json's
/// `passkeys` and `changePassword`, saying what it cannot represent (`endpoints-import`) instead of dropping it.
public struct EndpointsImporter: Sendable {
    /// Creates an importer.
    public init() {}

    /// Whether `source` is a passkey endpoints document rather than an Apple file: a JSON object naming one of the
    /// draft's members and none of Apple's services.
    public static func looksLikePasskeyEndpoints(_ source: SourceText) -> Bool {
        guard let root = try? JSONParser().parse(source).root, case .object(let members) = root.value else {
            return false
        }
        let keys = Set(members.map(\.key))
        return !keys.isDisjoint(with: PasskeyEndpoints.members)
            && keys.isDisjoint(with: AssociationFile.serviceKeys)
    }

    /// The `passkeys` section a passkey endpoints document (draft §3.1.1) gives, with a warning for each member it
    /// leaves out (an unknown member, a value that is not a string or not a URL the server serves); `nil` with a
    /// warning when the answer is not a JSON object (a site's page served at the path, say): nothing to import.
    public func passkeys(_ source: SourceText) -> (passkeys: PasskeyEndpoints?, diagnostics: [Diagnostic]) {
        let notADocument =
            "is not a passkey endpoints document: not imported"
        let hint = "import the body /.well-known/passkey-endpoints answers, e.g. {\"enroll\": \"https://…\"}"
        guard let parsed = try? JSONParser().parse(source) else {
            return (
                nil,
                [
                    Diagnostic(
                        .warning, rule: .endpointsImport, "\(source.name) \(notADocument) (not JSON)",
                        file: source.name, hint: hint)
                ]
            )
        }
        var diagnostics = parsed.diagnostics
        guard case .object(let members) = parsed.root.value else {
            diagnostics.append(
                source.diagnostic(
                    .warning, rule: .endpointsImport,
                    "\(source.name) \(notADocument) (a JSON \(parsed.root.value.typeName), not an object)",
                    at: parsed.root.offset, keyPath: "", hint: hint))
            return (nil, diagnostics)
        }
        func leftOut(_ message: String, at offset: Int, _ member: String, hint: String) {
            diagnostics.append(
                source.diagnostic(
                    .warning, rule: .endpointsImport, message + ": left out", at: offset,
                    keyPath: KeyPath.root.key(member).description, hint: hint))
        }
        var passkeys = PasskeyEndpoints()
        var seen: Set<String> = []
        for member in members where seen.insert(member.key).inserted {
            guard let field = PasskeyEndpoints.fields.first(where: { $0.member == member.key }) else {
                leftOut(
                    "\"\(LogEscaping.excerpt(member.key))\" is not a member aasa-server serves ("
                        + PasskeyEndpoints.members.joined(separator: ", ") + ")",
                    at: member.keyOffset, member.key,
                    hint: "if the draft has added it, serve the document from elsewhere")
                continue
            }
            guard case .string(let url) = member.value.value else {
                leftOut(
                    "\"\(member.key)\" is \(member.value.value.typeName), not a URL", at: member.value.offset,
                    member.key,
                    hint: "set passkeys.\(member.key) in site.json to the page's https URL")
                continue
            }
            guard CredentialURL.isServable(url) else {
                leftOut(
                    "\"\(member.key)\" '\(LogEscaping.excerpt(url))' is not a URL aasa-server serves (absolute https, visible ASCII, at most \(CredentialURL.maximumBytes) bytes)",
                    at: member.value.offset, member.key,
                    hint: "set passkeys.\(member.key) in site.json to the page's absolute https URL")
                continue
            }
            passkeys[keyPath: field.keyPath] = url
        }
        return (passkeys, diagnostics)
    }

    /// The `changePassword` a site's answer to `/.well-known/change-password` (fetched from `url`, for `domain`)
    /// gives: the target of a redirect (a relative `Location` resolved against the domain), or `nil` with a warning
    /// for an answer the server cannot represent (a page served at the well-known URL, a redirect to a URL it
    /// does not serve).
    public func changePassword(status: Int, location: String?, url: String, domain: String) -> (
        changePassword: String?, diagnostics: [Diagnostic]
    ) {
        func warning(_ message: String, hint: String) -> [Diagnostic] {
            [Diagnostic(.warning, rule: .endpointsImport, message, file: url, hint: hint)]
        }
        guard (300...399).contains(status), let location, !location.isEmpty else {
            return (
                nil,
                warning(
                    "\(url) answered HTTP \(status)\(status == 200 ? " with a page" : "") instead of a redirect: not imported",
                    hint: "set \"changePassword\" in site.json to the URL of the page where a user changes the password"
                )
            )
        }
        let target = location.hasPrefix("/") && !location.hasPrefix("//") ? "https://\(domain)\(location)" : location
        guard CredentialURL.isServable(target) else {
            return (
                nil,
                warning(
                    "\(url) redirects to '\(LogEscaping.excerpt(location))', which is not a URL aasa-server serves (absolute https, visible ASCII, at most \(CredentialURL.maximumBytes) bytes): not imported",
                    hint: "set \"changePassword\" in site.json to the page's absolute https URL")
            )
        }
        return (target, [])
    }
}

extension Rule {
    /// Reported by `EndpointsImporter`.
    public static let endpointsImport = Rule(
        "endpoints-import", .warning,
        "`import` of a passkey endpoints document or a change-password answer: a member or answer aasa-server cannot represent (an unknown member, a value that is not an https URL it serves, a page instead of a redirect), named and left out."
    )

    /// The rules of importing the credential endpoints, in the order of the docs table: their part of `Rule.all`.
    package static let endpointsImportRules: [Rule] = [
        .endpointsImport
    ]
}
