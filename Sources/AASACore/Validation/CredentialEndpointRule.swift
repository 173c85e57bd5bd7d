/// The credential endpoints (`passkeys`, `changePassword`) point where a credential manager can send a user: an
/// absolute `https` URL on the domain, for a domain whose apps share its credentials.
public struct CredentialEndpointRule: SiteRule {
    /// Creates the rule.
    public init() {}

    /// Reports each URL that is not served (not `https`, no host, a character a URL cannot hold, too long, a
    /// change-password redirect to itself), each on another site, an empty `passkeys`, and `passkeys` without
    /// `webCredentials`.
    public func check(_ site: SiteContext) -> [Diagnostic] {
        var found: [Diagnostic] = []
        var urls: [(path: KeyPath, url: String)] = []
        if let passkeys = site.config.passkeys {
            let path = KeyPath.root.key("passkeys")
            urls += passkeys.urls.map { (path.key($0.member), $0.url) }
            if passkeys.isEmpty {
                found.append(
                    site.diagnostic(
                        .warning, rule: .passkeysEmpty,
                        "\"passkeys\" names no page: /.well-known/passkey-endpoints serves {}, which only says the site supports passkeys",
                        at: path,
                        hint: "add \"enroll\" and \"manage\": the URLs of the pages that create and manage a passkey"))
            }
            if site.config.webCredentials.isEmpty {
                found.append(
                    site.diagnostic(
                        .warning, rule: .passkeysNoWebCredentials,
                        "\"passkeys\" is set but no app is in \"webCredentials\": the domain's apps cannot use its passkeys",
                        at: path,
                        hint:
                            "add the apps that sign in to \(site.domain) to \"webCredentials\": [\"TEAMID.bundle.id\"]")
                )
            }
        }
        if let changePassword = site.config.changePassword {
            urls.append((.root.key("changePassword"), changePassword))
        }
        for (path, text) in urls {
            let url: CredentialURL
            do {
                url = try CredentialURL(text)
            } catch {
                found.append(
                    Self.diagnostic(
                        error, text: text, path: path, site: site, rule: .credentialURL,
                        lengthRule: .credentialURLLength))
                continue
            }
            // The draft forbids the change-password page at the well-known URL itself (RFC 8615 §1.1).
            if path == .root.key("changePassword") && url.host == site.domain
                && url.path == String(decoding: SiteRoutes.changePasswordPath, as: UTF8.self)
            {
                found.append(
                    site.diagnostic(
                        .error, rule: .credentialURL,
                        "\"changePassword\" redirects /.well-known/change-password to itself", at: path,
                        hint:
                            "use the URL of the page where a user changes the password, e.g. https://\(site.domain)/account/password"
                    ))
                continue
            }
            if !url.isOn(site.domain) {
                found.append(
                    site.diagnostic(
                        .warning, rule: .credentialURLHost,
                        "'\(text)' is on \(url.host), not on \(site.domain) or a subdomain of it: credential managers may not follow it to another site",
                        at: path, hint: "use a page on \(site.domain) (or a subdomain such as accounts.\(site.domain))")
                )
            }
        }
        return found
    }

    /// Why `text`, at `path`, is not a URL that is served: `rule`, or `lengthRule` for one too long.
    static func diagnostic(
        _ problem: CredentialURL.Problem, text: String, path: KeyPath, site: SiteContext, rule: Rule, lengthRule: Rule
    ) -> Diagnostic {
        // Escaped: the value may hold the very line break it is refused for.
        let shown = LogEscaping.excerpt(text)
        switch problem {
        case .tooLong(let bytes):
            return site.diagnostic(
                .error, rule: lengthRule,
                "the URL is \(bytes) bytes, over the limit of \(CredentialURL.maximumBytes)", at: path,
                hint: "use a shorter URL for the page (a path on the domain, without tracking parameters)")
        case .character(let what):
            return site.diagnostic(
                .error, rule: rule,
                "'\(shown)' has a character a URL cannot hold as written (\(what)): spaces, line breaks, backslashes and non-ASCII must be percent-encoded",
                at: path, hint: "percent-encode it, e.g. a space as %20")
        case .scheme:
            return site.diagnostic(
                .error, rule: rule, "'\(shown)' is not an absolute https URL", at: path,
                hint: "write the full URL, e.g. \"https://\(site.domain)/account\"")
        case .authority:
            return site.diagnostic(
                .error, rule: rule,
                "'\(shown)' has no host, or a user name or password before the host", at: path,
                hint: "write https://host/path, e.g. \"https://\(site.domain)/account\"")
        }
    }
}

extension Rule {
    /// Reported by `CredentialEndpointRule`.
    public static let credentialURL = Rule(
        "credential-url", .error,
        "A [`passkeys`](#passkeys) or [`changePassword`](#changepassword) URL that is not an absolute `https` URL with a host, has a space, line break, backslash or non-ASCII character, or sends `/.well-known/change-password` to itself."
    )

    /// Reported by `CredentialEndpointRule`.
    public static let credentialURLLength = Rule(
        "credential-url-length", .error, "A `passkeys` or `changePassword` URL over 2,048 bytes.")

    /// Reported by `CredentialEndpointRule`.
    public static let credentialURLHost = Rule(
        "credential-url-host", .warning,
        "A `passkeys` or `changePassword` URL on another host than the domain or a subdomain of it.")

    /// Reported by `CredentialEndpointRule`.
    public static let passkeysEmpty = Rule(
        "passkeys-empty", .warning,
        "`passkeys` names no page: `/.well-known/passkey-endpoints` serves `{}`, which only says the site supports passkeys."
    )

    /// Reported by `CredentialEndpointRule`.
    public static let passkeysNoWebCredentials = Rule(
        "passkeys-no-webcredentials", .warning, "`passkeys` is set but `webCredentials` names no app.")

    /// The rules of the credential endpoints, in the order of the docs table: their part of `Rule.all`.
    package static let credentialEndpointRules: [Rule] = [
        .credentialURL,
        .credentialURLLength,
        .credentialURLHost,
        .passkeysEmpty,
        .passkeysNoWebCredentials,
    ]
}
