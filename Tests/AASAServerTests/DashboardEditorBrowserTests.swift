import AASACore
import AASATestSupport
import Foundation
import Testing

@testable import AASAServer

/// The dashboard's editor as a web team uses it: a real server watching a copy of the sample config, the tenant API
/// on its admin listener with two write tokens and a read token, and headless Chromium at 390 and 1440 px typing
/// into the editor; curl plays the other writer, and the public listener shows what is served.
@Suite(.serialized) struct DashboardEditorBrowserTests {
    static let writeToken = "w-editor-0123456789abcdef"
    static let otherWriteToken = "w-deploy-0123456789abcdef"
    static let readToken = "r-editor-0123456789abcdef"

    /// `web-team` edits in the browser, `ci-deploy` writes behind its back, `viewer` only reads.
    static func server() throws -> LiveServer {
        try LiveServer(configure: {
            $0.adminAccess = AdminAccess(tokens: [
                AdminToken(name: "web-team", scope: .write, bytes: Array(writeToken.utf8)),
                AdminToken(name: "ci-deploy", scope: .write, bytes: Array(otherWriteToken.utf8)),
                AdminToken(name: "viewer", scope: .read, bytes: Array(readToken.utf8)),
            ])
        })
    }

    /// A browser with the dashboard open at `width`, the token given, and shop.example in the editor.
    struct Session {
        let profile = TemporaryDirectory("aasa-devtools")
        let browser: DevTools
        let page: DevTools.Page
        let origin: String

        init(_ live: LiveServer, token: String, width: Int) throws {
            browser = try DevTools(profile: profile.path)
            page = try browser.openPage(width: width, height: width < 600 ? 844 : 1000)
            origin = "http://127.0.0.1:\(live.admin)"
            try page.navigate(origin + "/")
            try page.wait(for: "document.getElementById('token-form')?.checkVisibility()")
            try page.evaluate("document.getElementById('token').focus()")
            try page.type(token)
            try page.press("Enter")
            try page.wait(for: "document.querySelector('#domains [data-edit=\"shop.example\"]')")
            try page.evaluate("document.querySelector('#domains [data-edit=\"shop.example\"]').click()")
            try page.wait(for: "document.getElementById('editor-text').value.includes('ABCDE12345.com.example.shop')")
            try page.wait(for: "document.getElementById('editor-revision').textContent.startsWith('revision ')")
        }

        /// Selects the first `old` in the editor and types `new` over it, as a user would.
        func replace(_ old: String, with new: String) throws {
            let found = try page.evaluate(
                """
                (() => {
                  const area = document.getElementById('editor-text');
                  const at = area.value.indexOf(\(DashboardEditorBrowserTests.literal(old)));
                  if (at < 0) return false;
                  area.focus();
                  area.setSelectionRange(at, at + \(DashboardEditorBrowserTests.literal(old)).length);
                  return true;
                })()
                """)
            #expect(found as? Bool == true, "\(old) is not in the editor")
            try page.type(new)
        }

        func text(_ selector: String) throws -> String {
            try page.evaluate(
                "document.querySelector(\(DashboardEditorBrowserTests.literal(selector)))?.innerText ?? ''") as? String
                ?? ""
        }

        /// A screenshot of the editor, next to the dashboard's own (``DashboardBrowserTests/screenshots``).
        func screenshot(_ name: String) throws {
            try FileManager.default.createDirectory(
                atPath: DashboardBrowserTests.screenshots, withIntermediateDirectories: true)
            try page.evaluate("document.getElementById('editor').scrollIntoView({ behavior: 'instant' })")
            let png = try page.screenshot()
            try png.write(to: URL(fileURLWithPath: DashboardBrowserTests.screenshots + "/" + name))
            #expect(try browser.distinctColours(in: png) > 20, "\(name) looks blank")
        }

        /// No sideways scroll of the page, nothing from another origin, and no error but the answers the editor
        /// expects (the 401s before the token, a dry run's 422, a save's 412).
        func expectClean(width: Int) throws {
            // Against the width asked for too: a phone's browser widens its layout (and innerWidth) to fit a page
            // wider than the screen.
            let overflow = try page.evaluate(
                "Math.max(document.documentElement.scrollWidth - window.innerWidth, document.documentElement.scrollWidth - \(width))"
            )
            #expect(
                (overflow as? Int).map { $0 <= 0 } == true,
                "\(width) px: the page scrolls sideways by \(overflow ?? "?")")
            let foreign = page.requestedURLs.filter { !$0.hasPrefix(origin + "/") && !$0.hasPrefix("data:") }
            #expect(foreign.isEmpty, "\(foreign)")
            let errors = page.errors.filter { error in
                !["401 (Unauthorized)", "422 (Unprocessable", "412 (Precondition Failed)"].contains {
                    error.contains($0)
                }
            }
            #expect(errors.isEmpty, "\(errors)")
        }
    }

    /// `text` as a JavaScript string literal.
    static func literal(_ text: String) -> String {
        String(decoding: try! JSONEncoder().encode(text), as: UTF8.self)
    }

    static func etag(_ live: LiveServer, token: String = writeToken) throws -> String {
        let answer = try Curl.request(
            "http://127.0.0.1:\(live.admin)/api/v1/domains/shop.example", headers: ["Authorization: Bearer \(token)"])
        return try #require(answer.headers["etag"], "\(answer.status) \(answer.text)")
    }

    /// Waits (20 s: a watcher's debounce and a reload take well under a second) until the public listener serves
    /// shop.example's file with, or without, `path`.
    static func waitUntilServed(_ live: LiveServer, _ path: String, present: Bool = true) throws -> String {
        let started = Date()
        var served = ""
        while Date().timeIntervalSince(started) < 20 {
            served = String(decoding: try live.fetch("shop.example").body, as: UTF8.self)
            if served.contains(path) == present { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return served
    }

    @Test(arguments: [390, 1440])
    func anErrorIsShownAtItsLineAndCannotBeSavedAValidEditShowsItsEffectAndIsServedAndRestoreBringsBackARevision(
        width: Int
    ) throws {
        let live = try Self.server()
        let original = try Self.etag(live)
        let session = try Session(live, token: Self.writeToken, width: width)
        let page = session.page

        // A bad app ID on line 10: marked in the gutter at that line, listed with its rule; Save is off.
        try session.replace("\"ABCDE12345.com.example.shop\"", with: "\"ABC.com.x\"")
        try page.wait(for: "document.querySelector('#editor-gutter .gutter-line[data-line=\"10\"].has-error')")
        let findings = try session.text("#editor-findings")
        #expect(
            findings.contains("10:") && findings.contains("[app-id-format]") && findings.contains("ABC.com.x"),
            "\(findings)")
        #expect(
            try page.evaluate("document.querySelectorAll('#editor-gutter .has-error').length >= 1") as? Bool == true)
        #expect(try page.evaluate("document.getElementById('editor-save').disabled") as? Bool == true)
        #expect(try session.text("#editor-state").contains("Save is off"))
        // Clicking the finding puts the caret on its line.
        try page.evaluate("document.querySelector('#editor-findings [data-line=\"10\"]').click()")
        #expect(
            try page.evaluate(
                """
                (() => { const area = document.getElementById('editor-text');
                  return document.activeElement === area && area.value.slice(0, area.selectionStart).split('\\n').length; })()
                """) as? Int == 10)
        try session.expectClean(width: width)
        try session.screenshot("dashboard-editor-error-\(width).png")
        // A click on the disabled button writes nothing.
        try page.evaluate("document.getElementById('editor-save').click()")
        Thread.sleep(forTimeInterval: 0.3)
        #expect(try Self.etag(live) == original)

        // Fixed, and a rule added: the dry run shows URLs moving from the web to the app, with a checked example.
        try session.replace("\"ABC.com.x\"", with: "\"ABCDE12345.com.example.shop\"")
        let rule = #"{ "path": "/buy/*" },"#
        try session.replace(rule, with: rule + #" { "path": "/editor-made/*" },"#)
        try page.wait(
            for: "document.getElementById('editor-effect').innerText.includes('https://shop.example/editor-made')")
        let effect = try session.text("#editor-effect")
        #expect(effect.contains("web-to-app") && effect.contains("/editor-made/*"), "\(effect)")
        #expect(try page.evaluate("document.querySelectorAll('#editor-gutter .has-error').length") as? Int == 0)
        try page.wait(for: "!document.getElementById('editor-save').disabled")
        #expect(try Self.etag(live) == original, "a dry run wrote")

        // Saved: the new revision is the stored one, and the public listener serves it.
        try page.evaluate("document.getElementById('editor-save').click()")
        try page.wait(for: "document.getElementById('editor-state').textContent.startsWith('Saved revision ')")
        let first = try Self.etag(live)
        let firstRevision = first.trimmingCharacters(in: ["\""])
        #expect(try session.text("#editor-state") == "Saved revision \(firstRevision).")
        #expect(try Self.waitUntilServed(live, "/editor-made/*").contains("/editor-made/*"))

        // A second save; the history names both with the token's name; Restore brings the first back, served.
        try session.replace(#""/editor-made/*" },"#, with: #""/editor-made/*" }, { "path": "/editor-second/*" },"#)
        try page.wait(for: "!document.getElementById('editor-save').disabled")
        try page.evaluate("document.getElementById('editor-save').click()")
        try page.wait(for: "document.getElementById('editor-state').textContent.startsWith('Saved revision ')")
        try page.wait(for: "document.querySelectorAll('#editor-history .history-entry').length === 2")
        let history = try session.text("#editor-history")
        #expect(history.components(separatedBy: "web-team").count == 3, "\(history)")
        #expect(try Self.waitUntilServed(live, "/editor-second/*").contains("/editor-second/*"))
        try page.evaluate("document.querySelector('#editor-history [data-restore=\"\(firstRevision)\"]').click()")
        try page.wait(for: "document.getElementById('editor-state').textContent.startsWith('Restored revision ')")
        #expect(try Self.etag(live) == first)
        #expect(
            try page.evaluate("document.getElementById('editor-text').value.includes('/editor-second/')") as? Bool
                == false)
        let restored = try Self.waitUntilServed(live, "/editor-second/*", present: false)
        #expect(!restored.contains("/editor-second/*") && restored.contains("/editor-made/*"), "\(restored)")
        try page.wait(for: "document.querySelectorAll('#editor-history .history-entry').length === 3")
        #expect(try session.text("#editor-history").contains("restored revision \(firstRevision)"))
        try session.expectClean(width: width)

        try session.screenshot("dashboard-editor-restored-\(width).png")
    }

    @Test(arguments: [390, 1440])
    func aConflictingSaveShowsTheOtherChangeKeepsTheEditAndReloadTakesTheirs(width: Int) throws {
        let live = try Self.server()
        let original = try Self.etag(live)
        let session = try Session(live, token: Self.writeToken, width: width)
        let page = session.page
        let rule = #"{ "path": "/buy/*" },"#
        try session.replace(rule, with: rule + #" { "path": "/mine/*" },"#)
        try page.wait(for: "!document.getElementById('editor-save').disabled")

        // ci-deploy writes first, through the API.
        let site = try String(contentsOfFile: live.configDirectory + "/shop.example/site.json", encoding: .utf8)
        let body = TemporaryDirectory("aasa-editor-body")
        let theirs = try body.write(
            "site.json", site.replacingOccurrences(of: rule, with: rule + #" { "path": "/theirs/*" },"#))
        let written = try Curl.request(
            "http://127.0.0.1:\(live.admin)/api/v1/domains/shop.example", method: "PUT",
            headers: [
                "Authorization: Bearer \(Self.otherWriteToken)", "Content-Type: application/json",
                "If-Match: \(original)",
            ], extra: ["--data-binary", "@\(theirs)"])
        #expect(written.status == 200, "\(written.text)")
        let their = try #require(written.headers["etag"]).trimmingCharacters(in: ["\""])

        // Save: refused, the other change shown (who, what, their lines against the base), the edit kept.
        try page.evaluate("document.getElementById('editor-save').click()")
        try page.wait(for: "document.getElementById('editor-conflict').checkVisibility()")
        let conflict = try session.text("#editor-conflict")
        for text in ["Someone saved first", their, "ci-deploy", "/theirs/*"] {
            #expect(conflict.contains(text), "\(text) in \(conflict)")
        }
        let added = try page.evaluate(
            "[...document.querySelectorAll('#editor-conflict .diff-add')].map(line => line.textContent).join('')")
        #expect((added as? String)?.contains("/theirs/*") == true, "\(added ?? "") in \(conflict)")
        #expect(try page.evaluate("document.getElementById('editor-text').value.includes('/mine/*')") as? Bool == true)
        #expect(try session.text("#editor-state").contains("Your edit is kept"))
        try session.expectClean(width: width)
        try session.screenshot("dashboard-editor-conflict-\(width).png")

        // Reload asks first, then takes their version and its ETag.
        try page.evaluate("document.querySelector('#editor-conflict [data-conflict=\"reload\"]').click()")
        try page.wait(for: "document.getElementById('editor-ask').checkVisibility()")
        #expect(try page.evaluate("document.getElementById('editor-text').value.includes('/mine/*')") as? Bool == true)
        try page.evaluate("document.querySelector('#editor-ask [data-ask=\"yes\"]').click()")
        try page.wait(for: "document.getElementById('editor-text').value.includes('/theirs/*')")
        #expect(try page.evaluate("document.getElementById('editor-text').value.includes('/mine/*')") as? Bool == false)
        #expect(try session.text("#editor-revision") == "revision \(their)")
        #expect(try page.evaluate("document.getElementById('editor-conflict').checkVisibility()") as? Bool == false)
        try page.wait(for: "document.querySelector('#editor-history .history-actor')?.textContent === 'ci-deploy'")
    }

    @Test(arguments: [390, 1440])
    func aReadTokenGetsTheEditorReadOnlyWithoutSaveOrRestore(width: Int) throws {
        let live = try Self.server()
        // One revision in the history, so that a Restore button could show.
        let site = try String(contentsOfFile: live.configDirectory + "/shop.example/site.json", encoding: .utf8)
        let body = TemporaryDirectory("aasa-editor-body")
        let rule = #"{ "path": "/buy/*" },"#
        let file = try body.write(
            "site.json", site.replacingOccurrences(of: rule, with: rule + #" { "path": "/purchase/*" },"#))
        let written = try Curl.request(
            "http://127.0.0.1:\(live.admin)/api/v1/domains/shop.example", method: "PUT",
            headers: ["Authorization: Bearer \(Self.writeToken)", "Content-Type: application/json"],
            extra: ["--data-binary", "@\(file)"])
        #expect(written.status == 200, "\(written.text)")

        let session = try Session(live, token: Self.readToken, width: width)
        let page = session.page
        try page.wait(for: "document.querySelectorAll('#editor-history [data-view]').length === 1")
        #expect(try page.evaluate("document.getElementById('editor-text').readOnly") as? Bool == true)
        #expect(try page.evaluate("document.getElementById('editor-save').checkVisibility()") as? Bool == false)
        #expect(try page.evaluate("document.querySelectorAll('[data-restore]').length") as? Int == 0)
        #expect(try session.text("#editor-scope").contains("“viewer” can read only"))
        // Typing changes nothing, and no dry run (a write) is sent.
        let before = try page.evaluate("document.getElementById('editor-text').value") as? String
        try page.evaluate("document.getElementById('editor-text').focus()")
        try page.type("xyz")
        Thread.sleep(forTimeInterval: 0.6)
        #expect(try page.evaluate("document.getElementById('editor-text').value") as? String == before)
        #expect(!page.requestedURLs.contains { $0.contains("dryRun") }, "\(page.requestedURLs)")
        // A revision can still be viewed.
        try page.evaluate("document.querySelector('#editor-history [data-view]').click()")
        try page.wait(
            for: "document.querySelector('#editor-revision-view .revision-text')?.textContent.includes('/purchase/*')")
        try session.expectClean(width: width)
    }
}
