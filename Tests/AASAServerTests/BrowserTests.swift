import AASACore
import AASATestSupport
import Foundation
import Testing

@testable import AASAServer

/// A real browser reads what it built from the pages the server hosts: headless Chromium over HTTPS (dev CA
/// certificates, `--ignore-certificate-errors`), with `shop.example` mapped to 127.0.0.1.
@Suite(.serialized) struct BrowserTests {
    static var chromium: String? {
        ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }

    /// The DOM after scripts ran, as Chromium serialises it.
    static func dom(_ url: String, profile: String) throws -> String {
        let browser = try #require(chromium, "Chromium is missing: run scripts/setup.sh --test")
        let output = try Command.run(
            browser,
            [
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--ignore-certificate-errors",
                "--no-first-run", "--user-data-dir=\(profile)", "--host-resolver-rules=MAP shop.example 127.0.0.1",
                "--virtual-time-budget=5000", "--dump-dom", url,
            ], timeout: 90)
        #expect(output.status == 0, "\(output.stderr)")
        return output.stdout
    }

    /// What the probe page's script read from the DOM: `document.querySelector(...).content`, the icon links
    /// and `location.href`.
    struct Probe: Decodable {
        var banner: String?
        var bannerInHead: Bool
        var banners: Int
        var icons: [[String]]
        var href: String
    }

    static let probePage = """
        <!DOCTYPE html>
        <html><head><title>Probe</title></head>
        <body><pre id="probe"></pre>
        <script>
        const meta = document.querySelector('meta[name=apple-itunes-app]');
        document.getElementById('probe').textContent = JSON.stringify({
          banner: meta ? meta.content : null,
          bannerInHead: !!meta && meta.parentNode === document.head,
          banners: document.querySelectorAll('meta[name=apple-itunes-app]').length,
          icons: [...document.querySelectorAll('link[rel=apple-touch-icon]')].map(l => [l.getAttribute('sizes') || '', l.getAttribute('href')]),
          href: location.href
        });
        </script></body></html>
        """

    static func probe(_ dom: String) throws -> Probe {
        let start = try #require(dom.firstRange(of: "<pre id=\"probe\">")?.upperBound, "\(dom)")
        let end = try #require(dom[start...].firstRange(of: "</pre>")?.lowerBound)
        let json = dom[start..<end].replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(
            of: "&lt;", with: "<"
        )
        .replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&amp;", with: "&")
        return try JSONDecoder().decode(Probe.self, from: Data(json.utf8))
    }

    @Test func everyHostedPageAndTheLandingPageCarryTheBannerForTheirOwnURL() throws {
        let live = try LiveServer(prepare: { config in
            let pages = config + "/shop.example/pages"
            try Data(Self.probePage.utf8).write(to: URL(fileURLWithPath: pages + "/probe.html"))
            try FileManager.default.createDirectory(atPath: pages + "/stores", withIntermediateDirectories: true)
            try Data(Self.probePage.utf8).write(to: URL(fileURLWithPath: pages + "/stores/index.html"))
        })
        let profile = TemporaryDirectory("aasa-chromium")
        let base = "https://shop.example:\(live.https)"
        // The banner names the domain's canonical origin, not the port the browser used.
        let canonical = "https://shop.example"
        for path in ["/probe.html", "/probe.html?ref=mail&x=%22%3E%3Cscript%3E", "/stores/"] {
            let probe = try Self.probe(try Self.dom(base + path, profile: profile.path))
            #expect(probe.href == base + path)
            #expect(probe.banner == "app-id=640199958, app-argument=" + canonical + path, "\(path)")
            #expect(probe.bannerInHead && probe.banners == 1)
            #expect(probe.icons == [["", "/apple-touch-icon.png"], ["180x180", "/apple-touch-icon.png"]])
        }
        // The hosted index page and the generated landing page of a URL the app claims, read from the DOM.
        for path in ["/", "/buy/red-shoes?utm_source=mail"] {
            let dom = try Self.dom(base + path, profile: profile.path)
            let head = try #require(dom.firstRange(of: "</head>").map { dom[..<$0.lowerBound] }, "\(dom)")
            let expected =
                "<meta name=\"apple-itunes-app\" content=\"app-id=640199958, app-argument=\(canonical + path)\">"
            #expect(head.contains(expected.replacingOccurrences(of: "&", with: "&amp;")), "\(dom)")
            #expect(dom.components(separatedBy: "apple-itunes-app").count == 2)
            #expect(head.contains("<link rel=\"apple-touch-icon\" sizes=\"180x180\" href=\"/apple-touch-icon.png\">"))
        }
        let landing = try Self.dom(base + "/buy/red-shoes", profile: profile.path)
        #expect(landing.contains("href=\"https://apps.apple.com/app/id640199958\""))
    }
}
