/// The served file of every published domain, so "which app opens this URL" can be answered for the
/// configuration actually served.
///
/// A domain's file is parsed from the bytes served and its matcher compiled when a query names it (tens of
/// microseconds): the answer is about exactly what is served, and keeping every domain's document and matcher
/// cost memory for all of them, thousands with many domains, for an admin query that names one.
public struct DomainMatchers: Sendable {
    private let files: [String: [UInt8]]

    /// Keeps each domain's served file (its JSON bytes).
    public init(served files: [String: [UInt8]]) {
        self.files = files
    }

    /// The domains that can be asked about.
    public var domains: [String] { files.keys.sorted() }

    /// The matcher of the domain `url` names, or why there is none.
    public func matcher(for url: String) -> Result<URLMatcher, MatchLookupError> {
        guard let parsed = try? MatchURL(parsing: url), let host = parsed.host, parsed.scheme != nil else {
            return .failure(MatchLookupError(status: 400, message: "'\(url)' is not an absolute http(s) URL"))
        }
        guard let domain = HostName.normalized(host), let bytes = files[domain] else {
            return .failure(MatchLookupError(status: 404, message: "no configured domain serves '\(host)'"))
        }
        guard let file = AssociationFile.parse(SourceText(name: domain, bytes: bytes)).file else {
            return .failure(MatchLookupError(status: 500, message: "the file served for \(domain) cannot be read back"))
        }
        return .success(URLMatcher(file: file, mode: .modern))
    }

    /// The admin listener's `GET /match?url=…` answer: the match result as JSON, or a JSON error.
    public func answer(rawQuery: String?) -> Response {
        let headers = [HTTPHeader("Content-Type", "application/json"), HTTPHeader("Cache-Control", "no-store")]
        guard let url = QueryString.value("url", in: rawQuery), !url.isEmpty else {
            return Response(
                status: 400, headers: headers,
                body: Array(
                    #"{"error":"missing url parameter, e.g. /match?url=https%3A%2F%2Fshop.example%2Fbuy%2F1"}"#.utf8))
        }
        switch matcher(for: url) {
        case .success(let matcher):
            return Response(status: 200, headers: headers, body: Array(matcher.match(url).json().utf8))
        case .failure(let error):
            return Response(
                status: error.status, headers: headers, body: Array("{\"error\":\(JSONText.quote(error.message))}".utf8)
            )
        }
    }
}

/// Why a URL has no matcher: not a URL (400), or not a configured domain (404).
public struct MatchLookupError: Error, Sendable, Hashable {
    /// The HTTP status for the admin answer.
    public var status: Int
    /// What is wrong.
    public var message: String
}
