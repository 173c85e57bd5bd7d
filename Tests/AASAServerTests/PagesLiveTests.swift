import AASACore
import AASATestSupport
import Foundation
import Testing

@testable import AASAServer

/// Pages over real HTTPS from the real daemon, through curl: traversal attempts, probes, 304s, landing page.
@Suite(.serialized) struct PagesLiveTests {
    /// A sample config with a few more pages, a dotfile, a hidden folder and a symlink out of `pages/`.
    static func server() throws -> LiveServer {
        try LiveServer(prepare: { config in
            let pages = config + "/shop.example/pages"
            try Data("<html><head><title>Help</title></head><body>help</body></html>".utf8)
                .write(to: URL(fileURLWithPath: pages + "/help.html"))
            try Data("SECRET=1".utf8).write(to: URL(fileURLWithPath: pages + "/.env"))
            try FileManager.default.createDirectory(atPath: pages + "/.git", withIntermediateDirectories: true)
            try Data("[core]".utf8).write(to: URL(fileURLWithPath: pages + "/.git/config"))
            try FileManager.default.createSymbolicLink(
                atPath: pages + "/config.json", withDestinationPath: "../site.json")
            try FileManager.default.createSymbolicLink(atPath: pages + "/root", withDestinationPath: "/")
        })
    }

    @Test func traversalAndHiddenFilesGet404NeverTheFileNorARedirect() throws {
        let live = try Self.server()
        let attempts = [
            "/../site.json", "/../../../../etc/passwd", "/%2e%2e/site.json", "/%2E%2E/%2E%2E/etc/passwd",
            "/%252e%252e/site.json", "/..%5csite.json", "/..%5c..%5cetc%5cpasswd", "/%00", "/index.html%00.png",
            "/%c0%ae%c0%ae/site.json", "/%c0%ae%c0%ae%c0%af%c0%ae%c0%ae%c0%afetc%c0%afpasswd", "/config.json",
            "/root/etc/passwd", "/.env", "/%2eenv", "/.git/config", "/help.html/..", "/a%2f..%2f..%2fsite.json",
        ]
        for path in attempts {
            let response = try Curl.request(
                "https://shop.example:\(live.https)\(path)", caFile: live.caFile, resolve: ("shop.example", live.https),
                extra: ["--path-as-is"])
            #expect(response.status == 404, "\(path): \(response.status)")
            #expect(response.headers["location"] == nil, "\(path)")
            #expect(response.headers["content-type"] == "text/plain; charset=utf-8", "\(path)")
            #expect(!response.text.contains("universalLinks") && !response.text.contains("root:"), "\(path)")
            #expect(!response.text.contains("SECRET") && !response.text.contains("[core]"), "\(path)")
        }
        #expect(try live.get("shop.example", "/help.html").status == 200)
    }

    @Test func pagesGetTheBannerIconsAndConditionalAnswers() throws {
        let live = try Self.server()
        let page = try live.get("shop.example", "/?ref=mail")
        #expect(page.status == 200)
        #expect(page.headers["content-type"] == "text/html; charset=utf-8")
        #expect(page.headers["cache-control"] == "max-age=300")
        #expect(
            page.text.contains(
                "<meta name=\"apple-itunes-app\" content=\"app-id=640199958, app-argument=https://shop.example/?ref=mail\">"
            ), "\(page.text)")
        #expect(page.text.contains("<link rel=\"apple-touch-icon\" sizes=\"180x180\" href=\"/apple-touch-icon.png\">"))
        let etag = try #require(page.headers["etag"])
        let modified = try #require(page.headers["last-modified"])
        #expect(try live.get("shop.example", "/?ref=mail", headers: ["If-None-Match: \(etag)"]).status == 304)
        #expect(try live.get("shop.example", "/?ref=mail", headers: ["If-Modified-Since: \(modified)"]).status == 304)
        let icon = try live.get("shop.example", "/apple-touch-icon.png")
        let iconTag = try #require(icon.headers["etag"])
        #expect(
            try live.get("shop.example", "/apple-touch-icon.png", headers: ["If-None-Match: \(iconTag)"]).status == 304)
        let head = try live.get("shop.example", "/help.html", method: "HEAD")
        #expect(head.status == 200 && head.headers["content-length"] != nil)
        #expect(try live.get("shop.example", "/help.html", method: "POST").status == 405)
        // The association file keeps priority and its own headers.
        let association = try live.get("shop.example", "/.well-known/apple-app-site-association")
        #expect(association.headers["content-type"] == "application/json")
        #expect(association.headers["cache-control"] == "max-age=3600")
    }

    @Test func touchIconProbesGetAPNGOrAPlain404() throws {
        let live = try Self.server()
        for path in [
            "/apple-touch-icon.png", "/apple-touch-icon-precomposed.png", "/apple-touch-icon-180x180.png",
            "/apple-touch-icon-180x180-precomposed.png", "/apple-touch-icon-120x120.png",
            "/apple-touch-icon-57x57-precomposed.png",
        ] {
            let response = try live.get("shop.example", path)
            #expect(response.status == 200, "\(path)")
            #expect(response.headers["content-type"] == "image/png", "\(path)")
            #expect(PNGInfo(response.body)?.width == 180, "\(path)")
        }
        // links.example has no icons: a fast plain 404, never an HTML page.
        let missing = try live.get("links.example", "/apple-touch-icon.png")
        #expect(missing.status == 404)
        #expect(missing.headers["content-type"] == "text/plain; charset=utf-8")
    }

    @Test func theLandingPageAnswersClaimedURLsWith200AndOthersWith404() throws {
        let live = try Self.server()
        let claimed = try live.get("shop.example", "/bags/tote?color=red")
        #expect(claimed.status == 200)
        #expect(claimed.text.contains("app-argument=https://shop.example/bags/tote?color=red\">"))
        #expect(claimed.text.contains("href=\"https://apps.apple.com/app/id640199958\""))
        #expect(claimed.text.contains("<meta property=\"og:title\" content=\"Shop Example\">"))
        for path in ["/account/delete/confirm", "/nothing-here", "/help/article"] {
            #expect(try live.get("shop.example", path).status == 404, "\(path)")
        }
    }

    /// Over real HTTPS, whatever port the `Host` header names (the listener's own, another, none), the landing
    /// page and a hosted page name the domain's canonical origin, and are the same bytes with the same tag.
    @Test func pagesNameTheCanonicalOriginWhateverPortTheHostHeaderNames() throws {
        let live = try Self.server()
        for path in ["/bags/tote?color=%22%3E", "/help.html?a=1&b=2"] {
            var answers: [CurlResponse] = []
            for host in ["shop.example:8443", "shop.example:\(live.https)", "shop.example:80", "shop.example"] {
                let page = try live.get("shop.example", path, headers: ["Host: \(host)"])
                #expect(page.status == 200, "\(host)\(path)")
                #expect(!page.text.contains("shop.example:"), "\(host)\(path): \(page.text)")
                answers.append(page)
            }
            let url = "https://shop.example" + path.replacingOccurrences(of: "&", with: "&amp;")
            #expect(answers[0].text.contains("app-argument=\(url)\">"), "\(answers[0].text)")
            #expect(
                answers.allSatisfy { $0.body == answers[0].body && $0.headers["etag"] == answers[0].headers["etag"] })
        }
        let landing = try live.get("shop.example", "/bags/tote", headers: ["Host: shop.example:8443"]).text
        #expect(landing.contains("<meta property=\"og:url\" content=\"https://shop.example/bags/tote\">"))
        #expect(landing.contains("<link rel=\"canonical\" href=\"https://shop.example/bags/tote\">"))
    }

    @Test func aNewPageInANewSubfolderIsServedAfterTheWatcherReloads() throws {
        let live = try Self.server()
        let folder = live.configDirectory + "/shop.example/pages/guides"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        // Let the watcher pick up the new folder before writing into it.
        _ = try waitUntil(2) { try live.get("shop.example", "/guides/").status == 404 }
        usleep(600_000)
        let written = ContinuousClock.now
        try Data("<p>v1</p>".utf8).write(to: URL(fileURLWithPath: folder + "/index.html"))
        #expect(
            try waitUntil(3, since: written) { try live.get("shop.example", "/guides/").text.contains("v1") } != nil)
        try Data("<p>v2</p>".utf8).write(to: URL(fileURLWithPath: folder + "/index.html"))
        #expect(try waitUntil(3) { try live.get("shop.example", "/guides").text.contains("v2") } != nil)
    }

    @Test func aPageOverTheSizeCapKeepsTheLastGoodVersion() throws {
        let live = try Self.server()
        let big = [UInt8](repeating: 0x61, count: PageLoader().maximumFileBytes + 1)
        try Data(big).write(to: URL(fileURLWithPath: live.configDirectory + "/shop.example/pages/big.txt"))
        let diagnostics = live.server.reload()
        #expect(diagnostics.contains { $0.rule == .pageTooLarge && $0.message.contains("/big.txt") })
        #expect(try live.get("shop.example", "/help.html").status == 200)
        #expect(try live.get("shop.example", "/big.txt").status == 404)
    }
}
