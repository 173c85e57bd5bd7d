import AASATestSupport
import Foundation
import Testing

@testable import AASACore

/// Android's assetlinks.json: fingerprint normalisation, generation from the android section, import.
@Suite struct AssetLinksTests {
    static let fingerprint =
        "14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5"

    @Test(arguments: [
        "14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5",
        "14:6d:e9:83:c5:73:06:50:d8:ee:b9:95:2f:34:fc:64:16:a0:83:42:e6:1d:be:a8:8a:04:96:b2:3f:cf:44:e5",
        "146DE983C5730650D8EEB9952F34FC6416A08342E61DBEA88A0496B23FCF44E5",
        "146de983c5730650d8eeb9952f34fc6416a08342e61dbea88a0496b23fcf44e5",
        " 146de983c5730650d8eeb9952f34fc6416a08342e61dbea88a0496b23fcf44e5 ",
    ])
    func fingerprintsNormaliseToUpperCaseColonPairs(text: String) {
        #expect(CertificateFingerprint.normalized(text) == Self.fingerprint)
        #expect(CertificateFingerprint.problem(text) == nil)
    }

    @Test(arguments: [
        ("", "empty"),
        ("YOUR_RELEASE_SHA256_FINGERPRINT_HERE", "placeholder"),
        ("SHA_CERT", "placeholder"),
        (
            "A:C6:17:45:DC:09:03:78:6F:B9:ED:E6:2A:96:2B:39:9F:73:48:F0:BB:6F:89:9B:83:32:66:75:91:03:3B:9C",
            "byte 1 is 'A'"
        ),
        (
            "6A:3D:F9:2D:6C:70:67:5F:7D:9D:72:26:9F:D0:C5:10:34:53:77:ab:9C:AA:97:20:22:42:24:AD:AF:81:9D:9",
            "byte 32 is '9'"
        ),
        (
            "14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44",
            "has 31 bytes"
        ),
        ("14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42", "SHA-1"),
        ("146DE983C5730650D8EEB9952F34FC6416A08342E61DBEA88A0496B23FCF44", "62 hex digits"),
        // The length of a well-formed fingerprint, but not one: these go past the byte-wise fast path.
        (
            "14:6D:E9:83:G5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5",
            "byte 5 is 'G5'"
        ),
        (
            "14-6D-E9-83-C5-73-06-50-D8-EE-B9-95-2F-34-FC-64-16-A0-83-42-E6-1D-BE-A8-8A-04-96-B2-3F-CF-44-E5",
            "not hexadecimal"
        ),
        ("146DE983C5730650D8EEB9952F34FC6416A08342E61DBEA88A0496B23FCF44É5", "not hexadecimal"),
    ])
    func malformedFingerprintsAreExplained(text: String, expected: String) {
        #expect(CertificateFingerprint.normalized(text) == nil)
        let problem = CertificateFingerprint.problem(text) ?? ""
        #expect(problem.contains(expected), "\(problem)")
    }

    @Test func relationsFollowWebCredentialsAndExplicitSettings() throws {
        let loaded = loadSite(
            """
            {"webCredentials": ["ABCDE12345.com.example.shop"],
             "android": {"apps": [
               {"package": "com.example.shop", "fingerprints": ["\(Self.fingerprint.lowercased())"]},
               {"package": "com.example.links", "fingerprints": ["\(Self.fingerprint)"], "loginCredentials": false},
               {"package": "com.example.pass", "fingerprints": ["\(Self.fingerprint)"], "appLinks": false}
             ]}}
            """)
        #expect(!loaded.diagnostics.hasErrors, "\(loaded.diagnostics)")
        let text = String(decoding: try #require(loaded.assetLinks?.bytes), as: UTF8.self)
        let all = #"["delegate_permission/common.handle_all_urls","delegate_permission/common.get_login_creds"]"#
        #expect(
            text == """
                [{"relation":\(all),"target":{"namespace":"android_app","package_name":"com.example.shop","sha256_cert_fingerprints":["\(Self.fingerprint)"]}},\
                {"relation":["delegate_permission/common.handle_all_urls"],"target":{"namespace":"android_app","package_name":"com.example.links","sha256_cert_fingerprints":["\(Self.fingerprint)"]}},\
                {"relation":["delegate_permission/common.get_login_creds"],"target":{"namespace":"android_app","package_name":"com.example.pass","sha256_cert_fingerprints":["\(Self.fingerprint)"]}}]
                """)
    }

    @Test func rulesFromMirrorsUniversalLinkRulesAsDynamicComponents() throws {
        let loaded = loadSite(
            """
            {"universalLinks": {"apps": [{"appIDs": ["ABCDE12345.com.example.shop"],
               "rules": [{"path": "/account/*", "exclude": true, "caseSensitive": false},
                         {"path": "/buy/*", "query": {"ref": "?*"}, "fragment": "top"}]}]},
             "android": {"apps": [{"package": "com.example.shop", "fingerprints": ["\(Self.fingerprint)"],
               "rulesFrom": "ABCDE12345.com.example.shop"}]}}
            """)
        #expect(!loaded.diagnostics.hasErrors, "\(loaded.diagnostics)")
        let text = String(decoding: try #require(loaded.assetLinks?.bytes), as: UTF8.self)
        #expect(
            text.contains(
                ##""relation_extensions":{"delegate_permission/common.handle_all_urls":{"dynamic_app_link_components":[{"/":"/account/*","exclude":true},{"/":"/buy/*","?":{"ref":"?*"},"#":"top"}]}}"##
            ), "\(text)")
    }

    @Test func aDomainWithoutAndroidSectionHasNoAssetLinks() {
        #expect(loadSite(#"{"webCredentials": ["ABCDE12345.com.example.shop"]}"#).assetLinks == nil)
    }

    @Test func malformedFingerprintIsReportedWithFileLineColumnKeyAndFix() {
        let loaded = loadSite(
            """
            {
              "android": {"apps": [{"package": "com.example.shop",
                "fingerprints": ["14:6D:E9"]}]}
            }
            """)
        let finding = loaded.diagnostics.first { $0.rule == .androidFingerprint }
        #expect(finding?.line == 3)
        #expect(finding?.column == 22)
        #expect(finding?.keyPath == "android.apps[0].fingerprints[0]")
        #expect(finding?.message.contains("has 3 bytes") == true)
        #expect(finding?.hint?.contains("keytool") == true)
        #expect(!loaded.isPublishable)
    }

    @Test func repeatedFingerprintsAndPackagesAreNamedAtTheRepeat() {
        let lower = Self.fingerprint.lowercased().replacingOccurrences(of: ":", with: "")
        let loaded = loadSite(
            """
            {"webCredentials": ["ABCDE12345.com.example.shop"],
             "android": {"apps": [
               {"package": "com.example.shop", "fingerprints": ["\(Self.fingerprint)", "\(lower)"]},
               {"package": "com.example.shop", "fingerprints": ["\(Self.fingerprint)"], "appLinks": false},
               {"package": "com.example.shop", "fingerprints": ["\(Self.fingerprint)"]}]}}
            """)
        let fingerprints = loaded.diagnostics.filter { $0.rule == .duplicateFingerprint }
        #expect(fingerprints.map(\.keyPath) == ["android.apps[0].fingerprints[1]"], "\(loaded.diagnostics)")
        #expect(fingerprints.first?.message == "fingerprint \(Self.fingerprint) is listed twice")
        // The second entry has other permissions (no App Links); the third repeats the first.
        let packages = loaded.diagnostics.filter { $0.rule == .duplicatePackage }
        #expect(packages.map(\.keyPath) == ["android.apps[2].package"], "\(loaded.diagnostics)")
        #expect(packages.first?.message.contains("first at android.apps[0]") == true)
    }

    /// Golden file: the exact assetlinks.json served for the sample domain. Regenerate with AASA_UPDATE_GOLDEN=1.
    @Test func sampleDomainGeneratesItsGoldenAssetLinks() throws {
        let loaded = SiteConfigLoader().loadDomain(
            domain: "shop.example", file: RepositoryPaths.siteConfig + "/shop.example/site.json")
        let bytes = try #require(loaded.assetLinks?.bytes)
        let golden = RepositoryPaths.fixtures + "/golden/shop.example.assetlinks.json"
        if ProcessInfo.processInfo.environment["AASA_UPDATE_GOLDEN"] == "1" {
            try Data(bytes).write(to: URL(fileURLWithPath: golden))
        }
        let expected = try [UInt8](Data(contentsOf: URL(fileURLWithPath: golden)))
        #expect(String(decoding: bytes, as: UTF8.self) == String(decoding: expected, as: UTF8.self))
    }

    @Test func signingDecodesBothForms() {
        #expect(loadSite(#"{"signing": true}"#).config?.signing == SigningConfig())
        #expect(loadSite(#"{"signing": false}"#).config?.signing == SigningConfig(enabled: false))
        let object = loadSite(#"{"signing": {"certificate": "c.pem", "key": "k.pem", "paths": "both"}}"#)
        #expect(object.config?.signing == SigningConfig(certificate: "c.pem", key: "k.pem", paths: .both))
        #expect(!object.diagnostics.hasErrors)
        let bad = loadSite(#"{"signing": {"paths": "all"}}"#)
        #expect(bad.diagnostics.first?.message.contains(#"must be "root" or "both""#) == true)
    }

    @Test func signingAndAndroidSurviveARoundTripThroughSiteJSON() throws {
        let source = """
            {"signing": {"certificate": "c.pem", "key": "k.pem", "chain": "i.pem", "paths": "both"},
             "android": {"apps": [{"package": "com.example.shop", "fingerprints": ["\(Self.fingerprint)"],
               "appLinks": true, "loginCredentials": true, "rules": [{"path": "/x/*"}]}]}}
            """
        let config = try #require(loadSite(source).config)
        let rewritten = JSONWriter(style: .pretty).string(config.jsonValue(schema: nil))
        #expect(loadSite(rewritten).config == config)
    }
}
