/// What a domain serves for credential managers besides its association file: `/.well-known/passkey-endpoints`
/// and the `/.well-known/change-password` redirect, from site.json's `passkeys` and `changePassword`.
public struct CredentialEndpoints: Sendable, Hashable {
    /// The passkey endpoints document's members; `nil`: the path is not served.
    public var passkeys: PasskeyEndpoints?
    /// The change-password redirect's target; `nil`: the path is not served.
    public var changePassword: String?

    /// Creates the endpoints.
    public init(passkeys: PasskeyEndpoints? = nil, changePassword: String? = nil) {
        self.passkeys = passkeys
        self.changePassword = changePassword
    }

    /// The endpoints `config` serves, or `nil` when it serves neither.
    public init?(_ config: SiteConfig) {
        guard config.passkeys != nil || config.changePassword != nil else { return nil }
        self.init(passkeys: config.passkeys, changePassword: config.changePassword)
    }

    /// The endpoints as settings a change is reported in (`aasa-server diff`, `/status`' `lastChange`): each URL
    /// by its site.json key (`passkeys.enroll`, `changePassword`), and `passkeys` `{}` for an object naming none.
    public var settings: [String: String] {
        var settings: [String: String] = [:]
        if let passkeys {
            if passkeys.isEmpty { settings["passkeys"] = "{}" }
            for (member, url) in passkeys.urls { settings["passkeys." + member] = url }
        }
        if let changePassword { settings["changePassword"] = changePassword }
        return settings
    }

    /// `/status`' `endpoints` member of a domain: `passkeyEndpoints` (the served document) and `changePassword`.
    public var jsonValue: JSONValue {
        var members: [(String, JSONValue)] = []
        if let passkeys { members.append(("passkeyEndpoints", passkeys.jsonValue)) }
        if let changePassword { members.append(("changePassword", .string(changePassword))) }
        return .members(members)
    }
}
