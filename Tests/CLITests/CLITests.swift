import AASACore
import AASATestSupport
import Foundation
import Testing

/// The `aasa-server` binary, run as a user runs it.
@Suite(.serialized) struct CLITests {
    func aasa(_ arguments: [String], in directory: String, timeout: TimeInterval = 60) throws -> Command.Output {
        try Command.run(RepositoryPaths.executable, arguments, currentDirectory: directory, timeout: timeout)
    }

    @Test func importWritesASiteConfigThatServesTheSameFile() throws {
        let directory = TemporaryDirectory("aasa-cli")
        let file = try directory.write(
            "downloaded-aasa",
            #"""
            {"applinks": {"apps": [], "details": [{"appID": "ABCDE12345.com.example.app", "paths": ["NOT /private/*", "/items/*"]}]},
             "webcredentials": {"apps": ["ABCDE12345.com.example.app"]}}
            """#)
        let output = try aasa(
            ["import", file, "--domain", "Imported.Example", "--config", "site-config"], in: directory.path)
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stdout.contains("wrote site-config/imported.example/site.json: 1 app entry, 2 rules"))
        let written = try String(
            contentsOfFile: directory.path + "/site-config/imported.example/site.json", encoding: .utf8)
        #expect(written.contains(#""path": "/private/*""#) && written.contains(#""exclude": true"#))
        let loaded = SiteConfigLoader().loadDomain(
            domain: "imported.example", file: directory.path + "/site-config/imported.example/site.json")
        #expect(
            String(decoding: loaded.generated?.bytes ?? [], as: UTF8.self) == #"""
                {"applinks":{"apps":[],"details":[{"appID":"ABCDE12345.com.example.app","appIDs":["ABCDE12345.com.example.app"],"components":[{"/":"/private/*","exclude":true},{"/":"/items/*"}],"paths":["NOT /private/*","/items/*"]}]},"webcredentials":{"apps":["ABCDE12345.com.example.app"]}}
                """#)
    }

    @Test func importOfABrokenFileExplainsAndWritesNothing() throws {
        let directory = TemporaryDirectory("aasa-cli")
        let file = try directory.write("aasa.json", "{\n  \"applinks\": {\n    \"details\": [],\n  }\n}\n")
        let output = try aasa(["import", file, "--domain", "shop.example"], in: directory.path)
        #expect(output.status == 2)
        #expect(
            output.stderr.contains(
                "aasa.json:3:18: error: [invalid-json] trailing comma before '}'; fix: delete the last ','"),
            "\(output.stderr)")
        #expect(output.stderr.contains("nothing was written"))
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/site-config"))
    }

    @Test func importIntoAnExistingDomainKeepsItsOtherSettings() throws {
        let directory = TemporaryDirectory("aasa-cli")
        try directory.write(
            "site-config/shop.example/site.json",
            #"""
            {"cacheControl": "max-age=60", "webCredentials": ["ABCDE12345.com.old"]}
            """#)
        let file = try directory.write(
            "aasa", #"{"applinks": {"details": [{"appIDs": ["ABCDE12345.com.new"], "components": [{"/": "/*"}]}]}}"#)
        let output = try aasa(["import", file, "--domain", "shop.example"], in: directory.path)
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stdout.hasPrefix("updated "))
        let config = SiteConfigLoader().loadDomain(
            domain: "shop.example", file: directory.path + "/site-config/shop.example/site.json"
        ).config
        #expect(config?.cacheControl == "max-age=60")
        #expect(config?.webCredentials == [])
        #expect(config?.universalLinks?.apps.first?.appIDs == ["ABCDE12345.com.new"])
    }

    @Test func certsDevMakesACAAndCertificatesAndPrintsEntitlements() throws {
        let directory = TemporaryDirectory("aasa-cli")
        try directory.copy(RepositoryPaths.siteConfig, to: "site-config")
        let output = try aasa(["certs", "dev"], in: directory.path)
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stdout.contains("Development CA: certs/dev-ca/ca.pem"))
        #expect(output.stdout.contains("applinks:shop.example:8443?mode=developer"))
        #expect(output.stdout.contains("webcredentials:shop.example:8443?mode=developer"))
        #expect(output.stdout.contains("applinks:links.example:8443?mode=developer"))
        #expect(output.stdout.contains("Certificate Trust Settings"))
        for name in ["shop.example", "links.example", "localhost"] {
            let verify = try Command.run(
                "openssl",
                [
                    "verify", "-CAfile", directory.path + "/certs/dev-ca/ca.pem", "-verify_hostname", name,
                    directory.path + "/certs/\(name)/fullchain.pem",
                ])
            #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
            let text = try Command.run(
                "openssl", ["x509", "-noout", "-text", "-in", directory.path + "/certs/\(name)/fullchain.pem"])
            #expect(text.stdout.contains("prime256v1") || text.stdout.contains("P-256"))
        }
        for key in ["certs/dev-ca/ca-key.pem", "certs/shop.example/privkey.pem"] {
            let attributes = try FileManager.default.attributesOfItem(atPath: directory.path + "/" + key)
            #expect((attributes[.posixPermissions] as? Int) == 0o600, "\(key)")
        }
        // A second run keeps the existing certificates.
        let again = try aasa(["certs", "dev"], in: directory.path)
        #expect(!again.stdout.contains("Issued certificates"))
    }

    @Test func serveRefusesABrokenConfigWithExitStatus2() throws {
        let directory = TemporaryDirectory("aasa-cli")
        try directory.write(
            "site-config/shop.example/site.json",
            #"{"universalLinks": {"apps": [{"appIDs": ["X.y"], "rules": [{"path": "/*"}]}, {"appIDs": ["ABCDE12345.com.a"], "rules": []}]}}"#
        )
        let output = try aasa(
            ["serve", "--dev", "--https-port", "\(freePort())", "--admin-port", "0"], in: directory.path)
        #expect(output.status == 2)
        #expect(
            output.stderr.contains("site-config/shop.example/site.json:1:42: error: [app-id-format]"),
            "\(output.stderr)")
        #expect(output.stderr.contains("[no-rules]"))
    }

    @Test func serveRunsTheSampleConfigAndStopsCleanlyOnSIGTERM() throws {
        let directory = TemporaryDirectory("aasa-cli")
        try directory.copy(RepositoryPaths.siteConfig, to: "site-config")
        let serve = try ServeProcess(in: directory.path, arguments: ["--dev"])
        #expect(serve.waitUntilHealthy())
        let response = try Curl.request(
            "https://shop.example:\(serve.port)/.well-known/apple-app-site-association",
            caFile: directory.path + "/certs/dev-ca/ca.pem", resolve: ("shop.example", serve.port))
        #expect(response.status == 200, "\(response.error)")
        #expect(response.text.contains("ABCDE12345.com.example.shop"))
        #expect(serve.terminate(within: 5) == 0)
    }

    @Test func serveWithNoWatchReloadsOnSIGHUPAndSaysSoInStatus() throws {
        let directory = TemporaryDirectory("aasa-cli")
        try directory.copy(RepositoryPaths.siteConfig, to: "site-config")
        let serve = try ServeProcess(in: directory.path, arguments: ["--dev", "--no-watch"])
        func status() -> String { (try? Curl.request("http://127.0.0.1:\(serve.admin)/status"))?.text ?? "" }
        var started = false
        for _ in 0..<TestTime.tries(100) where !started {
            usleep(100_000)
            started = status().contains(#""trigger": "start""#)
        }
        #expect(started)
        try directory.write(
            "site-config/shop.example/site.json", #"{"webCredentials": ["ABCDE12345.com.example.signal"]}"#)
        kill(serve.process.processIdentifier, SIGHUP)
        var reloaded = false
        for _ in 0..<TestTime.tries(100) where !reloaded {
            usleep(50_000)
            reloaded = status().contains(#""trigger": "signal""#)
        }
        #expect(reloaded, "\(status())")
        let response = try Curl.request(
            "https://shop.example:\(serve.port)/.well-known/apple-app-site-association",
            caFile: directory.path + "/certs/dev-ca/ca.pem", resolve: ("shop.example", serve.port))
        #expect(response.text == #"{"webcredentials":{"apps":["ABCDE12345.com.example.signal"]}}"#)
        #expect(serve.terminate() == 0)
    }

    static let appleExample = #"""
        { "applinks": { "details": [ { "appIDs": ["ABCDE12345.com.example.app"], "components": [
            { "#": "no_universal_links", "exclude": true },
            { "/": "/buy/*" },
            { "/": "/help/website/*", "exclude": true },
            { "/": "/help/*", "?": { "articleNumber": "????" } } ] } ] } }
        """#

    @Test func matchExplainsApplesExampleFile() throws {
        let directory = TemporaryDirectory("aasa-cli")
        let file = try directory.write("aasa", Self.appleExample)
        let output = try aasa(
            [
                "match", "--aasa", file, "https://example.com/buy/shoes",
                "https://example.com/help/website/faq?articleNumber=1234",
                "https://example.com/help/article",
            ], in: directory.path)
        #expect(output.status == 0, "\(output.stderr)")
        #expect(
            output.stdout.contains(
                """
                https://example.com/buy/shoes
                  verdict: match
                  opens:   ABCDE12345.com.example.app
                  rule:    applinks.details[0].components[1] {"/": "/buy/*"}
                """))
        #expect(output.stdout.contains("https://example.com/help/website/faq?articleNumber=1234\n  verdict: excluded"))
        #expect(output.stdout.contains("path matched, query item `articleNumber` was absent"))
    }

    @Test func matchJSONHasOneObjectPerURL() throws {
        let directory = TemporaryDirectory("aasa-cli")
        let file = try directory.write("aasa", Self.appleExample)
        let output = try aasa(
            [
                "match", "--aasa", file, "--json", "https://example.com/buy/x#no_universal_links",
                "https://example.com/help/a?articleNumber=1234",
            ],
            in: directory.path)
        let objects = output.stdout.split(separator: "\n").map {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(objects.count == 2)
        #expect(objects[0]?["verdict"] as? String == "excluded")
        #expect(objects[0]?["componentIndex"] as? Int == 0)
        #expect(objects[1]?["verdict"] as? String == "match")
        #expect(objects[1]?["appIDs"] as? [String] == ["ABCDE12345.com.example.app"])
        #expect(objects[1]?["detailsIndex"] as? Int == 0)
        #expect(objects[1]?["componentIndex"] as? Int == 3)
    }

    /// A URL over ``MatchURL/maximumLength`` is bad input: no rule is tried, and the reason names the limit.
    @Test func matchSaysAURLIsOverTheLengthLimit() throws {
        let directory = TemporaryDirectory("aasa-cli")
        let file = try directory.write("aasa", Self.appleExample)
        let url = "https://example.com/buy/" + String(repeating: "a", count: 2_048)
        let output = try aasa(["match", "--aasa", file, url], in: directory.path)
        #expect(output.status == 2)
        #expect(output.stdout.contains("verdict: invalid-url"), "\(output.stdout)")
        #expect(output.stdout.contains("bytes long, over the limit of 2048: no rule is tried"), "\(output.stdout)")
        let configured = try aasa(
            [
                "match", "--config", RepositoryPaths.siteConfig,
                "https://shop.example/" + String(repeating: "a", count: 2_048),
            ],
            in: directory.path)
        #expect(configured.status == 2)
        #expect(configured.stderr.contains("over the limit of 2048"), "\(configured.stderr)")
    }

    @Test func matchWithConfigUsesTheURLsHostAndNamesTheSiteRule() throws {
        let output = try aasa(
            [
                "match", "--config", RepositoryPaths.siteConfig, "https://links.example/R/abc",
                "https://shop.example/account/delete/x",
            ],
            in: RepositoryPaths.root)
        #expect(output.status == 0)
        #expect(
            output.stdout.contains(
                "rule:    universalLinks.apps[1].rules[1] (applinks.details[1].components[1]) {\"/\": \"/r/?*\"}"))
        #expect(output.stdout.contains("https://shop.example/account/delete/x\n  verdict: excluded"))
    }

    @Test func matchLegacyEvaluatesOnlyPaths() throws {
        let directory = TemporaryDirectory("aasa-cli")
        let file = try directory.write(
            "aasa",
            #"{"applinks": {"apps": [], "details": [{"appID": "ABCDE12345.com.a", "paths": ["NOT /videos/wwdc/2010/*", "/videos/wwdc/*"]}, {"appIDs": ["ABCDE12345.com.b"], "components": [{"/": "*"}]}]}}"#
        )
        let legacy = try aasa(
            ["match", "--aasa", file, "--legacy", "--json", "https://e.com/videos/wwdc/2010/x", "https://e.com/other"],
            in: directory.path)
        #expect(legacy.stdout.contains(#""verdict":"excluded""#))
        #expect(legacy.stdout.contains(#""url":"https://e.com/other","verdict":"no-match""#))
        let modern = try aasa(["match", "--aasa", file, "--json", "https://e.com/other"], in: directory.path)
        #expect(modern.stdout.contains(#""appIDs":["ABCDE12345.com.b"]"#))
    }

    @Test func matchBadInputExitsWith2() throws {
        let directory = TemporaryDirectory("aasa-cli")
        let file = try directory.write("aasa", "{ not json")
        #expect(try aasa(["match", "--aasa", file, "https://e.com/"], in: directory.path).status == 2)
        let good = try directory.write("good", Self.appleExample)
        #expect(try aasa(["match", "--aasa", good, "not a url"], in: directory.path).status == 2)
        #expect(
            try aasa(["match", "--config", RepositoryPaths.siteConfig, "https://unknown.example/"], in: directory.path)
                .status == 2)
    }

    @Test func checkPassesTheSampleConfigWithDevCertificates() throws {
        let directory = TemporaryDirectory("aasa-cli")
        try directory.copy(RepositoryPaths.siteConfig, to: "site-config")
        let missing = try aasa(["check"], in: directory.path)
        #expect(missing.status == 1)
        #expect(missing.stdout.contains("error: [certificate-missing] no certificate covers shop.example"))
        _ = try aasa(["certs", "dev"], in: directory.path)
        let output = try aasa(["check"], in: directory.path)
        #expect(output.status == 0, "\(output.stdout)")
        // The sample is clean: not even --strict finds anything.
        #expect(output.stdout == "0 errors, 0 warnings in 2 domains\n", "\(output.stdout)")
        #expect(try aasa(["check", "--strict"], in: directory.path).status == 0)
    }

    @Test func checkReportsEveryMistakeAtOnceWithExitStatus1() throws {
        let directory = TemporaryDirectory("aasa-cli")
        try directory.write(
            "site-config/shop.example/site.json",
            """
            {
              "legacyFormat": false,
              "universalLinks": {
                "apps": [{ "appIDs": ["abcde12345.com.example.shop"],
                           "rules": [{ "path": "/*" }, { "path": "/admin/*", "exclude": true }, { "path": "/$(category)/*" }] }]
              },
              "webCredential": ["ABCDE12345.com.example.shop"],
              "tests": [{ "url": "https://shop.example/admin/x", "staysOnWeb": true }]
            }
            """)
        let output = try aasa(["check", "--no-certificates"], in: directory.path)
        #expect(output.status == 1)
        let lines = output.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 7, "\(output.stdout)")
        #expect(lines[0].hasPrefix("site-config/shop.example/site.json:4:27: error: [app-id-format]"))
        #expect(lines.contains { $0.contains("warning: [unreachable-rule] this exclusion never applies") })
        #expect(lines.contains { $0.contains("error: [unknown-variable]") })
        #expect(lines.contains { $0.contains(#"error: [unknown-key] unknown key "webCredential""#) })
        #expect(lines.contains { $0.contains("error: [test-url]") })
        #expect(lines.last == "4 errors, 2 warnings in 1 domain")
        #expect(!output.stdout.contains("\u{1B}["), "no colour when not a terminal")

        let json = try aasa(["check", "--no-certificates", "--format", "json"], in: directory.path)
        let objects = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]]
        #expect(objects?.count == 6)
        #expect(objects?.first?["rule"] as? String == "app-id-format")
        #expect(objects?.first?["line"] as? Int == 4)
        #expect(objects?.first?["keyPath"] as? String == "universalLinks.apps[0].appIDs[0]")
    }

    @Test func checkAASALintsAnyFile() throws {
        let directory = TemporaryDirectory("aasa-cli")
        let file = try directory.write(
            "aasa", #"{"applinks": {"details": [{"appIDs": ["ABCDE12345.com.a"], "paths": ["NOT *", "/send"]}]}}"#)
        let output = try aasa(["check", "--aasa", file], in: directory.path)
        #expect(output.status == 0)
        #expect(
            output.stdout.contains(
                "warning: [unreachable-rule] this rule never applies: applinks.details[0].paths[0] above it already excludes every URL it matches"
            ))
        #expect(try aasa(["check", "--aasa", file, "--strict"], in: directory.path).status == 1)
    }

    @Test func checkExpiredAndMismatchedCertificates() throws {
        let directory = TemporaryDirectory("aasa-cli")
        try directory.copy(RepositoryPaths.siteConfig, to: "site-config")
        _ = try aasa(["certs", "dev"], in: directory.path)
        // A key from another certificate.
        try FileManager.default.removeItem(atPath: directory.path + "/certs/shop.example/privkey.pem")
        try FileManager.default.copyItem(
            atPath: directory.path + "/certs/links.example/privkey.pem",
            toPath: directory.path + "/certs/shop.example/privkey.pem")
        let output = try aasa(["check"], in: directory.path)
        #expect(output.status == 1)
        #expect(
            output.stdout.contains("certs/shop.example/privkey.pem: error: [certificate-key-mismatch]"),
            "\(output.stdout)")
    }

    /// Container-style start: every option from AASA_SERVER_* variables; --dev prints each fetch; the
    /// process switches to an unprivileged user after binding and keeps serving.
    @Test func serveTakesEnvironmentPrintsFetchesAndDropsPrivileges() throws {
        let directory = TemporaryDirectory("aasa-cli")
        try directory.copy(RepositoryPaths.siteConfig, to: "conf")
        _ = try aasa(["certs", "dev", "--config", "conf", "--certs", "tls"], in: directory.path)
        // The unprivileged user must be able to read the certificates it serves after the switch.
        _ = try Command.run("chmod", ["-R", "a+rX", directory.path])
        let output = directory.path + "/stdout.log"
        #expect(FileManager.default.createFile(atPath: output, contents: nil))
        let (port, admin) = (freePort(), freePort())
        let serve = try ServeProcess(
            in: directory.path, arguments: [],
            environment: [
                "AASA_SERVER_CONFIG": "conf", "AASA_SERVER_CERTS": "tls", "AASA_SERVER_HTTPS_PORT": "\(port)",
                "AASA_SERVER_ADMIN_PORT": "\(admin)", "AASA_SERVER_DEV": "1", "AASA_SERVER_USER": "nobody",
                "AASA_SERVER_ACCESS_LOG": "common",
            ], output: try FileHandle(forWritingTo: URL(fileURLWithPath: output)))
        var healthy = false
        for _ in 0..<TestTime.tries(100) where !healthy {
            usleep(100_000)
            healthy = (try? Curl.request("http://127.0.0.1:\(admin)/healthz"))?.status == 200
        }
        #expect(healthy)
        let response = try Curl.request(
            "https://shop.example:\(port)/.well-known/apple-app-site-association",
            headers: ["User-Agent: AASA-Bot/1.0.0"],
            caFile: directory.path + "/tls/dev-ca/ca.pem", resolve: ("shop.example", port))
        #expect(response.status == 200, "\(response.error)")
        let uid = try String(contentsOfFile: "/proc/\(serve.process.processIdentifier)/status", encoding: .utf8)
            .split(separator: "\n").first { $0.hasPrefix("Uid:") }
        #expect(
            uid?.split(separator: "\t").dropFirst().allSatisfy { $0 == "65534" } == true, "\(String(describing: uid))")
        usleep(200_000)
        let printed = try String(contentsOfFile: output, encoding: .utf8)
        #expect(
            printed.contains(
                "Apple's CDN fetched shop.example/.well-known/apple-app-site-association from 127.0.0.1 → 200"),
            "\(printed)")
        #expect(printed.contains("\"GET /.well-known/apple-app-site-association HTTP/1.1\" 200 "))
        #expect(serve.terminate(within: 5) == 0)
    }

    @Test func anInvalidEnvironmentValueIsAUsageError() throws {
        let output = try Command.run(
            RepositoryPaths.executable, ["serve"],
            environment: ProcessInfo.processInfo.environment.merging(["AASA_SERVER_HTTPS_PORT": "https"]) { _, new in
                new
            })
        #expect(output.status == 64)
        #expect(output.stderr.contains("AASA_SERVER_HTTPS_PORT=https is not a valid UInt16"), "\(output.stderr)")
    }

    /// `--shard` and `--session-ticket-lifetime` are checked before anything is read, from the flag or its variable.
    @Test func aShardOrTicketLifetimeOutOfRangeIsAUsageError() throws {
        let flag = try Command.run(RepositoryPaths.executable, ["serve", "--shard", "2/2"])
        #expect(flag.status == 64)
        #expect(flag.stderr.contains("--shard: shard 2/2: the shard index must be 0..<2"), "\(flag.stderr)")
        let variable = try Command.run(
            RepositoryPaths.executable, ["serve"],
            environment: ProcessInfo.processInfo.environment.merging(["AASA_SERVER_SHARD": "1/0"]) { _, new in new })
        #expect(variable.status == 64)
        #expect(variable.stderr.contains("the shard count must be 1...100"), "\(variable.stderr)")
        let lifetime = try Command.run(RepositoryPaths.executable, ["serve", "--session-ticket-lifetime", "30"])
        #expect(lifetime.status == 64)
        #expect(
            lifetime.stderr.contains("--session-ticket-lifetime must be 0 (off) or between 60"), "\(lifetime.stderr)")
    }

    /// A bad value from a variable names the variable to fix; a trust-anchor file that is not there is a usage
    /// error, not a check that fails later as unreachable.
    @Test func aBadValueFromAVariableNamesItAndAMissingTrustFileIsAUsageError() throws {
        func environment(_ extra: [String: String]) -> [String: String] {
            ProcessInfo.processInfo.environment.merging(extra) { _, new in new }
        }
        let interval = try Command.run(
            RepositoryPaths.executable, ["serve"], environment: environment(["AASA_SERVER_CDN_CHECK_INTERVAL": "5s"]))
        #expect(interval.status == 64)
        #expect(
            interval.stderr.contains("--cdn-check-interval '5s'")
                && interval.stderr.contains("(the value comes from AASA_SERVER_CDN_CHECK_INTERVAL)"),
            "\(interval.stderr)")
        let url = try Command.run(
            RepositoryPaths.executable, ["serve"], environment: environment(["AASA_SERVER_APPLE_CDN": "ftp://x"]))
        #expect(url.status == 64)
        #expect(
            url.stderr.contains(
                "--apple-cdn 'ftp://x' is not an http(s) URL (the value comes from AASA_SERVER_APPLE_CDN)"),
            "\(url.stderr)")
        // Given on the command line, the flag alone is named.
        let flag = try Command.run(
            RepositoryPaths.executable, ["serve", "--acme-retry-min", "0"],
            environment: environment(["AASA_SERVER_ACME_RETRY_MIN": "0"]))
        #expect(flag.status == 64 && !flag.stderr.contains("comes from"), "\(flag.stderr)")
        let retry = try Command.run(
            RepositoryPaths.executable, ["serve"], environment: environment(["AASA_SERVER_ACME_RETRY_MIN": "0"]))
        #expect(retry.stderr.contains("(the value comes from AASA_SERVER_ACME_RETRY_MIN)"), "\(retry.stderr)")
        let both = try Command.run(
            RepositoryPaths.executable, ["certs", "acme", "--standalone", "--acme-webroot", "/tmp"])
        #expect(both.status == 64 && both.stderr.contains("one way, not both"), "\(both.stderr)")
        for arguments in [
            ["serve", "--cdn-cacert", "/nonexistent/ca.pem"], ["cdn", "--cacert", "/nonexistent/ca.pem"],
        ] {
            let missing = try Command.run(RepositoryPaths.executable, arguments)
            #expect(missing.status == 64, "\(arguments)")
            #expect(missing.stderr.contains("'/nonexistent/ca.pem' is not a readable file"), "\(missing.stderr)")
        }
    }
}
