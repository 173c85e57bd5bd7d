import AASACore
public import AASACurl
public import Foundation

/// Asks Apple's CDN for its copy of a domain's association file and compares it with what the domain serves.
///
/// Devices since iOS 14 read the file from the CDN, not from the site (spec §3.7): the CDN fetched it earlier,
/// caches it for hours, cannot be purged, and may hold a failure instead (`Apple-Failure-Reason`).
public struct AppleCDNCheck: Sendable {
    /// Apple's CDN: the copy of `<domain>` is at `<base><domain>`.
    public static let defaultBase = "https://app-site-association.cdn-apple.com/a/v1/"

    /// The client the request goes through (its trust anchors and timeout).
    public var client: HTTPClient
    /// Where the copies are, ending with `/`.
    public var base: String

    /// A check through `client` against `base`.
    public init(client: HTTPClient, base: String = AppleCDNCheck.defaultBase) {
        self.client = client
        self.base = base.hasSuffix("/") ? base : base + "/"
    }

    /// The CDN's copy of `domain` compared with `served` (the association file's bytes as served), at `now`. With
    /// `served` `nil` (the site's own file could not be read) the CDN's failures still show; a copy it holds cannot
    /// be compared and is reported `unreachable` with `unreadable` as the error.
    public func check(
        domain: String, served: [UInt8]?, unreadable: String? = nil, publishedSince: Date? = nil, now: Date = Date()
    ) -> CDNObservation {
        let url = base + domain
        var observation = CDNObservation(source: .apple, domain: domain, state: .unreachable, checked: now, url: url)
        observation.publishedSince = publishedSince
        let response: HTTPClientResponse
        do {
            response = try client.send(HTTPClientRequest(.get, url: url))
        } catch {
            observation.error = "could not ask the CDN: \(error.reason)"
            observation.hint =
                error.code == .tls
                ? "the CDN's certificate did not verify: check this machine's CA certificates (or the CA file given)"
                : "check this machine's network and DNS"
            return observation
        }
        observation.status = response.status
        observation.failureReason = response.header("Apple-Failure-Reason")
        observation.failureDetails = response.header("Apple-Failure-Details")
        observation.tryDirect = response.header("Apple-Try-Direct")
        // RFC 9111 §5.1, §5.2.2.1: both are non-negative numbers of seconds; another value is left out.
        observation.age = response.header("Age").flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }.flatMap {
            $0 >= 0 ? $0 : nil
        }
        observation.cacheControl = response.header("Cache-Control")
        if let maxAge = Self.maxAge(observation.cacheControl), maxAge >= 0 {
            let fresh = max(0, TimeInterval(maxAge) - TimeInterval(observation.age ?? 0))
            observation.nextRefresh = now.addingTimeInterval(min(fresh, Self.longestFreshness))
        }
        if let reason = observation.failureReason {
            observation.state = .failed
            observation.hint = Self.hint(reason: reason + " " + (observation.failureDetails ?? ""), domain: domain)
            return observation
        }
        switch response.status {
        case 200:
            guard let served else {
                observation.error = unreadable
                observation.hint = "the CDN holds a copy, but the site's own file could not be read to compare with it"
                return observation
            }
            guard let copy = JSONValue.parse(response.body), let ours = JSONValue.parse(served) else {
                observation.state = response.body == served ? .inSync : .stale
                if observation.state == .stale { observation.differences = ["the copy is not the served bytes"] }
                return observation
            }
            if JSONEquivalence.equivalent(ours, copy) {
                observation.state = .inSync
            } else {
                observation.state = .stale
                observation.differences = JSONEquivalence.associationDifferences(served: ours, copy: copy)
                observation.urlChanges = Self.urlChanges(domain: domain, copy: copy, served: ours)
            }
        case 404, 405:
            // 405 is what the CDN answers for a domain it does not know (spec §3.7).
            observation.state = .absent
            observation.hint =
                "the CDN has not fetched the file yet; it does when a device first installs an app that names \(domain)"
        case 300..<400:
            observation.state = .failed
            observation.failureDetails = response.header("Location").map { "redirect to \($0)" }
            observation.hint = "the CDN itself answered with a redirect, which it does not do: check the CDN URL"
        default:
            observation.state = .failed
            observation.hint = "the CDN answered HTTP \(response.status) without a failure reason; ask again later"
        }
        return observation
    }

    /// What devices get from the CDN's copy that they will get otherwise once it holds the served file, by the
    /// semantic diff of the two as iOS 13+ reads them (the copy is the old version): one line per class of URLs,
    /// with an example, at most ``urlChangesListed``.
    static func urlChanges(domain: String, copy: JSONValue, served: JSONValue) -> [String] {
        let diff = DomainDiff(
            domain: domain, old: DiffSide(appleFile: AssociationFile.readAsDevice(copy).file),
            new: DiffSide(appleFile: AssociationFile.readAsDevice(served).file), limits: .standard)
        var lines = diff.changes.prefix(urlChangesListed).map { change in
            "\(change.description): \(change.opensBefore) until the CDN refreshes, then \(change.opensNow)"
                + (change.examples.first.map { " (e.g. \($0))" } ?? "")
        }
        if diff.changes.count > urlChangesListed {
            lines.append("and \(diff.changes.count - urlChangesListed) more classes of URLs")
        }
        return lines + diff.notes
    }

    /// How many classes of URLs a stale copy lists.
    static let urlChangesListed = 5

    /// The longest a CDN's copy is read as fresh: a `max-age` past it (RFC 9111 allows up to 2³¹ seconds) is read
    /// as this.
    static let longestFreshness: TimeInterval = 366 * 86_400

    /// `max-age` of a `Cache-Control` value.
    static func maxAge(_ cacheControl: String?) -> Int? {
        guard let cacheControl else { return nil }
        for directive in cacheControl.split(separator: ",") {
            let parts = directive.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "max-age" { return Int(parts[1]) }
        }
        return nil
    }

    /// What a failure reason most likely means (spec §3.7, §8 items 2-4).
    static func hint(reason: String, domain: String) -> String {
        let text = reason.lowercased()
        if text.contains("403") || text.contains("forbidden") {
            return "the site refused Apple's fetch (403): a bot protection or WAF blocks AASA-Bot; allow its User-Agent"
        }
        if text.contains("timeout") || text.contains("timed out") || text.contains("swcerr00301") {
            return
                "the site did not answer Apple's fetch in time: check that https://\(domain) is reachable from the internet, and fast"
        }
        if text.contains("ssl") || text.contains("tls") || text.contains("certificate") {
            return "Apple could not verify the site's certificate: serve a complete chain from a CA Apple trusts"
        }
        if text.contains("swcerr00202") || text.contains("private") || text.contains("reserved") {
            return
                "\(domain) resolves to a private or reserved address: Apple's CDN fetches from the internet, so publish public DNS for it"
        }
        if text.contains("redirect") || ["301", "302", "303", "307", "308"].contains(where: text.contains) {
            return
                "the file was redirected: Apple follows no redirects; serve it at https://\(domain)/.well-known/apple-app-site-association directly"
        }
        if text.contains("404") || text.contains("not found") {
            return "the site answered 404 for the file: make sure \(domain) is served by this server"
        }
        return "Apple's fetch of the file failed; fix the cause above, and the CDN fetches again within hours"
    }
}
