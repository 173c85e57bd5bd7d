import Foundation
import Testing

@testable import AASACore

/// 421 for a Host that names another configured domain than TLS SNI, and per-domain HSTS.
@Suite struct TransportSecurityTests {
    static let minimal = #"{"webCredentials": ["ABCDE12345.com.example.app"]}"#

    func routes(_ sites: [String: String]) throws -> SiteRoutes {
        try SiteRoutes(
            sites.sorted { $0.key < $1.key }.map { domain, json in
                let loaded = loadSite(json, domain: domain)
                return try #require(loaded.published, "\(loaded.diagnostics)")
            })
    }

    func answer(
        _ routes: SiteRoutes, host: String?, sni: String?, path: String = "/.well-known/apple-app-site-association"
    ) -> Response {
        var request = FakeRequest(path: path, tlsServerName: sni)
        if let host { request.headers["Host"] = host }
        return routes.route(request).response
    }

    // MARK: 421 Misdirected Request

    @Test func aHostNamingAnotherConfiguredDomainThanSNIGets421() throws {
        let routes = try routes(["a.example": Self.minimal, "b.example": Self.minimal])
        #expect(answer(routes, host: "b.example", sni: "a.example").status == 421)
        #expect(answer(routes, host: "B.Example:8443", sni: "a.example", path: "/anything").status == 421)
        // SNI naming no configured domain still must not pick another domain's answer.
        #expect(answer(routes, host: "b.example", sni: "other.example").status == 421)
    }

    @Test func matchingOrAbsentSNIIsServedNormally() throws {
        let routes = try routes(["a.example": Self.minimal, "b.example": Self.minimal])
        #expect(answer(routes, host: "a.example:8443", sni: "a.example").status == 200)
        #expect(answer(routes, host: "a.example", sni: nil).status == 200)  // plain HTTP, or no SNI
        #expect(answer(routes, host: nil, sni: "b.example").status == 200)  // HTTP/1.0 without Host: SNI decides
        // An unconfigured Host is the unknown-host 404 whatever the SNI: it names no domain.
        let unknown = answer(routes, host: "evil.example", sni: "a.example")
        #expect(unknown.status == 404)
        #expect(!String(decoding: unknown.body, as: UTF8.self).contains("example"))
    }

    @Test func ipLiteralsInSNIAreNoServerName() {
        #expect(HostName.serverName("127.0.0.1") == nil)
        #expect(HostName.serverName("::1") == nil)
        #expect(HostName.serverName("[::1]") == nil)
        #expect(HostName.serverName("Shop.Example.") == "shop.example")
        #expect(HostName.serverName("1.example") == "1.example")
    }

    // MARK: HSTS

    @Test func hstsGoesOnEveryResponseOfTheDomainOverTLSOnly() throws {
        let routes = try routes([
            "a.example": #"{"webCredentials": ["ABCDE12345.com.example.app"], "hsts": {"includeSubDomains": true}}"#,
            "b.example": Self.minimal,
        ])
        for path in ["/.well-known/apple-app-site-association", "/apple-app-site-association", "/missing"] {
            let response = answer(routes, host: "a.example", sni: "a.example", path: path)
            let secure = response.headers(secure: true)
            #expect(
                secure.contains(HTTPHeader("Strict-Transport-Security", "max-age=31536000; includeSubDomains")),
                "\(path): \(secure)")
            #expect(!response.headers(secure: false).contains { $0.name == "Strict-Transport-Security" })
        }
        #expect(
            answer(routes, host: "b.example", sni: "b.example").headers(secure: true).allSatisfy {
                $0.name != "Strict-Transport-Security"
            })
        #expect(answer(routes, host: "nowhere.example", sni: nil).httpsOnlyHeaders.isEmpty)
    }

    @Test(arguments: [
        (#"true"#, "max-age=31536000"),
        (#"{"maxAge": 600}"#, "max-age=600"),
        (
            #"{"maxAge": 63072000, "includeSubDomains": true, "preload": true}"#,
            "max-age=63072000; includeSubDomains; preload"
        ),
        (#"{"maxAge": 0}"#, "max-age=0"),
    ])
    func hstsSettingsBecomeTheHeader(json: String, header: String) throws {
        let loaded = loadSite(#"{"webCredentials": ["ABCDE12345.com.example.app"], "hsts": \#(json)}"#)
        #expect(try #require(loaded.published, "\(loaded.diagnostics)").hsts == header)
    }

    @Test func disabledHSTSSendsNothing() throws {
        for json in ["false", #"{"enabled": false, "maxAge": 5}"#] {
            let loaded = loadSite(#"{"webCredentials": ["ABCDE12345.com.example.app"], "hsts": \#(json)}"#)
            #expect(try #require(loaded.published).hsts == nil)
        }
    }

    @Test func hstsMistakesAreExplainedWithLineKeyAndFix() throws {
        let preload = loadSite(
            """
            {
              "webCredentials": ["ABCDE12345.com.example.app"],
              "hsts": {"maxAge": 600, "preload": true}
            }
            """)
        #expect(!preload.isPublishable)
        let errors = preload.diagnostics.errors.map(\.description)
        #expect(
            errors.contains { $0.contains("[hsts-preload]") && $0.contains("includeSubDomains") && $0.contains(":3:") })
        #expect(errors.contains { $0.contains("[hsts-preload]") && $0.contains("(at hsts.maxAge)") })

        let wrongType = loadSite(#"{"hsts": {"maxAge": "1y"}}"#)
        #expect(
            wrongType.diagnostics.errors.contains { $0.rule == .wrongType && $0.description.contains("hsts.maxAge") })
        let unknown = loadSite(#"{"hsts": {"maxage": 5}}"#)
        #expect(unknown.diagnostics.errors.contains { $0.rule == .unknownKey && $0.description.contains("maxAge") })

        let short = loadSite(#"{"webCredentials": ["ABCDE12345.com.example.app"], "hsts": {"maxAge": 300}}"#)
        #expect(short.isPublishable)
        #expect(short.diagnostics.warnings.contains { $0.rule == .hstsMaxAge })
    }

    @Test func hstsRoundTripsThroughSiteJSON() throws {
        var config = SiteConfig()
        config.hsts = HSTSConfig(maxAge: 86_400, includeSubDomains: true)
        let text = JSONWriter(style: .pretty).string(config.jsonValue(schema: nil))
        #expect(text.contains("\"hsts\""))
        let loaded = loadSite(text)
        #expect(loaded.config?.hsts == config.hsts)
    }
}
