public import AASACore
import AASACurl

/// `import --site`: reads what a live site answers at `/.well-known/passkey-endpoints` and
/// `/.well-known/change-password`, as a credential manager would (HTTPS, certificates verified, no redirect
/// followed), into `passkeys` and `changePassword`.
public struct EndpointsFetch: Sendable {
    /// The largest answer read: the document the server itself serves is at most about 6 KiB (three URLs of
    /// ``CredentialURL/maximumBytes``), so a larger one is not a passkey endpoints document.
    public static let maximumResponseBytes = 64 << 10
    /// The longest each request may take.
    public static let timeout: Duration = .seconds(20)

    /// The origin the files are read from, e.g. `https://shop.example`.
    public var site: String
    /// The domain the site.json is for (a relative `Location` is resolved against it).
    public var domain: String
    /// A PEM file of the only certificates to trust, or `nil` for the system's.
    public var trustAnchors: String?

    /// Creates a fetch.
    public init(site: String, domain: String, trustAnchors: String? = nil) {
        self.site = site.hasSuffix("/") ? String(site.dropLast()) : site
        self.domain = domain
        self.trustAnchors = trustAnchors
    }

    /// What the site serves: each `nil` when the site does not serve it (404 or 410) or serves what the server
    /// cannot represent (said in `diagnostics`, `endpoints-import`); an error (`endpoints-fetch`) for an answer that
    /// could not be read.
    public func run() -> (passkeys: PasskeyEndpoints?, changePassword: String?, diagnostics: [Diagnostic]) {
        var client = HTTPClient(trustAnchors: trustAnchors)
        client.timeout = Self.timeout
        client.maximumResponseBytes = Self.maximumResponseBytes
        var diagnostics: [Diagnostic] = []
        var passkeys: PasskeyEndpoints?
        var changePassword: String?
        let importer = EndpointsImporter()

        let passkeysURL = site + "/.well-known/passkey-endpoints"
        if let response = fetch(passkeysURL, client: client, diagnostics: &diagnostics) {
            switch response.status {
            case 200:
                let read = importer.passkeys(SourceText(name: passkeysURL, bytes: response.body))
                passkeys = read.passkeys
                diagnostics += read.diagnostics
            case 404, 410: break
            case 300...399:
                diagnostics.append(
                    Diagnostic(
                        .warning, rule: .endpointsImport,
                        "\(passkeysURL) redirects to '\(LogEscaping.excerpt(response.header("Location") ?? ""))'; aasa-server serves the document itself: not imported",
                        file: passkeysURL,
                        hint:
                            "save the document the redirect leads to and import it: aasa-server import FILE --domain \(domain)"
                    ))
            default:
                diagnostics.append(Self.unreadable(passkeysURL, "answered HTTP \(response.status)"))
            }
        }

        let changeURL = site + "/.well-known/change-password"
        if let response = fetch(changeURL, client: client, diagnostics: &diagnostics) {
            switch response.status {
            case 404, 410: break
            case 200, 300...399:
                let read = importer.changePassword(
                    status: response.status, location: response.header("Location"), url: changeURL, domain: domain)
                changePassword = read.changePassword
                diagnostics += read.diagnostics
            default:
                diagnostics.append(Self.unreadable(changeURL, "answered HTTP \(response.status)"))
            }
        }
        return (passkeys, changePassword, diagnostics)
    }

    /// The answer at `url`, or `nil` with why: an answer over ``maximumResponseBytes`` is no document and no
    /// redirect the server could keep (a site's own page at the path, say), so it is left out like one
    /// (`endpoints-import`); an answer that cannot be read at all is an error.
    private func fetch(_ url: String, client: HTTPClient, diagnostics: inout [Diagnostic]) -> HTTPClientResponse? {
        do {
            return try client.send(HTTPClientRequest(.get, url: url))
        } catch  where error.code == .tooLarge {
            diagnostics.append(
                Diagnostic(
                    .warning, rule: .endpointsImport,
                    "\(url) answered with over \(Self.maximumResponseBytes >> 10) KiB, a page rather than what aasa-server serves there: not imported",
                    file: url,
                    hint: "set \"passkeys\" and \"changePassword\" in site.json to the pages' https URLs"))
            return nil
        } catch {
            diagnostics.append(Self.unreadable(url, error.reason))
            return nil
        }
    }

    private static func unreadable(_ url: String, _ reason: String) -> Diagnostic {
        Diagnostic(
            .error, rule: .endpointsFetch, "cannot read \(url): \(reason)", file: url,
            hint:
                "check --site and that the site answers over HTTPS (--cacert for a private CA); leave out --site to import the file alone"
        )
    }
}

extension Rule {
    /// Reported by `EndpointsFetch`.
    public static let endpointsFetch = Rule(
        "endpoints-fetch", .error,
        "`import --site` could not read `/.well-known/passkey-endpoints` or `/.well-known/change-password` (connection, TLS, timeout, a status other than 200, a redirect, 404 or 410); nothing is written."
    )

    /// The rules of reading a live site's credential endpoints, in the order of the docs table: their part of
    /// `Rule.all`.
    package static let endpointsFetchRules: [Rule] = [
        .endpointsFetch
    ]
}
