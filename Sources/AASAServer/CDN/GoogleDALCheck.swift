import AASACore
public import AASACurl
public import Foundation

/// Asks Google's Digital Asset Links API what it holds for a domain's App Links (`statements:list` for the site and
/// `delegate_permission/common.handle_all_urls`, with the relation extensions), and compares it with the
/// statements and dynamic rules the domain serves (spec §7).
public struct GoogleDALCheck: Sendable {
    /// The API's `statements:list` endpoint.
    public static let defaultBase = "https://digitalassetlinks.googleapis.com/v1/statements:list"

    /// The client the request goes through.
    public var client: HTTPClient
    /// The `statements:list` URL.
    public var base: String

    /// A check through `client` against `base`.
    public init(client: HTTPClient, base: String = GoogleDALCheck.defaultBase) {
        self.client = client
        self.base = base
    }

    /// Google's statements for `domain` compared with `served` (the assetlinks.json bytes as served), at `now`.
    public func check(domain: String, served: [UInt8], publishedSince: Date? = nil, now: Date = Date())
        -> CDNObservation
    {
        let relation = DynamicRules.relation
        let url =
            base + "?source.web.site=" + Self.escape("https://\(domain)") + "&relation=" + Self.escape(relation)
            + "&return_relation_extensions=true"
        var observation = CDNObservation(source: .google, domain: domain, state: .unreachable, checked: now, url: url)
        observation.publishedSince = publishedSince
        let response: HTTPClientResponse
        do {
            response = try client.send(HTTPClientRequest(.get, url: url))
        } catch {
            observation.error = "could not ask Google's Digital Asset Links API: \(error.reason)"
            observation.hint = "check this machine's network and DNS"
            return observation
        }
        observation.status = response.status
        let body = JSONValue.parse(response.body)
        if response.status == 429 || response.status >= 500 {
            observation.error = "Google's API answered HTTP \(response.status)"
            observation.hint = "a problem on Google's side, not the site's: it is asked again at the next check"
            return observation
        }
        guard response.status == 200, let body else {
            observation.state = .failed
            observation.failureReason =
                body?[member: "error"]?[member: "message"]?.stringValue ?? "HTTP \(response.status)"
            observation.hint = "the API refused the request; check --google-dal, or ask again later"
            return observation
        }
        let errors = (body[member: "errorCode"]?.arrayValue ?? []).compactMap(\.stringValue)
        // A duration in seconds (`"86400s"`); one that is not a finite number of seconds from 0 is left out, one
        // past a year read as a year.
        if let maxAge = body[member: "maxAge"]?.stringValue.flatMap({
            Double($0.trimmingCharacters(in: CharacterSet(charactersIn: "s")))
        }), maxAge.isFinite, maxAge >= 0 {
            observation.nextRefresh = now.addingTimeInterval(min(maxAge, AppleCDNCheck.longestFreshness))
        }
        let theirs = Self.statements(google: body[member: "statements"]?.arrayValue ?? [])
        if !errors.isEmpty {
            observation.state = .failed
            observation.failureReason = errors.joined(separator: ", ")
            observation.failureDetails = body[member: "debugString"]?.stringValue
            observation.hint =
                "Google could not read https://\(domain)/.well-known/assetlinks.json: it must answer 200 with application/json over HTTPS, without redirects"
            return observation
        }
        if theirs.isEmpty {
            observation.state = .absent
            observation.hint = "Google holds no App Links statement for \(domain) yet"
            return observation
        }
        let ours = Self.statements(served: JSONValue.parse(served) ?? .array([]))
        if ours == theirs {
            observation.state = .inSync
        } else {
            observation.state = .stale
            observation.differences =
                theirs.subtracting(ours).sorted().map { "+" + $0 } + ours.subtracting(theirs).sorted().map { "-" + $0 }
        }
        return observation
    }

    /// `package fingerprint` and `package rules <json>` for each handle_all_urls statement of an assetlinks.json.
    static func statements(served root: JSONValue) -> Set<String> {
        var result: Set<String> = []
        for statement in root.arrayValue ?? [] {
            guard (statement[member: "relation"]?.arrayValue ?? []).contains(.string(DynamicRules.relation)),
                let target = statement[member: "target"], target[member: "namespace"]?.stringValue == "android_app",
                let package = target[member: "package_name"]?.stringValue
            else { continue }
            for print in target[member: "sha256_cert_fingerprints"]?.arrayValue ?? [] {
                if let print = print.stringValue { result.insert("\(package) \(print.uppercased())") }
            }
            if let rules = statement[member: "relation_extensions"]?[member: DynamicRules.relation] {
                result.insert("\(package) rules \(JSONEquivalence.text(rules))")
            }
        }
        return result
    }

    /// The same, from the API's statements (`target.androidApp`, `relationExtensions`).
    static func statements(google list: [JSONValue]) -> Set<String> {
        var result: Set<String> = []
        for statement in list {
            guard let app = statement[member: "target"]?[member: "androidApp"],
                let package = app[member: "packageName"]?.stringValue
            else { continue }
            if let print = app[member: "certificate"]?[member: "sha256Fingerprint"]?.stringValue {
                result.insert("\(package) \(print.uppercased())")
            }
            if let rules = statement[member: "relationExtensions"]?[member: DynamicRules.relation] {
                result.insert("\(package) rules \(JSONEquivalence.text(rules))")
            }
        }
        return result
    }

    /// `text` percent-encoded for a query value.
    static func escape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~")))
            ?? text
    }
}
