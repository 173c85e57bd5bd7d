import AASACore
import AASATestSupport
import Foundation
import Logging
import Testing

@testable import AASAServer

/// A real server on free ports with certificates made for the test, and real HTTPS requests through curl.
final class LiveServer: @unchecked Sendable {
    let directory = TemporaryDirectory("aasa-live")
    let server: Server
    let caFile: String
    var https: UInt16 { server.httpsPort ?? 0 }
    var http: UInt16 { server.httpPort ?? 0 }
    var admin: UInt16 { server.adminPort ?? 0 }
    var configDirectory: String { directory.path + "/site-config" }
    var certsDirectory: String { directory.path + "/certs" }

    /// Copies the sample config, lets `prepare` rearrange it (given the config folder), makes certificates
    /// and starts a server configured by `configure`.
    init(
        extraDomains: [String: String] = [:], configure: (inout ServerConfiguration) -> Void = { _ in },
        recorder: TrafficRecorder = TrafficRecorder(), prepare: (String) throws -> Void = { _ in }
    ) throws {
        try directory.copy(RepositoryPaths.siteConfig, to: "site-config")
        for (domain, json) in extraDomains { try directory.write("site-config/\(domain)/site.json", json) }
        try prepare(directory.path + "/site-config")
        let domains = try SiteConfigLoader().loadAll(directory: directory.path + "/site-config").map(\.domain)
        caFile = try DevCertificates(certificateDirectory: directory.path + "/certs").ensure(names: domains)
            .caCertificatePath
        var configuration = ServerConfiguration()
        configuration.configDirectory = directory.path + "/site-config"
        configuration.certificateDirectory = directory.path + "/certs"
        configuration.httpsPort = 0
        configuration.httpPort = 0
        configuration.adminPort = 0
        configuration.threadPoolSize = 2
        configure(&configuration)
        server = Server(configuration: configuration, logger: Logger(label: "test"), recorder: recorder)
        try server.start()
    }

    deinit { server.stop(timeout: .seconds(1)) }

    func get(_ domain: String, _ path: String, method: String = "GET", headers: [String] = []) throws -> CurlResponse {
        try Curl.request(
            "https://\(domain):\(https)\(path)", method: method, headers: headers, caFile: caFile,
            resolve: (domain, https))
    }

    /// The answer of the plain HTTP listener for `domain`'s association file.
    func fetch(_ domain: String) throws -> Answer {
        try HTTPProbe.get(port: http, host: domain, path: "/.well-known/apple-app-site-association")
    }

    /// The admin listener's `/status` document.
    func status() throws -> [String: Any] {
        let answer = try HTTPProbe.get(port: admin, host: "127.0.0.1", path: "/status")
        return try #require(try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any])
    }

    func expectedFile(_ domain: String) throws -> [UInt8] {
        try #require(
            SiteConfigLoader().loadDomain(domain: domain, file: "\(configDirectory)/\(domain)/site.json").generated?
                .bytes)
    }
}

@Suite(.serialized) struct ServerLiveTests {
    static let domains = ["shop.example", "links.example"]
    static let paths = ["/.well-known/apple-app-site-association", "/apple-app-site-association"]

    @Test func eachDomainGetsItsOwnFileOnBothPathsOverVerifiedHTTPS() throws {
        let live = try LiveServer()
        var bodies: Set<[UInt8]> = []
        for domain in Self.domains {
            let expected = try live.expectedFile(domain)
            for path in Self.paths {
                let response = try live.get(domain, path)
                #expect(response.error.isEmpty, "\(response.error)")
                #expect(response.status == 200)
                #expect(response.body == expected)
                #expect(response.headers["content-type"] == "application/json")
                #expect(response.headers["content-length"] == "\(expected.count)")
                #expect(response.headers["etag"]?.hasPrefix("\"") == true)
                #expect(response.headers["location"] == nil)
                #expect(response.headers["set-cookie"] == nil)
                #expect(response.headers["www-authenticate"] == nil)
                bodies.insert(response.body)
            }
            let cache = try live.get(domain, Self.paths[0]).headers["cache-control"]
            #expect(cache == (domain == "links.example" ? "public, max-age=1800" : "max-age=3600"))
        }
        #expect(bodies.count == 2)
    }

    @Test func eachDomainPresentsItsOwnCertificate() throws {
        let live = try LiveServer()
        for domain in Self.domains + ["localhost"] {
            let output = try Command.run(
                "openssl",
                [
                    "s_client", "-connect", "127.0.0.1:\(live.https)", "-servername", domain, "-CAfile", live.caFile,
                    "-verify_hostname", domain, "-verify_return_error",
                ], input: Array("Q\n".utf8), timeout: 15)
            #expect(
                output.stdout.contains("subject=CN = \(domain)") || output.stdout.contains("subject=CN=\(domain)"),
                "\(output.stdout)")
            #expect(output.stdout.contains("Verify return code: 0 (ok)"))
        }
        // No SNI: the default certificate (the first configured domain's) still completes the handshake.
        let noSNI = try Command.run(
            "openssl", ["s_client", "-connect", "127.0.0.1:\(live.https)", "-noservername"],
            input: Array("Q\n".utf8), timeout: 15)
        #expect(
            noSNI.stdout.contains("CN = links.example") || noSNI.stdout.contains("CN=links.example"), "\(noSNI.stdout)")
    }

    @Test func headConditionalAndMethodAnswers() throws {
        let live = try LiveServer()
        let domain = "shop.example"
        let full = try live.get(domain, Self.paths[0])
        let head = try live.get(domain, Self.paths[0], method: "HEAD")
        #expect(head.status == 200)
        #expect(head.headers["content-length"] == full.headers["content-length"])
        #expect(head.headers["etag"] == full.headers["etag"])
        #expect(head.headers["content-type"] == "application/json")

        let etag = try #require(full.headers["etag"])
        let notModified = try live.get(domain, Self.paths[1], headers: ["If-None-Match: \(etag)"])
        #expect(notModified.status == 304)
        #expect(notModified.body.isEmpty)
        #expect(notModified.headers["etag"] == etag)
        let listed = try live.get(domain, Self.paths[0], headers: ["If-None-Match: \"other\", W/\(etag)"])
        #expect(listed.status == 304)
        let stale = try live.get(domain, Self.paths[0], headers: ["If-None-Match: \"stale\""])
        #expect(stale.status == 200)

        for method in ["POST", "PUT", "DELETE", "OPTIONS"] {
            let response = try live.get(domain, Self.paths[0], method: method)
            #expect(response.status == 405, "\(method)")
            #expect(response.headers["allow"] == "GET, HEAD")
        }
    }

    @Test(arguments: [
        "/.well-known/apple-app-site-association/", "/.well-known/apple-app-site-association.json",
        "/apple-app-site-association.json", "/.well-known/", "/", "/.well-known/APPLE-APP-SITE-ASSOCIATION",
        "/.well-known/apple-app-site-association%2F", "/.well-known//apple-app-site-association",
    ])
    func variantsGet404NeverARedirect(path: String) throws {
        let live = try LiveServer()
        // links.example has no pages/ (shop.example's serves "/"): every variant is a 404.
        let response = try live.get("links.example", path)
        #expect(response.status == 404)
        #expect(response.headers["location"] == nil)
    }

    @Test func unknownHostGets404NamingNoDomain() throws {
        let live = try LiveServer()
        let response = try Curl.request(
            "https://other.example:\(live.https)/.well-known/apple-app-site-association",
            resolve: ("other.example", live.https), extra: ["-k"])
        #expect(response.status == 404)
        #expect(!response.text.contains("shop.example") && !response.text.contains("links.example"))
        #expect(response.text == "unknown host\n")
    }

    @Test func hostIsMatchedWithoutPortCaseOrTrailingDot() throws {
        let live = try LiveServer()
        let expected = try live.expectedFile("shop.example")
        for host in ["SHOP.Example", "shop.example.", "shop.example:\(live.https)", "Shop.Example.:443"] {
            let response = try live.get("shop.example", Self.paths[0], headers: ["Host: \(host)"])
            #expect(response.status == 200, "\(host)")
            #expect(response.body == expected, "\(host)")
        }
    }

    @Test func plainHTTPListenerServesTheSameBytes() throws {
        let live = try LiveServer()
        let response = try Curl.request(
            "http://127.0.0.1:\(live.http)/.well-known/apple-app-site-association", headers: ["Host: links.example"])
        #expect(response.status == 200)
        #expect(response.body == (try live.expectedFile("links.example")))
    }

    @Test func adminAnswersHealthOnLoopbackOnly() throws {
        let live = try LiveServer()
        let health = try Curl.request("http://127.0.0.1:\(live.admin)/healthz")
        #expect(health.status == 200)
        #expect(health.text == "ok\n")
        // The public hosts never expose admin paths.
        #expect(try live.get("shop.example", "/healthz").status == 404)
        let listening = try Command.run("ss", ["-Hltn", "sport = :\(live.admin)"])
        #expect(listening.stdout.contains("127.0.0.1:\(live.admin)"), "\(listening.stdout)")
    }

    @Test func aConfigErrorRefusesToStartNamingFileLineAndKey() throws {
        let directory = TemporaryDirectory("aasa-bad")
        try directory.write(
            "site-config/bad.example/site.json",
            """
            {
              "universalLinks": {"apps": [{"appIDs": ["com.example.app"], "rules": [{"path": "/*"}]}]}
            }
            """)
        var configuration = ServerConfiguration()
        configuration.configDirectory = directory.path + "/site-config"
        configuration.certificateDirectory = directory.path + "/certs"
        configuration.httpsPort = 0
        configuration.adminPort = nil
        let server = Server(configuration: configuration, logger: Logger(label: "test"))
        do {
            try server.start()
            Issue.record("started with a broken config")
        } catch {
            #expect(error.isConfigurationError)
            #expect(
                error.diagnostics.first?.description.hasPrefix(
                    directory.path + "/site-config/bad.example/site.json:2:43: error: [app-id-format]") == true,
                "\(error.diagnostics)")
        }
    }

    @Test func reloadPublishesFixesAndKeepsTheLastGoodFileOnErrors() throws {
        let live = try LiveServer()
        let file = live.configDirectory + "/shop.example/site.json"
        let original = try live.get("shop.example", Self.paths[0]).body
        // Break it: the old file keeps being served.
        try Data("{ broken".utf8).write(to: URL(fileURLWithPath: file))
        let broken = live.server.reload()
        #expect(broken.contains { $0.rule == .invalidJSON && $0.file == file })
        #expect(try live.get("shop.example", Self.paths[0]).body == original)
        // Fix it with a change: the new file is served.
        try Data(#"{"webCredentials": ["ABCDE12345.com.example.shop"]}"#.utf8).write(to: URL(fileURLWithPath: file))
        #expect(live.server.reload().isEmpty)
        let fixed = try live.get("shop.example", Self.paths[0])
        #expect(fixed.text == #"{"webcredentials":{"apps":["ABCDE12345.com.example.shop"]}}"#)
    }

    @Test func adminMatchAnswersForTheServedConfigurationOnly() throws {
        let live = try LiveServer()
        let url = "https://shop.example/bags/tote?x=1"
        let encoded = url.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? url
        let response = try Curl.request("http://127.0.0.1:\(live.admin)/match?url=\(encoded)")
        #expect(response.status == 200)
        #expect(response.headers["content-type"] == "application/json")
        let object = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
        #expect(object?["verdict"] as? String == "match")
        #expect(object?["appIDs"] as? [String] == ["ABCDE12345.com.example.shop"])
        #expect(object?["componentIndex"] as? Int == 3)
        #expect(try Curl.request("http://127.0.0.1:\(live.admin)/match").status == 400)
        #expect(
            try Curl.request("http://127.0.0.1:\(live.admin)/match?url=https%3A%2F%2Fother.example%2F").status == 404)
        // Not on the public hosts.
        #expect(try live.get("shop.example", "/match?url=\(encoded)").status == 404)
        // After a reload the answer follows the new configuration.
        try Data(
            #"{"universalLinks": {"apps": [{"appIDs": ["ABCDE12345.com.other"], "rules": [{"path": "/bags/*"}]}]}}"#
                .utf8
        )
        .write(to: URL(fileURLWithPath: live.configDirectory + "/shop.example/site.json"))
        live.server.reload()
        let after = try Curl.request("http://127.0.0.1:\(live.admin)/match?url=\(encoded)")
        #expect(after.text.contains(#""appIDs":["ABCDE12345.com.other"]"#))
    }
}
