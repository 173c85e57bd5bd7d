import AASACore
import AASATestSupport
import Foundation
import Synchronization
import Testing

@testable import AASAServer

/// The dashboard's view of ACME's queue in headless Chromium, over the admin routes of a real server with chosen
/// ACME figures (``ACMEAdminListener``): the queue panel, each domain's place, eta and issuer, and the Retry now
/// button, whose POST reaches the server and whose answer is shown.
@Suite(.serialized) struct DashboardQueueBrowserTests {
    /// Headless Chromium on `admin`'s dashboard at 1440 px, the token typed into its form.
    static func signedIn(_ admin: ACMEAdminListener, profile: TemporaryDirectory) throws -> (DevTools, DevTools.Page) {
        let browser = try DevTools(profile: profile.path)
        let page = try browser.openPage(width: 1440, height: 1000)
        try page.navigate(admin.base + "/")
        try page.wait(for: "document.getElementById('token-form')?.checkVisibility()")
        try page.evaluate("document.getElementById('token').focus()")
        try page.type(ACMEAdminListener.token)
        try page.press("Enter")
        return (browser, page)
    }

    @Test func theQueuePanelAndRetryNowShowWhatTheServerSays() throws {
        var figures = ACMEAdminListener.figures
        figures.queue.pausedUntil = Date().addingTimeInterval(2 * 3600 + 60)
        figures.statuses["shop.example"]?.eta = Date().addingTimeInterval(3 * 3600 + 60)
        let admin = try ACMEAdminListener(figures: figures)
        let profile = TemporaryDirectory("aasa-devtools")
        let (browser, page) = try Self.signedIn(admin, profile: profile)

        // The queue panel: what waits, the rate, when the last order goes out, the pause and the CA's reason.
        try page.wait(for: "document.getElementById('acme-queue')?.checkVisibility()")
        let panel = try #require(try page.evaluate("document.getElementById('acme-queue').innerText") as? String)
        for text in [
            "3 orders", "100 new orders per hour", "about 4 days", "7 issued, 2 failed", "Paused", "in about 2 hours",
        ] {
            #expect(panel.contains(text), "\(text) in \(panel)")
        }
        // The CA's text is shown as text: its `<b>` is not an element.
        #expect(panel.contains("too many new orders (https://ca.example/acme/new-order) <b>"), "\(panel)")
        #expect(try page.evaluate("document.querySelector('#acme-queue b') === null") as? Bool == true)

        // shop.example waits second, expected in about 3 hours, from Let's Encrypt; links.example failed.
        try page.wait(for: "document.querySelector('#domains tr[data-domain=\"shop.example\"] .queue-place')")
        let shop = try #require(
            try page.evaluate(
                "document.querySelector('#domains tr[data-domain=\"shop.example\"] .cell-cert').innerText")
                as? String)
        for text in ["#2 in the queue", "expected in about 3 hours", "issued by acme-v02.api.letsencrypt.org"] {
            #expect(shop.contains(text), "\(text) in \(shop)")
        }
        for domain in ["shop.example", "links.example"] {
            #expect(
                try page.evaluate("document.querySelector('[data-retry=\"\(domain)\"]')?.textContent") as? String
                    == "Retry now", "\(domain)")
        }

        // Retry now: the POST reaches the server, and its answer is shown under the button.
        try page.evaluate("document.querySelector('[data-retry=\"shop.example\"]').click()")
        try page.wait(
            for:
                "document.querySelector('[data-retry-result=\"shop.example\"]')?.textContent === 'Queued: #2 in the queue.'"
        )
        #expect(admin.retried.withLock { $0 } == ["shop.example"])
        // A name that failed too often: the time to retry after.
        try page.evaluate("document.querySelector('[data-retry=\"links.example\"]').click()")
        try page.wait(
            for: "document.querySelector('[data-retry-result=\"links.example\"]')?.textContent.includes('retry after')")
        let refused = try #require(
            try page.evaluate("document.querySelector('[data-retry-result=\"links.example\"]').textContent") as? String)
        #expect(refused.contains("in about 10 minutes"), "\(refused)")
        #expect(admin.retried.withLock { $0 } == ["shop.example", "links.example"])

        // Screenshots next to the dashboard's own (DashboardBrowserTests.screenshots), at 1440 and 390 px.
        try FileManager.default.createDirectory(
            atPath: DashboardBrowserTests.screenshots, withIntermediateDirectories: true)
        for (width, height) in [(1440, 1000), (390, 844)] {
            try page.resize(width: width, height: height)
            try page.evaluate("document.getElementById('acme-queue').scrollIntoView()")
            let png = try page.screenshot()
            try png.write(to: URL(fileURLWithPath: DashboardBrowserTests.screenshots + "/dashboard-acme-\(width).png"))
            #expect(try browser.distinctColours(in: png) > 20, "\(width) px looks blank")
            let overflow = try page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
            #expect(
                (overflow as? Int).map { $0 <= 0 } == true,
                "\(width) px: the page scrolls sideways by \(overflow ?? "?") px")
        }

        let foreign = page.requestedURLs.filter { !$0.hasPrefix(admin.base + "/") && !$0.hasPrefix("data:") }
        #expect(foreign.isEmpty, "\(foreign)")
        // Chromium logs every answer over 400 as a failed load: the 401s before the token and the 429 the page
        // expects; nothing else (a blocked script or style, an exception).
        let errors = page.errors.filter {
            !$0.contains("status of 401 (Unauthorized)") && !$0.contains("status of 429 (Too Many Requests)")
        }
        #expect(errors.isEmpty, "\(errors)")
    }

    @Test func eachDomainShowsItsChallengeAndAMissingDelegationsRecord() throws {
        var figures = ACMEAdminListener.figures
        figures.statuses["shop.example"]?.challenge = "dns-01"
        figures.statuses["shop.example"]?.delegation = DNSDelegation(
            domain: "shop.example", state: .missing, name: "_acme-challenge.shop.example",
            target: "_acme-challenge.shop.example", zone: "acme.provider.example",
            record: "_acme-challenge.shop.example. IN CNAME shop.example.acme.provider.example.<b>",
            message: "_acme-challenge.shop.example has no CNAME into zone acme.provider.example")
        figures.statuses["links.example"]?.challenge = "dns-01"
        figures.statuses["links.example"]?.wildcard = "*.example"
        figures.statuses["links.example"]?.delegation = DNSDelegation(
            domain: "example", state: .inPlace, name: "_acme-challenge.example",
            target: "example.acme.provider.example", zone: "acme.provider.example", record: nil,
            message: "written in zone acme.provider.example")
        let admin = try ACMEAdminListener(figures: figures)
        let profile = TemporaryDirectory("aasa-devtools")
        let (browser, page) = try Self.signedIn(admin, profile: profile)
        try page.wait(for: "document.querySelector('#domains tr[data-domain=\"shop.example\"] .challenge')")
        func cell(_ domain: String) throws -> String {
            try #require(
                try page.evaluate(
                    "document.querySelector('#domains tr[data-domain=\"\(domain)\"] .cell-cert').innerText")
                    as? String)
        }
        let shop = try cell("shop.example")
        for text in [
            "dns-01", "missing", "add _acme-challenge.shop.example. IN CNAME shop.example.acme.provider.example.<b>",
        ] {
            #expect(shop.contains(text), "\(text) in \(shop)")
        }
        // The record is text: its `<b>` is no element.
        #expect(try page.evaluate("document.querySelector('.delegation-record b') === null") as? Bool == true)
        let links = try cell("links.example")
        for text in ["dns-01 via *.example", "in-place"] { #expect(links.contains(text), "\(text) in \(links)") }
        #expect(!links.contains("add "), "\(links)")
        let overflow = try page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        #expect((overflow as? Int).map { $0 <= 0 } == true, "the page scrolls sideways by \(overflow ?? "?") px")
        withExtendedLifetime(browser) {}
    }
}
