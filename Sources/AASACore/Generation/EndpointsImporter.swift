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
    /// leaves out (an unknown member, a value that is not a string or not a URL the server serves); `nil` with an
    /// error when the document is not a JSON object.
    public func passkeys(_ source: SourceText) -> (passkeys: PasskeyEndpoints?, diagnostics: [Diagnostic]) {
        let parsed: JSONParser.Result
        do {
            parsed = try JSONParser().parse(source)
        } catch {
            return (nil, [error])
        }
        var diagnostics = parsed.diagnostics
        guard case .object(let members) = parsed.root.value else {
            diagnostics.append(
                source.diagnostic(
                    .error, rule: .endpointsImport,
                    "a passkey endpoints document is a JSON object, found \(parsed.root.value.typeName)",
                    at: parsed.root.offset, keyPath: "",
                    hint: "import the body /.well-known/passkey-endpoints answers, e.g. {\"enroll\": \"https://…\"}"))
            return (nil, diagnostics)
        }
        var passkeys = PasskeyEndpoints()
        var seen: Set<String> = []
        for member in members where seen.insert(member.key).inserted {
            let path = KeyPath.root.key(member.key)
            guard PasskeyEndpoints.members.contains(member.key) else {
                diagnostics.append(
                    source.diagnostic(
                        .warning, rule: .endpointsImport,
                        "\"\(member.key)\" is not a member aasa-server serves (enroll, manage, prfUsageDetails): left out",
                        at: member.keyOffset, keyPath: path.description,
                        hint: "if the draft has added it, serve the document from elsewhere"))
                continue
            }
            guard case .string(let url) = member.value.value else {
                diagnostics.append(
                    source.diagnostic(
                        .warning, rule: .endpointsImport,
                        "\"\(member.key)\" is \(member.value.value.typeName), not a URL: left out",
                        at: member.value.offset, keyPath: path.description,
                        hint: "set passkeys.\(member.key) in site.json to the page's https URL"))
                continue
            }
            guard CredentialURL.isServable(url) else {
                diagnostics.append(
                    source.diagnostic(
                        .warning, rule: .endpointsImport,
                        "\"\(member.key)\" '\(LogEscaping.escape(url))' is not a URL aasa-server serves (absolute https, visible ASCII, at most \(CredentialURL.maximumBytes) bytes): left out",
                        at: member.value.offset, keyPath: path.description,
                        hint: "set passkeys.\(member.key) in site.json to the page's absolute https URL"))
                continue
            }
            switch member.key {
            case "enroll": passkeys.enroll = url
            case "manage": passkeys.manage = url
            default: passkeys.prfUsageDetails = url
            }
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
                    "\(url) redirects to '\(LogEscaping.escape(location))', which is not a URL aasa-server serves (absolute https, visible ASCII, at most \(CredentialURL.maximumBytes) bytes): not imported",
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
