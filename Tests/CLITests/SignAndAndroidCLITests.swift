import AASACore
import AASATestSupport
import Foundation
import Testing

/// `aasa-server sign`, `import --sign` and `import assetlinks.json`, run as a user runs them.
@Suite(.serialized) struct SignAndAndroidCLITests {
    func aasa(_ arguments: [String], in directory: String) throws -> Command.Output {
        try Command.run(RepositoryPaths.executable, arguments, currentDirectory: directory)
    }

    @Test func signWritesABlobOpenSSLVerifiesWithTheExactBytes() throws {
        let directory = TemporaryDirectory("aasa-sign")
        let json = #"{"applinks":{"details":[{"appIDs":["ABCDE12345.com.example.shop"],"components":[{"/":"/*"}]}]}}"#
        try directory.write("aasa.json", json)
        let certs = directory.path + "/certs"
        let output = try aasa(["certs", "dev", "--domain", "shop.example", "--certs", certs], in: directory.path)
        #expect(output.status == 0, "\(output.stderr)")
        let signed = try aasa(
            [
                "sign", "aasa.json", "--cert", certs + "/shop.example/fullchain.pem", "--key",
                certs + "/shop.example/privkey.pem", "--out", "apple-app-site-association", "--domain", "shop.example",
            ], in: directory.path)
        #expect(signed.status == 0, "\(signed.stderr)")
        #expect(signed.stdout.contains("application/pkcs7-mime"))
        let verified = try Command.run(
            "openssl",
            [
                "cms", "-verify", "-inform", "DER", "-in", "apple-app-site-association", "-CAfile",
                certs + "/dev-ca/ca.pem", "-purpose", "sslserver", "-binary",
            ], currentDirectory: directory.path)
        #expect(verified.status == 0, "\(verified.stderr)")
        #expect(verified.stdout == json)
        // Another name is refused, and nothing is written.
        let wrongName = try aasa(
            [
                "sign", "aasa.json", "--cert", certs + "/shop.example/fullchain.pem", "--key",
                certs + "/shop.example/privkey.pem", "--out", "other", "--domain", "links.example",
            ], in: directory.path)
        #expect(wrongName.status == 2)
        #expect(wrongName.stderr.contains("[signing-name]"), "\(wrongName.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/other"))
    }

    @Test func importSignTurnsSigningOn() throws {
        let directory = TemporaryDirectory("aasa-import-sign")
        try directory.write("aasa", #"{"webcredentials": {"apps": ["ABCDE12345.com.example.shop"]}}"#)
        let output = try aasa(["import", "aasa", "--domain", "shop.example", "--sign"], in: directory.path)
        #expect(output.status == 0, "\(output.stderr)")
        let written = try String(
            contentsOfFile: directory.path + "/site-config/shop.example/site.json", encoding: .utf8)
        #expect(written.contains(#""signing": true"#), "\(written)")
    }

    @Test func assetLinksImportReplacesOnlyTheAndroidSectionAndAASAImportKeepsIt() throws {
        let directory = TemporaryDirectory("aasa-import-android")
        try directory.copy(RepositoryPaths.siteConfig, to: "site-config")
        let before = SiteConfigLoader().loadDomain(
            domain: "shop.example", file: directory.path + "/site-config/shop.example/site.json")
        try directory.write(
            "assetlinks.json",
            """
            [{"relation": ["delegate_permission/common.handle_all_urls", "delegate_permission/common.get_login_creds"],
              "target": {"namespace": "android_app", "package_name": "com.example.newapp",
                "sha256_cert_fingerprints": ["146de983c5730650d8eeb9952f34fc6416a08342e61dbea88a0496b23fcf44e5"]}}]
            """)
        let output = try aasa(["import", "assetlinks.json", "--domain", "shop.example"], in: directory.path)
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stdout.contains("updated site-config/shop.example/site.json: 1 Android app, 1 fingerprint"))
        let after = SiteConfigLoader().loadDomain(
            domain: "shop.example", file: directory.path + "/site-config/shop.example/site.json")
        #expect(after.generated?.bytes == before.generated?.bytes)
        #expect(after.config?.tests.map(\.url) == before.config?.tests.map(\.url))
        #expect(after.config?.android?.apps.map(\.package) == ["com.example.newapp"])
        #expect(after.config?.android?.apps.first?.loginCredentials == nil)  // follows webCredentials
        // Importing an Apple file afterwards (here: the domain's own served file) keeps the android section.
        try Data(try #require(before.generated?.bytes)).write(to: URL(fileURLWithPath: directory.path + "/aasa"))
        #expect(try aasa(["import", "aasa", "--domain", "shop.example"], in: directory.path).status == 0)
        let again = SiteConfigLoader().loadDomain(
            domain: "shop.example", file: directory.path + "/site-config/shop.example/site.json")
        #expect(again.config?.android == after.config?.android)
        #expect(again.assetLinks?.bytes == after.assetLinks?.bytes)
    }

    @Test func aBrokenAssetLinksFileIsRefusedWithItsLocation() throws {
        let directory = TemporaryDirectory("aasa-import-android")
        let output = try aasa(
            ["import", RepositoryPaths.corpus + "/assetlinks/006.json", "--domain", "new.example"], in: directory.path)
        #expect(output.status == 2)
        #expect(output.stderr.contains("006.json:7:7: error: [unknown-key]"), "\(output.stderr)")
        #expect(output.stderr.contains(#"did you mean "sha256_cert_fingerprints"?"#))
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/site-config/new.example"))
    }
}
