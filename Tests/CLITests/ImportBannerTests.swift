import AASACore
import AASATestSupport
import Foundation
import Testing

/// `aasa-server import --app-store-id`: the imported domain's pages get a Smart App Banner.
@Suite struct ImportBannerTests {
    static func aasa(_ arguments: [String], in directory: String) throws -> Command.Output {
        try Command.run(RepositoryPaths.executable, arguments, currentDirectory: directory)
    }

    @Test func importWithAnAppStoreIDSetsUpTheBannerAndKeepsItsOtherSettings() throws {
        let directory = TemporaryDirectory("aasa-cli")
        try directory.write(
            "site-config/shop.example/site.json",
            #"{"smartAppBanner": {"appStoreID": "1", "exclude": ["/checkout/*"]}, "pages": {"cacheControl": "no-cache"}}"#
        )
        try directory.write("site-config/shop.example/pages/index.html", "<html><head></head></html>")
        let file = try directory.write(
            "aasa", #"{"applinks": {"details": [{"appIDs": ["ABCDE12345.com.new"], "components": [{"/": "/*"}]}]}}"#)
        let output = try Self.aasa(
            ["import", file, "--domain", "shop.example", "--app-store-id", "640199958"], in: directory.path)
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stdout.contains("smart app banner: app-id=640199958"), "\(output.stdout)")
        let loaded = SiteConfigLoader().loadDomain(
            domain: "shop.example", file: directory.path + "/site-config/shop.example/site.json")
        #expect(loaded.config?.smartAppBanner == BannerConfig(appStoreID: "640199958", exclude: ["/checkout/*"]))
        #expect(loaded.config?.pages.cacheControl == "no-cache")
        let index = try #require(loaded.pages?.files["/index.html"])
        // The banner's app-argument, and the slots of what a visitor gets of their own (a page with the banner has
        // them): an in-app browser's way out at the top, a desktop's QR code at the end.
        #expect(index.page.slots == [.appArgument, .openInBrowser, .floatingQRCode])
        #expect(
            String(decoding: index.page.chunks[0], as: UTF8.self).contains("content=\"app-id=640199958, app-argument="))
    }

    @Test func aNonNumericAppStoreIDIsRefusedBeforeAnythingIsWritten() throws {
        let directory = TemporaryDirectory("aasa-cli")
        let file = try directory.write("aasa", #"{"webcredentials": {"apps": ["ABCDE12345.com.a"]}}"#)
        let output = try Self.aasa(
            ["import", file, "--domain", "shop.example", "--app-store-id", "id640199958"], in: directory.path)
        #expect(output.status != 0)
        #expect(output.stderr.contains("is not an App Store ID"), "\(output.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/site-config"))
    }
}
