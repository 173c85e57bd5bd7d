import AASATestSupport
import Testing

@testable import AASACore

@Suite struct SiteConfigTests {
    @Test func decodesEveryKey() throws {
        let loaded = loadSite(
            #"""
            {"$schema": "x", "legacyFormat": false, "cacheControl": "max-age=60",
             "universalLinks": {"defaults": {"caseSensitive": false, "percentEncoded": true}, "variables": {"v": ["a", "b"]},
               "apps": [{"appIDs": ["ABCDE12345.com.a"], "defaults": {"percentEncoded": false},
                 "rules": [{"path": "/p", "query": {"q": "1"}, "fragment": "f", "exclude": true, "comment": "c", "caseSensitive": true, "percentEncoded": true},
                           {"query": "whole=*"}], "legacyPaths": ["/p"]}]},
             "webCredentials": ["ABCDE12345.com.a"], "appClips": ["ABCDE12345.com.a.Clip"], "handoff": ["ABCDE12345.com.a"],
             "tests": [{"url": "https://shop.example/p", "staysOnWeb": true}, {"url": "https://shop.example/x?whole=1", "opensApp": "ABCDE12345.com.a"}]}
            """#)
        #expect(loaded.diagnostics.isEmpty, "\(loaded.diagnostics)")
        let config = try #require(loaded.config)
        #expect(config.legacyFormat == false)
        #expect(config.cacheControl == "max-age=60")
        #expect(config.universalLinks?.defaults == MatchingDefaults(caseSensitive: false, percentEncoded: true))
        #expect(config.universalLinks?.variables == [SubstitutionVariable(name: "v", values: ["a", "b"])])
        let app = try #require(config.universalLinks?.apps.first)
        #expect(
            app.rules[0]
                == ComponentPattern(
                    path: "/p", query: .items([QueryItemPattern(name: "q", pattern: "1")]), fragment: "f",
                    exclude: true, comment: "c", caseSensitive: true, percentEncoded: true))
        #expect(app.rules[1].query == .whole("whole=*"))
        #expect(app.legacyPaths == ["/p"])
        #expect(config.tests.map(\.expectation) == [.staysOnWeb, .opensApp("ABCDE12345.com.a")])
        #expect(config.appClips == ["ABCDE12345.com.a.Clip"])
    }

    @Test func reportsEveryProblemWithLineColumnAndKeyPath() {
        let loaded = loadSite(
            """
            {
              "universalLink": {},
              "cacheControl": 5,
              "webCredentials": ["abcde12345.com.a", "com.example.b", "ABCDE12345.com.c", "ABCDE12345.com.c"],
              "tests": [{"url": "https://shop.example/"}]
            }
            """)
        let lines = loaded.diagnostics.map(\.description)
        #expect(
            lines == [
                #"shop.example/site.json:2:3: error: [unknown-key] unknown key "universalLink" (at universalLink); fix: did you mean "universalLinks"?"#,
                "shop.example/site.json:3:19: error: [wrong-type] expected a string, found number (at cacheControl)",
                "shop.example/site.json:4:22: error: [app-id-format] 'abcde12345.com.a' has a lower-case team ID (at webCredentials[0]); fix: write it in upper case: ABCDE12345.com.a",
                "shop.example/site.json:4:42: error: [app-id-format] 'com.example.b' is not TEAMID.bundle.id (team IDs are 10 characters, 'com' has 3) (at webCredentials[1]); fix: copy the Team ID from the Membership page of your Apple Developer account",
                "shop.example/site.json:4:79: error: [duplicate-app] 'ABCDE12345.com.c' is listed twice (at webCredentials[3]); fix: remove the second entry",
                #"shop.example/site.json:5:13: error: [test-expectation] a test needs exactly one of "opensApp" or "staysOnWeb" (at tests[0]); fix: add "opensApp": "TEAMID.bundle.id" or "staysOnWeb": true"#,
            ])
        #expect(!loaded.isPublishable)
    }

    /// Each section's reader makes a key path only for a finding: a finding deep in every one of them still names
    /// its whole path, and its hint is written as it was.
    @Test func findingsDeepInEverySectionNameTheirWholePath() throws {
        let loaded = loadSite(
            #"""
            {"universalLinks": {"defaults": {"caseSensitive": "no"},
               "apps": [{"appIDs": ["ABCDE12345.com.a"], "defaults": {"percentEncoded": 1},
                 "rules": [{"path": "/a"}, {"path": 7, "query": {"q": 2}, "exclude": "yes"}]}]},
             "android": {"apps": [{"package": "com.a", "fingerprints": [3],
               "rules": [{"path": "/a"}, {"fragment": false}]}]},
             "smartAppBanner": {"appStoreID": "123456789", "appArgument": 5},
             "hsts": {"maxAge": "long"},
             "tests": [{"url": "https://shop.example/a", "opensApp": "ABCDE12345.com.a"}, {"url": 4, "staysOnWeb": true}]}
            """#)
        let wrongTypes = loaded.diagnostics.filter { $0.description.contains("[wrong-type]") }
        let expected: Set<String> = [
            "universalLinks.defaults.caseSensitive", "universalLinks.apps[0].defaults.percentEncoded",
            "universalLinks.apps[0].rules[1].path", "universalLinks.apps[0].rules[1].exclude",
            "universalLinks.apps[0].rules[1].query.q", "tests[1].url", "android.apps[0].fingerprints[0]",
            "android.apps[0].rules[1].fragment", "hsts.maxAge", "smartAppBanner.appArgument",
        ]
        #expect(wrongTypes.count == expected.count, "\(wrongTypes.map(\.description))")
        #expect(Set(wrongTypes.map { $0.keyPath ?? "" }) == expected, "\(wrongTypes.map(\.description))")
        let banner = try #require(wrongTypes.first { $0.keyPath == "smartAppBanner.appArgument" })
        #expect(
            banner.hint
                == #"leave it out for the page's URL, write a template such as "shopapp://open{path}", or false"#)
    }

    @Test func validationNamesTheAppIDAndTheFix() {
        let loaded = loadSite(
            """
            {
              "webCredentials": ["abcde12345.com.a", "com.example.b", "ABCDE12345.com.c", "ABCDE12345.com.c", "TEAMID.com.d"]
            }
            """)
        let lines = loaded.diagnostics.map(\.description)
        #expect(
            lines == [
                "shop.example/site.json:2:22: error: [app-id-format] 'abcde12345.com.a' has a lower-case team ID (at webCredentials[0]); fix: write it in upper case: ABCDE12345.com.a",
                "shop.example/site.json:2:42: error: [app-id-format] 'com.example.b' is not TEAMID.bundle.id (team IDs are 10 characters, 'com' has 3) (at webCredentials[1]); fix: copy the Team ID from the Membership page of your Apple Developer account",
                "shop.example/site.json:2:79: error: [duplicate-app] 'ABCDE12345.com.c' is listed twice (at webCredentials[3]); fix: remove the second entry",
                "shop.example/site.json:2:99: error: [app-id-format] 'TEAMID.com.d' still has the placeholder 'TEAMID' as its team ID (at webCredentials[4]); fix: use your real Team ID from the Apple Developer account",
            ])
    }

    @Test func anEntryWithoutAppsOrRulesIsAnError() {
        let loaded = loadSite(#"{"universalLinks": {"apps": [{"appIDs": [], "rules": []}]}}"#)
        #expect(loaded.diagnostics.map(\.rule) == [.noApp, .noRules])
        #expect(!loaded.isPublishable)
    }

    @Test func variablesFollowApplesRules() {
        let loaded = loadSite(
            #"{"universalLinks": {"variables": {"a(b": ["x"], "e": [], "n": ["$(other)"]}, "apps": []}}"#)
        #expect(loaded.diagnostics.map(\.rule) == [.variableName, .variableEmpty, .variableNested])
    }

    @Test(arguments: ["shop.example", "xn--bcher-kva.example", "a-b.c"])
    func acceptsHostNameFolders(name: String) {
        #expect(SiteConfigLoader.domainNameProblem(name) == nil)
    }

    @Test(arguments: [
        "Shop.example", "shop_example", "-a.example", "a..b", "bücher.example", "a/b", "a-.example", "example.",
        ".example", "example.a-", "a.-", "-", ".", String(repeating: "a", count: 64) + ".example",
    ])
    func refusesFoldersThatAreNotHostNames(name: String) {
        #expect(SiteConfigLoader.domainNameProblem(name) != nil)
    }

    @Test func namesWhyAFolderIsNotAHostName() {
        #expect(SiteConfigLoader.domainNameProblem(String(repeating: "a", count: 63) + ".example") == nil)
        #expect(SiteConfigLoader.domainNameProblem("a-b--c.x-1.example") == nil)
        let upper = SiteConfigLoader.domainNameProblem("Shop.Example")
        #expect(upper?.message == "folder 'Shop.Example' has upper-case letters; host names are matched in lower case")
        #expect(upper?.hint == "rename it to 'shop.example'")
        // Upper case beyond ASCII is named as upper case too, as lower-casing the whole name finds it.
        #expect(SiteConfigLoader.domainNameProblem("ÉCOLE.example")?.message.contains("upper-case") == true)
        #expect(SiteConfigLoader.domainNameProblem("école.example")?.message.contains("xn-- Punycode") == true)
        #expect(
            SiteConfigLoader.domainNameProblem("a..b")?.hint
                == "rename the folder to the domain as it appears in the entitlement")
        #expect(SiteConfigLoader.domainNameProblem("")?.message.contains("empty or longer than 253") == true)
    }

    @Test func namesWhyAnAndroidPackageIsMalformed() {
        #expect(AndroidAppRule.packageProblem("com.example.app") == nil)
        #expect(AndroidAppRule.packageProblem("Com.Example_2.a1") == nil)
        let twoParts = "is not an Android package name: it needs at least two parts, e.g. com.example.app"
        #expect(AndroidAppRule.packageProblem("app") == "'app' " + twoParts)
        #expect(AndroidAppRule.packageProblem("1app") == "'1app' " + twoParts)
        #expect(AndroidAppRule.packageProblem("") == "'' " + twoParts)
        let part = { (name: String, part: String) in
            "'\(name)' is not an Android package name: '\(part)' must start with a letter and hold only letters, "
                + "digits and '_'"
        }
        #expect(AndroidAppRule.packageProblem("com.1example.app") == part("com.1example.app", "1example"))
        #expect(AndroidAppRule.packageProblem("com..app") == part("com..app", ""))
        #expect(AndroidAppRule.packageProblem("com.app.") == part("com.app.", ""))
        #expect(AndroidAppRule.packageProblem("com.ex-ample") == part("com.ex-ample", "ex-ample"))
        #expect(AndroidAppRule.packageProblem("com.exämple") == part("com.exämple", "exämple"))
    }

    @Test func loadsEveryDomainFolderAndSkipsHiddenOnes() throws {
        let loaded = try SiteConfigLoader().loadAll(directory: RepositoryPaths.siteConfig)
        #expect(loaded.map(\.domain) == ["links.example", "shop.example"])
        #expect(loaded.allSatisfy { $0.isPublishable })
    }

    @Test func aMissingConfigFolderIsOneClearError() {
        #expect(throws: Diagnostic.self) { _ = try SiteConfigLoader().loadAll(directory: "/nonexistent/site-config") }
    }

    @Test func aFailingTestURLStopsTheDomainNamingTheURLAndTheRule() {
        let loaded = loadSite(
            #"""
            {"universalLinks": {"apps": [{"appIDs": ["ABCDE12345.com.a"], "rules": [{"path": "/buy/*", "exclude": true}, {"path": "/*"}]}]},
             "tests": [{"url": "https://shop.example/buy/1", "opensApp": "ABCDE12345.com.a"},
                       {"url": "https://shop.example/sell/1", "staysOnWeb": true},
                       {"url": "https://shop.example/other", "opensApp": "ABCDE12345.com.a"},
                       {"url": "https://elsewhere.example/", "staysOnWeb": true}]}
            """#)
        #expect(!loaded.isPublishable)
        let messages = loaded.diagnostics.filter { $0.rule == .testURL }.map(\.message)
        #expect(
            messages == [
                #"test URL 'https://shop.example/buy/1' should open ABCDE12345.com.a but stays on the web: rule universalLinks.apps[0].rules[0] {"/": "/buy/*", "exclude": true} decided (excluded by applinks.details[0].components[0], which is "exclude": true: the URL is not a universal link and later rules are not tried)"#,
                #"test URL 'https://shop.example/sell/1' should stay on the web but opens ABCDE12345.com.a: rule universalLinks.apps[0].rules[1] {"/": "/*"} decided (matched by applinks.details[0].components[1]: opens ABCDE12345.com.a)"#,
                "test URL 'https://elsewhere.example/' is not on shop.example",
            ])
        #expect(loaded.diagnostics.first { $0.rule == .testURL }?.line == 2)
    }

    @Test func theSampleTestURLsPass() throws {
        for domain in ["shop.example", "links.example"] {
            let loaded = SiteConfigLoader().loadDomain(
                domain: domain, file: RepositoryPaths.siteConfig + "/\(domain)/site.json")
            #expect(!loaded.diagnostics.contains { $0.rule == .testURL })
            #expect((loaded.config?.tests.count ?? 0) >= 4)
        }
    }

    @Test func anUnknownVariableIsAnErrorAtTheRule() {
        let loaded = loadSite(
            #"{"universalLinks": {"apps": [{"appIDs": ["ABCDE12345.com.a"], "rules": [{"path": "/$(nope)/*"}]}]}}"#)
        let diagnostic = loaded.diagnostics.first { $0.rule == .unknownVariable }
        #expect(diagnostic?.severity == .error)
        #expect(diagnostic?.keyPath == "universalLinks.apps[0].rules[0].path")
        #expect(!loaded.isPublishable)
    }
}
