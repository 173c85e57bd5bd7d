import AASATestSupport
import Foundation
import Testing

/// `match` as a web team uses it when a link misbehaves: a broken file read the way iOS reads it, Android 15's
/// dynamic rules, every platform side by side; `check --assetlinks`; and `authsrv` end to end.
@Suite struct PlatformMatchTests {
    func aasa(_ arguments: [String], in directory: String) throws -> Command.Output {
        try Command.run(RepositoryPaths.executable, arguments, currentDirectory: directory, timeout: 60)
    }

    /// A real-world kind of broken file: a misspelled key, a leftover note, a `?` with a boolean, a `"/": 5`.
    static let broken = #"""
        {"applinks": {"details": [{"appIDs": ["ABCDE12345.com.example.app"], "components": [
          {"/": "/Buy/*", "casesensitive": false, "note": "sale"},
          {"/": 5},
          {"/": "/s", "?": {"a": "1", "flag": true}}]}]},
         "note": "leftover from the old file"}
        """#

    @Test func aBrokenFileGetsWhatIPhonesDoAndWhatIsWrongInOneAnswer() throws {
        let directory = TemporaryDirectory("aasa-match")
        let file = try directory.write("aasa", Self.broken)
        let human = try aasa(
            ["match", "--aasa", file, "https://example.com/Buy/1", "https://example.com/s?a=2"], in: directory.path)
        #expect(human.status == 0, "\(human.stderr)")
        #expect(human.stdout.contains("verdict: match"))
        #expect(human.stdout.contains("applinks.details[0].components[2] {\"/\": \"/s\"}"), "\(human.stdout)")
        #expect(human.stdout.contains("iOS's behaviour here is not documented"))
        #expect(human.stdout.contains("what `check` says about"))
        #expect(
            human.stdout.contains(#"unknown key "casesensitive""#)
                && human.stdout.contains(#"did you mean "caseSensitive"?"#))
        // The misspelled key is just unknown: matching stays case-sensitive.
        let json = try aasa(["match", "--aasa", file, "--json", "https://example.com/buy/1"], in: directory.path)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any], "\(json.stdout)")
        #expect(object["verdict"] as? String == "no-match")
        let findings = try #require(object["findings"] as? [String])
        #expect(findings.contains { $0.contains("[unknown-key]") && $0.contains("note") })
        #expect(findings.contains { $0.contains("[wrong-type]") })
        // Only a file that is not JSON at all is refused, saying iOS ignores it.
        let notJSON = try directory.write("html", "<html>not found</html>")
        let refused = try aasa(["match", "--aasa", notJSON, "https://example.com/"], in: directory.path)
        #expect(refused.status == 2 && refused.stderr.contains("iOS ignores the whole file"), "\(refused.stderr)")
    }

    /// A domain whose Android rules mirror its Apple rules, with a `*` that parts the platforms.
    static func config(in directory: TemporaryDirectory) throws -> String {
        _ = try directory.write(
            "site-config/docs.example/site.json",
            #"""
            {"universalLinks": {"apps": [{"appIDs": ["ABCDE12345.com.example.docs"],
               "rules": [{"path": "/*/edit", "exclude": true}, {"path": "/*"}]}]},
             "android": {"apps": [{"package": "com.example.docs",
               "fingerprints": ["14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5"],
               "rulesFrom": "ABCDE12345.com.example.docs"}]},
             "authsrv": ["ABCDE12345.com.example.sso"]}
            """#)
        return directory.path + "/site-config"
    }

    @Test func allPlatformsShowsWhereIOSAndAndroidPartWays() throws {
        let directory = TemporaryDirectory("aasa-platforms")
        let config = try Self.config(in: directory)
        let result = try aasa(
            [
                "match", "--config", config, "--all-platforms", "https://docs.example/a/edit",
                "https://docs.example/a/b/edit",
            ],
            in: directory.path)
        #expect(result.status == 0, "\(result.stderr)")
        let blocks = result.stdout.components(separatedBy: "https://docs.example/a/b/edit")
        // /a/edit: excluded everywhere; /a/b/edit: Apple's `*` spans a/b, Android's stops at the first slash.
        #expect(!blocks[0].contains("disagree") && blocks[0].contains("iOS 13+:     excluded"), "\(result.stdout)")
        #expect(blocks.count == 2 && blocks[1].contains("the platforms disagree"), "\(result.stdout)")
        #expect(
            blocks[1].contains("iOS 13+:     excluded") && blocks[1].contains("Android 15+: match (com.example.docs)"))
        let json = try aasa(
            ["match", "--config", config, "--all-platforms", "--json", "https://docs.example/a/b/edit"],
            in: directory.path)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["disagree"] as? Bool == true)
        #expect((object["android"] as? [String: Any])?["verdict"] as? String == "match")
        // The iOS rules are named in site.json terms, as on the dashboard.
        let ios = try #require(object["ios"] as? [String: Any])
        #expect(ios["siteRule"] as? String == "universalLinks.apps[0].rules[0]", "\(ios)")
        #expect(object["legacyEntries"] as? Bool != nil)
        // --android alone, and `check` warns with the URL that shows it.
        let android = try aasa(
            ["match", "--config", config, "--android", "--json", "https://docs.example/a/edit"], in: directory.path)
        #expect(android.stdout.contains(#""verdict":"excluded""#) && android.stdout.contains(#""ruleIndex":0"#))
        let check = try aasa(["check", "--config", config, "--no-certificates"], in: directory.path)
        #expect(check.stdout.contains("[android-wildcard-differs]"), "\(check.stdout)")
        #expect(check.stdout.contains("https://docs.example/"), "\(check.stdout)")
    }

    @Test func assetLinksFilesAreMatchedAndCheckedAsAndroidReadsThem() throws {
        let directory = TemporaryDirectory("aasa-assetlinks")
        let file = try directory.write(
            "assetlinks.json",
            #"""
            [{"relation": ["delegate_permission/common.handle_all_urls"],
              "target": {"namespace": "android_app", "package_name": "com.example.app", "sha256_cert_fingerprints": []},
              "relation_extensions": {"delegate_permission/common.handle_all_urls": {"dynamic_app_link_components": [
                {"?": {"dl": "*", "in_app": "true"}}, {"/": "*", "exclude": true}]}}}]
            """#)
        let result = try aasa(
            [
                "match", "--assetlinks", file, "--package", "com.example.app",
                "https://example.com/?lang=en&in_app=true&tz=pst&dl=abc", "https://example.com/?lang=en&dl=abc",
            ], in: directory.path)
        #expect(result.status == 0)
        #expect(result.stdout.contains("verdict: match (Android 15+"), "\(result.stdout)")
        #expect(result.stdout.contains("verdict: excluded"))
        #expect(try aasa(["check", "--assetlinks", file], in: directory.path).status == 0)
        let broken = try directory.write(
            "broken.json",
            #"[{"relation": ["delegate_permission/common.handle_all_urls"], "target": {"namespace": "android_app", "package_name": "com.a", "sha256_cert_fingerprints": []}, "relation_extensions": {"delegate_permission/common.handle_all_urls": {"dynamic_app_link_components": [{"?": "dl=*"}]}}}]"#
        )
        let check = try aasa(["check", "--assetlinks", broken], in: directory.path)
        #expect(check.status == 1 && check.stdout.contains("[android-dynamic-rules] com.a:"), "\(check.stdout)")
        let manifest = try aasa(["match", "--assetlinks", broken, "https://example.com/x"], in: directory.path)
        #expect(manifest.stdout.contains("verdict: manifest"))
    }

    @Test func authsrvIsGeneratedImportedAndListedAmongTheEntitlements() throws {
        let directory = TemporaryDirectory("aasa-authsrv")
        let config = try Self.config(in: directory)
        // Generated, and kept by an import round trip.
        let check = try aasa(
            ["check", "--config", config, "--no-certificates", "--format", "json"], in: directory.path)
        #expect(!check.stdout.contains("\"error\""), "\(check.stdout)")
        let file = try directory.write(
            "aasa.json",
            #"{"authsrv": {"apps": ["ABCDE12345.com.example.sso", "bad-id"]}, "webcredentials": {"apps": ["ABCDE12345.com.example.sso"]}}"#
        )
        let lint = try aasa(["check", "--aasa", file], in: directory.path)
        #expect(lint.stdout.contains("authsrv.apps[1]") && lint.stdout.contains("[app-id-format]"), "\(lint.stdout)")
        let good = try directory.write("good.json", #"{"authsrv": {"apps": ["ABCDE12345.com.example.sso"]}}"#)
        let imported = try aasa(
            ["import", good, "--domain", "sso.example", "--config", config], in: directory.path)
        #expect(imported.status == 0, "\(imported.stderr)")
        let written = try String(contentsOfFile: config + "/sso.example/site.json", encoding: .utf8)
        #expect(written.contains(#""authsrv""#) && written.contains("ABCDE12345.com.example.sso"), "\(written)")
        // certs dev lists the entitlement.
        let dev = try aasa(
            ["certs", "dev", "--config", config, "--certs", directory.path + "/certs", "--domain", "docs.example"],
            in: directory.path)
        #expect(dev.stdout.contains("authsrv:docs.example"), "\(dev.stdout)")
    }
}
