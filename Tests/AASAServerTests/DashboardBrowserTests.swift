import AASACore
import AASAOpenSSL
import AASATestSupport
import Foundation
import Testing

@testable import AASAServer

/// The dashboard as an operator uses it: a real server with three good domains (one whose certificate expires in
/// nine days) and a broken one, and headless Chromium driven through the DevTools protocol: it types, presses
/// Enter and clicks, and the test reads the DOM, the requests the page made, the browser's errors, and
/// screenshots at 390 and 1440 px, light and dark.
@Suite(.serialized) struct DashboardBrowserTests {
    /// Where the screenshots go: `AASA_SCREENSHOT_DIR`, or `.build/screenshots/dashboard`.
    static let screenshots =
        ProcessInfo.processInfo.environment["AASA_SCREENSHOT_DIR"] ?? RepositoryPaths.root
        + "/.build/screenshots/dashboard"
    static let path = "/.well-known/apple-app-site-association"

    /// The sample's two domains, `soon.example` with a nine-day certificate and its passkey and change-password
    /// pages, and `broken.example`, which fails.
    static func server(configure: (inout ServerConfiguration) -> Void = { _ in }) throws -> LiveServer {
        let live = try LiveServer(
            extraDomains: [
                "soon.example": """
                {"universalLinks": {"apps": [{"appIDs": ["ABCDE12345.com.example.soon"], "rules": [{"path": "/*"}]}]},
                 "webCredentials": ["ABCDE12345.com.example.soon"],
                 "passkeys": {"enroll": "https://soon.example/passkeys/new", "manage": "https://soon.example/passkeys"},
                 "changePassword": "https://accounts.soon.example/password"}
                """
            ],
            configure: {
                $0.watchForChanges = false
                configure(&$0)
            })
        let authority = try DevCertificateAuthority.loadOrCreate(
            directory: live.certsDirectory + "/" + CertificateDirectory.devCAFolder)
        try authority.issue(names: ["soon.example"], validityDays: 9).writeCertbotLayout(
            into: live.certsDirectory, name: "soon.example")
        try live.directory.write("site-config/broken.example/site.json", #"{"universalLinks": 5}"#)
        live.server.reload()
        return live
    }

    /// The rows of the domains table: name → state.
    static let rowStates = """
        JSON.stringify(Object.fromEntries([...document.querySelectorAll('#domains tbody tr[data-domain]')]
          .map(row => [row.dataset.domain, row.dataset.state])))
        """

    @Test func anOperatorFindsTheBrokenDomainTheExpiringCertificateAndWhatAURLOpens() throws {
        let live = try Self.server()
        _ = try live.get("shop.example", Self.path, headers: ["User-Agent: AASA-Bot/1.0.0"])
        let profile = TemporaryDirectory("aasa-devtools")
        let browser = try DevTools(profile: profile.path)
        let page = try browser.openPage(width: 1440, height: 1000)
        let origin = "http://127.0.0.1:\(live.admin)"
        try page.navigate(origin + "/")

        // Domains: each with its state; the broken one's error readable without a click.
        try page.wait(for: "document.querySelectorAll('#domains tbody tr[data-domain]').length === 4")
        let states = try #require(try page.evaluate(Self.rowStates) as? String)
        #expect(
            try JSONDecoder().decode([String: String].self, from: Data(states.utf8)) == [
                "broken.example": "failed", "links.example": "published", "shop.example": "published",
                "soon.example": "published",
            ])
        let tableText = try #require(try page.evaluate("document.getElementById('domains').innerText") as? String)
        #expect(tableText.contains("broken.example/site.json:1:"), "\(tableText)")
        #expect(tableText.contains("ABCDE12345.com.example.shop"))
        let soon = try page.evaluate(
            "document.querySelector('#domains tr[data-domain=\"soon.example\"] .cert-soon .cert-expiry')?.textContent ?? ''"
        )
        #expect((soon as? String)?.contains(/\b[89]\sdays\b/) == true, "\(soon ?? "")")
        // Its credential endpoints beside its services: the passkey pages it names, where change-password leads.
        let endpoints = try page.evaluate(
            "[...document.querySelectorAll('#domains tr[data-domain=\"soon.example\"] li.endpoint')].map(item => `${item.dataset.endpoint}=${item.innerText}|${item.title}`).join('\\n')"
        )
        #expect(
            endpoints as? String == """
                passkeys=passkeys enroll, manage|enroll: https://soon.example/passkeys/new
                manage: https://soon.example/passkeys
                change-password=change-password accounts.soon.example|change-password → https://accounts.soon.example/password
                """, "\(endpoints ?? "")")
        #expect(
            try page.evaluate(
                "document.querySelectorAll('#domains tr[data-domain=\"shop.example\"] li.endpoint').length") as? Int
                == 0)
        // The domains with a year's certificate are not highlighted; the broken one, which no certificate covers, is.
        let highlighted = try page.evaluate(
            "[...document.querySelectorAll('#domains tr[data-domain]:has(.cert-soon, .cert-bad)')].map(row => row.dataset.domain).sort().join()"
        )
        #expect(highlighted as? String == "broken.example,soon.example")

        // Sorting by state puts the failed domain first; filtering by name leaves one row.
        try page.evaluate("document.querySelector('#domains th[data-sort=\"state\"] button').click()")
        try page.wait(
            for: "document.querySelector('#domains tbody tr[data-domain]')?.dataset.domain === 'broken.example'")
        try page.evaluate("document.getElementById('domain-filter').focus()")
        try page.type("links")
        try page.wait(
            for: """
                [...document.querySelectorAll('#domains tbody tr[data-domain]')].map(row => row.dataset.domain).join() === 'links.example'
                """)

        // Try a URL: typed and submitted with Enter, the verdict of each platform and the deciding rule.
        let answer = try Self.tryURL("https://shop.example/buy/shoes", in: page, expecting: "match")
        #expect(answer.contains("universalLinks.apps[0].rules[2]"), "\(answer)")
        #expect(answer.contains("/buy/*") && answer.contains("ABCDE12345.com.example.shop"))
        #expect(
            try page.evaluate(
                "document.querySelector('#try-result [data-platform=\"android\"] .verdict')?.textContent.trim()")
                as? String == "manifest")
        // A near miss says which rule came closest and why it failed.
        let miss = try Self.tryURL("https://shop.example/help/12", in: page, expecting: "no-match")
        #expect(miss.contains("universalLinks.apps[0].rules[4]") && miss.contains("articleNumber"), "\(miss)")

        // A domain row's Try button prefills the field.
        try page.evaluate("document.querySelector('#domains [data-try=\"links.example\"]').click()")
        try page.wait(for: "document.getElementById('try-url').value === 'https://links.example/'")
        #expect(try page.evaluate("document.activeElement?.id") as? String == "try-url")

        // Fetches: the one made before, then one made now appears by itself.
        try page.wait(
            for: "document.querySelector('#fetches tbody tr[data-domain=\"shop.example\"][data-client=\"apple-cdn\"]')")
        _ = try live.get("links.example", Self.path, headers: ["User-Agent: swcd (unknown) CFNetwork/1 Darwin/22"])
        try page.wait(
            for: "document.querySelector('#fetches tbody tr[data-domain=\"links.example\"][data-client=\"device\"]')")

        // Reloads: the start and the reload that found the broken domain; the chart of the last hour.
        let reloads = try #require(try page.evaluate("document.getElementById('reloads').innerText") as? String)
        #expect(reloads.contains("manual") && reloads.contains("start"), "\(reloads)")
        try page.wait(for: "document.querySelector('#traffic svg path, #traffic svg polyline')")

        // Everything came from the admin listener itself, and the browser reported nothing wrong (a script or
        // style the policy blocked, a failed request, an exception).
        let foreign = page.requestedURLs.filter { !$0.hasPrefix(origin + "/") && !$0.hasPrefix("data:") }
        #expect(foreign.isEmpty, "\(foreign)")
        #expect(page.errors.isEmpty, "\(page.errors)")

        try checkAccessibility(page, origin: origin)
        try screenshots(browser, origin: origin)
    }

    /// Types `url` into Try a URL (replacing what is there), presses Enter, waits for iOS 13+'s `verdict` and
    /// returns the answer's text.
    static func tryURL(_ url: String, in page: DevTools.Page, expecting verdict: String) throws -> String {
        try page.evaluate("document.getElementById('try-url').select()")
        try page.type(url)
        try page.press("Enter")
        try page.wait(
            for:
                "document.querySelector('#try-result [data-platform=\"ios\"] .verdict')?.textContent.trim() === '\(verdict)'"
        )
        return try #require(try page.evaluate("document.getElementById('try-result').innerText") as? String)
    }

    /// Labels, landmarks, headings and keyboard reach: what a screen reader and a keyboard user need.
    func checkAccessibility(_ page: DevTools.Page, origin: String) throws {
        let unlabelled = try page.evaluate(
            """
            [...document.querySelectorAll('input, select, button')]
              .filter(control => !control.labels?.length && !control.getAttribute('aria-label') && !control.textContent.trim())
              .map(control => control.outerHTML).join('\\n')
            """)
        #expect(unlabelled as? String == "", "\(unlabelled ?? "")")
        #expect(try page.evaluate("document.querySelectorAll('main, header').length >= 2") as? Bool == true)
        #expect(try page.evaluate("document.querySelectorAll('h1').length") as? Int == 1)
        #expect(try page.evaluate("document.documentElement.lang") as? String == "en")
        #expect(
            try page.evaluate("document.querySelectorAll('#domains thead th[scope=\"col\"]').length >= 5") as? Bool
                == true)
        // On a page just loaded, the first Tab reaches the skip link, and Enter on it moves focus to the content.
        let fresh = try page.devTools.openPage(width: 1440, height: 1000)
        try fresh.navigate(origin + "/")
        try fresh.press("Tab")
        #expect(
            try fresh.evaluate("document.activeElement?.tagName + ' ' + document.activeElement?.getAttribute('href')")
                as? String == "A #main")
        try fresh.press("Enter")
        try fresh.wait(for: "document.activeElement?.id === 'main'")
    }

    /// Screenshots at 390 and 1440 px, light and dark: written to ``screenshots``, each with enough colours not to
    /// be blank, no horizontal page scroll on the phone, and a different background in the dark scheme.
    func screenshots(_ browser: DevTools, origin: String) throws {
        try FileManager.default.createDirectory(atPath: Self.screenshots, withIntermediateDirectories: true)
        var backgrounds: [Bool: String] = [:]
        for (width, height) in [(390, 844), (1440, 1000)] {
            for dark in [false, true] {
                let page = try browser.openPage(width: width, height: height, dark: dark)
                try page.navigate(
                    origin + "/#try=" + "https://shop.example/buy/shoes".addingPercentEncoding(
                        withAllowedCharacters: .alphanumerics)!)
                try page.wait(for: "document.querySelectorAll('#domains tbody tr[data-domain]').length === 4")
                try page.wait(for: "document.querySelector('#try-result [data-platform=\"ios\"] .verdict')")
                let overflow = try page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
                // Zero, or less by the width of a vertical scroll bar.
                #expect(
                    (overflow as? Int).map { $0 <= 0 } == true,
                    "\(width) px: the page scrolls sideways by \(overflow ?? "?") px")
                backgrounds[dark] = try page.evaluate("getComputedStyle(document.body).backgroundColor") as? String
                let png = try page.screenshot(fullPage: width == 1440 && !dark)
                let name = "dashboard-\(width)-\(dark ? "dark" : "light").png"
                try png.write(to: URL(fileURLWithPath: Self.screenshots + "/" + name))
                #expect(try browser.distinctColours(in: png) > 20, "\(name) looks blank")
                #expect(page.errors.isEmpty, "\(page.errors)")
            }
        }
        #expect(backgrounds[false] != nil && backgrounds[false] != backgrounds[true], "\(backgrounds)")
    }

    @Test func withATokenThePageAsksForItAndSendsIt() throws {
        let live = try Self.server { $0.adminAccess = AdminAccess(token: Array("s3cret-token".utf8)) }
        let profile = TemporaryDirectory("aasa-devtools")
        let browser = try DevTools(profile: profile.path)
        let page = try browser.openPage(width: 1440, height: 1000)
        try page.navigate("http://127.0.0.1:\(live.admin)/")
        try page.wait(for: "document.getElementById('token-form')?.checkVisibility()")
        #expect(try page.evaluate("document.querySelectorAll('#domains tbody tr[data-domain]').length") as? Int == 0)
        try page.evaluate("document.getElementById('token').focus()")
        try page.type("s3cret-token")
        try page.press("Enter")
        try page.wait(for: "document.querySelectorAll('#domains tbody tr[data-domain]').length === 4")
        #expect(try page.evaluate("document.getElementById('token-form').checkVisibility()") as? Bool == false)
        // The token stays in this tab's session only, never in the URL.
        #expect(try page.evaluate("sessionStorage.getItem('aasa-admin-token')") as? String == "s3cret-token")
        #expect(page.requestedURLs.allSatisfy { !$0.contains("s3cret") })
    }
}
