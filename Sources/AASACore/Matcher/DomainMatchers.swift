/// What every published domain serves, so "which app opens this URL" can be answered for the configuration
/// actually served.
///
/// A domain's file is parsed from the bytes served and its matcher compiled when a query names it (tens of
/// microseconds): the answer is about exactly what is served, and keeping every domain's document and matcher
/// cost memory for all of them, thousands with many domains, for an admin query that names one.
public struct DomainMatchers: Sendable {
    private let domains: PersistentDictionary<String, PublishedDomain>

    /// Keeps each domain's served files (their bytes) and where its rules come from in site.json.
    public init(published: [PublishedDomain]) {
        domains = PersistentDictionary(published.map { ($0.domain, $0) })
    }

    /// Shares the published domains a server keeps (a reload hands its dictionary over without copying it).
    public init(published: PersistentDictionary<String, PublishedDomain>) {
        domains = published
    }

    /// The apps the served files of `domain` name (``PublishedDomain/servedApps``); empty for a domain not served.
    public func servedApps(of domain: String) -> [(service: String, apps: [String])] {
        domains[domain]?.servedApps ?? []
    }

    /// The credential endpoints `domain` serves (passkey endpoints, change-password); `nil` for none or a domain not
    /// served.
    public func servedEndpoints(of domain: String) -> CredentialEndpoints? {
        domains[domain]?.credentialEndpoints
    }

    /// The published domain `url` names, its served association file read back, or why there is none.
    public func served(for url: String) -> Result<(PublishedDomain, AssociationFile), MatchLookupError> {
        let parsed: MatchURL
        do {
            parsed = try MatchURL(parsing: url)
        } catch {
            // RFC 9110 §15.5.15: 414 for a URI longer than the server will interpret.
            if case .tooLong = error.code { return .failure(MatchLookupError(status: 414, message: error.description)) }
            return .failure(MatchLookupError(status: 400, message: "'\(url)' is not an absolute http(s) URL"))
        }
        guard let host = parsed.host, parsed.scheme != nil else {
            return .failure(MatchLookupError(status: 400, message: "'\(url)' is not an absolute http(s) URL"))
        }
        guard let domain = HostName.normalized(host), let published = domains[domain] else {
            return .failure(MatchLookupError(status: 404, message: "no configured domain serves '\(host)'"))
        }
        guard let file = AssociationFile.parse(SourceText(name: domain, bytes: published.associationFile)).file else {
            return .failure(MatchLookupError(status: 500, message: "the file served for \(domain) cannot be read back"))
        }
        return .success((published, file))
    }

    /// The admin listener's `GET /match?url=…` answer: iOS 13+'s match result as JSON
    /// (``MatchResult/json(detailsSource:)``); with `platforms=all`, every platform side by side
    /// (``PlatformVerdicts/json(detailsSource:)``, Android from the served assetlinks.json); or a JSON error.
    public func answer(rawQuery: String?) -> Response {
        let headers = [HTTPHeader("Content-Type", "application/json"), HTTPHeader("Cache-Control", "no-store")]
        guard let url = QueryString.value("url", in: rawQuery), !url.isEmpty else {
            return Response(
                status: 400, headers: headers,
                body: Array(
                    #"{"error":"missing url parameter, e.g. /match?url=https%3A%2F%2Fshop.example%2Fbuy%2F1"}"#.utf8))
        }
        switch served(for: url) {
        case .success((let published, let file)):
            let json: String
            if QueryString.value("platforms", in: rawQuery) == "all" {
                json = PlatformVerdicts(
                    url: url, file: file, assetLinks: published.assetLinks.flatMap(JSONValue.parse)
                ).json(detailsSource: published.detailsSource)
            } else {
                json = URLMatcher(file: file, mode: .modern).match(url).json(detailsSource: published.detailsSource)
            }
            return Response(status: 200, headers: headers, body: Array(json.utf8))
        case .failure(let error):
            return Response(
                status: error.status, headers: headers, body: Array("{\"error\":\(JSONText.quote(error.message))}".utf8)
            )
        }
    }
}

/// Why a URL has no matcher: not a URL (400), longer than ``MatchURL/maximumLength`` (414), or not a configured
/// domain (404).
public struct MatchLookupError: Error, Sendable, Hashable {
    /// The HTTP status for the admin answer.
    public var status: Int
    /// What is wrong.
    public var message: String
}
