import AASACore
public import AASACurl
public import Foundation

/// `aasa-server cdn`: what Apple's CDN (and, with `google`, Google's Digital Asset Links API) holds for each domain,
/// compared with what is served: the generated files of the configured domains, or what the live site serves for
/// any other name.
public struct CDNComparison: Sendable {
    /// The client every request goes through.
    public var client: HTTPClient
    /// Apple's CDN base URL.
    public var appleBase: String = AppleCDNCheck.defaultBase
    /// Google's `statements:list` URL.
    public var googleBase: String = GoogleDALCheck.defaultBase
    /// Whether Google's API is asked too.
    public var google = false

    /// A comparison through `client`.
    public init(client: HTTPClient) {
        self.client = client
    }

    /// What one domain serves, when it is configured here.
    public struct Served: Sendable {
        /// The association file's bytes.
        public var association: [UInt8]
        /// The assetlinks.json bytes, when the domain has an android section.
        public var assetLinks: [UInt8]?
        /// Since when this version is published, when known.
        public var since: Date?

        /// Creates what a domain serves.
        public init(association: [UInt8], assetLinks: [UInt8]?, since: Date?) {
            self.association = association
            self.assetLinks = assetLinks
            self.since = since
        }
    }

    /// One domain's answers.
    public struct Result: Sendable {
        public var domain: String
        public var apple: CDNObservation
        public var google: CDNObservation?

        /// Whether every copy asked is in sync.
        public var inSync: Bool { apple.state == .inSync && (google.map { $0.state == .inSync } ?? true) }
    }

    /// Compares `domain`'s copies with `served`, or with what the live site serves when it is `nil`.
    public func compare(_ domain: String, served: Served?) -> Result {
        let now = Date()
        var reference = served
        var failure: String?
        if reference == nil {
            switch live(domain) {
            case .success(let fetched): reference = fetched
            case .failure(let error): failure = error.reason
            }
        }
        let apple = AppleCDNCheck(client: client, base: appleBase).check(
            domain: domain, served: reference?.association, unreadable: failure, publishedSince: reference?.since,
            now: now)
        // Google is asked for the domains that serve assetlinks.json: the others have nothing to compare.
        var googleResult: CDNObservation?
        if google, let assetLinks = reference?.assetLinks {
            googleResult = GoogleDALCheck(client: client, base: googleBase).check(
                domain: domain, served: assetLinks, publishedSince: reference?.since, now: now)
        }
        return Result(domain: domain, apple: apple, google: googleResult)
    }

    /// Why the live site's file could not be read.
    private struct LiveFailure: Error {
        var reason: String
    }

    /// What the live site serves for `domain`, read as a device would (HTTPS, no redirect followed).
    private func live(_ domain: String) -> Swift.Result<Served, LiveFailure> {
        let url = "https://\(domain)/.well-known/apple-app-site-association"
        do {
            let response = try client.send(HTTPClientRequest(.get, url: url))
            guard response.status == 200 else {
                return .failure(LiveFailure(reason: "\(url) answered HTTP \(response.status)"))
            }
            var assetLinks: [UInt8]?
            if google,
                let links = try? client.send(
                    HTTPClientRequest(.get, url: "https://\(domain)/.well-known/assetlinks.json")),
                links.status == 200
            {
                assetLinks = links.body
            }
            return .success(Served(association: response.body, assetLinks: assetLinks, since: nil))
        } catch {
            return .failure(LiveFailure(reason: "could not read \(url): \(error.reason)"))
        }
    }
}
