import AASACore
import AASATestSupport
import Foundation
import Testing

@testable import AASAServer

/// `/.well-known/passkey-endpoints` and `/.well-known/change-password` from a domain's site.json, over real HTTPS
/// (curl against the development CA) to a real server: the draft's document with the domain's headers, the one
/// redirect the server makes, and 404 wherever a domain does not configure them.
@Suite(.serialized) struct CredentialEndpointsLiveTests {
    static let domain = "keys.example"
    static let enroll = "https://keys.example/account/passkeys/new"
    static let manage = "https://accounts.keys.example/passkeys"
    static let target = "https://keys.example/account/password"
    static let passkeysPath = "/.well-known/passkey-endpoints"
    static let changePasswordPath = "/.well-known/change-password"
    static let associationPaths = ["/.well-known/apple-app-site-association", "/apple-app-site-association"]

    static func site(enroll: String = enroll, changePassword: Bool = true) -> String {
        #"{"cacheControl": "public, max-age=600", "webCredentials": ["ABCDE12345.com.example.keys"], "#
            + #""passkeys": {"enroll": "\#(enroll)", "manage": "\#(manage)", "comment": "not served"}"#
            + (changePassword ? #", "changePassword": "\#(target)""# : "") + "}"
    }

    /// keys.example serves both; passkeys.example only the passkey document; links.example (the sample) neither.
    static func server() throws -> LiveServer {
        try LiveServer(extraDomains: [
            domain: site(),
            "passkeys.example": #"{"webCredentials": ["ABCDE12345.com.example.keys"], "passkeys": {}}"#,
        ])
    }

    @Test func thePasskeyDocumentIsTheDraftsJSONWithTheDomainsHeaders() throws {
        let live = try Self.server()
        let response = try live.get(Self.domain, Self.passkeysPath)
        #expect(response.error.isEmpty, "\(response.error)")
        #expect(response.status == 200)
        #expect(response.text == #"{"enroll":"\#(Self.enroll)","manage":"\#(Self.manage)"}"#)
        #expect(response.headers["content-type"] == "application/json")
        #expect(response.headers["cache-control"] == "public, max-age=600")
        #expect(response.headers["x-content-type-options"] == "nosniff")
        #expect(response.headers["location"] == nil)
        let etag = try #require(response.headers["etag"])
        #expect(etag.hasPrefix("\"") && etag.hasSuffix("\""))

        let head = try live.get(Self.domain, Self.passkeysPath, method: "HEAD")
        #expect(head.status == 200)
        #expect(head.body.isEmpty)
        #expect(head.headers["content-length"] == "\(response.body.count)")
        #expect(head.headers["etag"] == etag)

        let notModified = try live.get(Self.domain, Self.passkeysPath, headers: ["If-None-Match: W/\(etag)"])
        #expect(notModified.status == 304)
        #expect(notModified.body.isEmpty)
        #expect(notModified.headers["etag"] == etag)
        #expect(notModified.headers["cache-control"] == "public, max-age=600")
        #expect(try live.get(Self.domain, Self.passkeysPath, headers: ["If-None-Match: \"stale\""]).status == 200)
        #expect(try live.get(Self.domain, Self.passkeysPath, method: "POST").status == 405)

        // An object naming no page is the draft's `{}`.
        let empty = try live.get("passkeys.example", Self.passkeysPath)
        #expect(empty.status == 200)
        #expect(empty.text == "{}")

        // The plain HTTP listener serves the same bytes, as it does the association files.
        let plain = try HTTPProbe.get(port: live.http, host: Self.domain, path: Self.passkeysPath)
        #expect(plain.status == 200)
        #expect(plain.body == response.body)
    }

    @Test func changePasswordIsA302ToItsTargetAndTheAssociationFilesAreNeverRedirected() throws {
        let live = try Self.server()
        for method in ["GET", "HEAD"] {
            let response = try live.get(Self.domain, Self.changePasswordPath, method: method)
            #expect(response.error.isEmpty, "\(response.error)")
            #expect(response.status == 302, "\(method)")
            #expect(response.headers["location"] == Self.target, "\(method)")
            #expect(response.headers["cache-control"] == "no-store", "\(method)")
            #expect(response.headers["content-type"] == "text/plain; charset=utf-8", "\(method)")
        }
        #expect(try live.get(Self.domain, Self.changePasswordPath).text == "change your password at \(Self.target)\n")
        #expect(try live.get(Self.domain, Self.changePasswordPath, method: "DELETE").status == 405)
        // A conditional request changes nothing for a redirect.
        #expect(try live.get(Self.domain, Self.changePasswordPath, headers: ["If-None-Match: *"]).status == 302)

        for path in Self.associationPaths {
            let response = try live.get(Self.domain, path)
            #expect(response.status == 200, "\(path)")
            #expect(response.headers["location"] == nil, "\(path)")
            #expect(response.text.contains("ABCDE12345.com.example.keys"), "\(path)")
        }
    }

    @Test(arguments: [
        ("links.example", passkeysPath), ("links.example", changePasswordPath),
        ("passkeys.example", changePasswordPath), ("keys.example", passkeysPath + "/"),
        ("keys.example", changePasswordPath + "/"), ("keys.example", "/.well-known/CHANGE-PASSWORD"),
    ])
    func aDomainThatDoesNotConfigureAPathAnswers404(domain: String, path: String) throws {
        let live = try Self.server()
        let response = try live.get(domain, path)
        #expect(response.status == 404)
        #expect(response.headers["location"] == nil)
        #expect(response.text == "not found\n")
    }

    /// `/status` lists what each domain serves; a reload that moves a passkey page publishes it and says so in the
    /// domain's `lastChange` as a settings change.
    @Test func statusListsTheEndpointsAndAReloadReportsAChangedURL() throws {
        let live = try Self.server()
        func domainStatus(_ name: String) throws -> [String: Any] {
            let response = try Curl.request("http://127.0.0.1:\(live.admin)/status")
            let object = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
            return try #require((object?["domains"] as? [String: Any])?[name] as? [String: Any])
        }
        let endpoints = try #require(try domainStatus(Self.domain)["endpoints"] as? [String: Any])
        #expect(endpoints["changePassword"] as? String == Self.target)
        let document = try #require(endpoints["passkeyEndpoints"] as? [String: String])
        #expect(document == ["enroll": Self.enroll, "manage": Self.manage])
        #expect(try domainStatus("links.example")["endpoints"] == nil)

        let moved = "https://keys.example/settings/passkeys/add"
        try Data(Self.site(enroll: moved, changePassword: false).utf8).write(
            to: URL(fileURLWithPath: live.configDirectory + "/\(Self.domain)/site.json"))
        let reloaded = Date()
        #expect(live.server.reload().errors.isEmpty)
        #expect(
            try live.get(Self.domain, Self.passkeysPath).text == #"{"enroll":"\#(moved)","manage":"\#(Self.manage)"}"#)
        #expect(try live.get(Self.domain, Self.changePasswordPath).status == 404)

        let formatter = ServerStatus.makeFormatter()
        var settings: [[String: Any]] = []
        let deadline = TestTime.deadline(30)
        while Date() < deadline {
            if let change = try domainStatus(Self.domain)["lastChange"] as? [String: Any],
                let time = (change["time"] as? String).flatMap(formatter.date(from:)),
                time >= reloaded.addingTimeInterval(-0.001)
            {
                settings = change["settings"] as? [[String: Any]] ?? []
                break
            }
            usleep(20_000)
        }
        let byName = Dictionary(
            uniqueKeysWithValues: settings.compactMap { setting in
                (setting["setting"] as? String).map { ($0, setting) }
            })
        #expect(byName.keys.sorted() == ["changePassword", "passkeys.enroll"], "\(settings)")
        #expect(byName["passkeys.enroll"]?["old"] as? String == Self.enroll)
        #expect(byName["passkeys.enroll"]?["new"] as? String == moved)
        #expect(byName["changePassword"]?["old"] as? String == Self.target)
        #expect(byName["changePassword"]?["new"] is NSNull)
    }

    /// No code path can redirect an association file: the one response of a redirect status in the sources is the
    /// change-password answer, which only its exact path reaches.
    @Test func theOnlyRedirectInTheSourcesIsChangePassword() throws {
        let redirect = try Regex(#"status: 3(0[0-35-9]|[1-9][0-9])\b"#)
        var found: [String] = []
        for file in try RuleCatalogueTests.swiftFiles() {
            let text = try String(contentsOfFile: RepositoryPaths.root + "/" + file, encoding: .utf8)
            found += text.matches(of: redirect).map { "\(file): \(text[$0.range])" }
        }
        #expect(found == ["Sources/AASACore/Serving/SiteRoutes.swift: status: 302"])
    }
}
