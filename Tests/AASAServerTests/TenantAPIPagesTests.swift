import AASACore
import AASATestSupport
import Foundation
import Synchronization
import Testing

@testable import AASAServer

extension APIFixture {
    /// A request on `/api/v1/domains/shop.example/pages/<path>` (the raw path, as the listener hands it over).
    @discardableResult
    func page(
        _ method: RequestMethod, _ path: String, bytes: [UInt8]? = nil, query: String? = nil, ifMatch: String? = nil,
        ifNoneMatch: String? = nil, key: String? = nil, scope: AdminToken.Scope = .write,
        domain: String = "shop.example",
        on api: TenantAPI? = nil
    ) -> Response {
        (api ?? self.api).answer(
            APIRequest(
                method: method, path: "/api/v1/domains/\(domain)/pages/" + path, rawQuery: query, ifMatch: ifMatch,
                ifNoneMatch: ifNoneMatch, idempotencyKey: key, contentType: bytes == nil ? nil : "text/plain",
                body: bytes ?? [], caller: AdminCaller(name: scope == .write ? "deployer" : "viewer", scope: scope)))
    }

    /// The domain's site.json ETag.
    func siteTag(_ domain: String = "shop.example") -> String? { call(.get, "/" + domain).header("ETag") }
}

/// A PEM private key's armour, as a page must never hold one.
let privateKeyPage = Array(
    "<html>\n-----BEGIN PRIVATE KEY-----\nMIIBVAIBADANBgkqhkiG9w0BAQEFAASCAT4wggE6AgEAAkEA\n-----END PRIVATE KEY-----\n"
        .utf8)

/// A PNG header of `width`×`height` (what ``PNGInfo`` reads).
func pngHeader(_ width: UInt32, _ height: UInt32) -> [UInt8] {
    func be(_ value: UInt32) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) } }
    return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8) + be(width) + be(height)
        + [8, 6, 0, 0, 0, 0, 0, 0, 0]
}

extension TenantAPITests {
    /// A page is written, read (typed by its name, never by the request), listed, replaced with `If-Match`, refused
    /// on a stale `If-Match` or `If-None-Match: *` over it, and deleted with `If-Match` only; the site.json's ETag
    /// and its history never move.
    @Test(arguments: APIBackend.allCases)
    func aPageIsWrittenReadListedReplacedAndDeleted(_ backend: APIBackend) throws {
        let fixture = try APIFixture(backend)
        let html = Array("<!doctype html><html><head><title>Hi</title></head><body>hi</body></html>\n".utf8)
        #expect(fixture.page(.put, "index.html", bytes: html).status == 404, "a page needs its domain first")
        #expect(fixture.call(.put, "/shop.example", body: siteJSON(["/buy/*"])).status == 201)
        let siteTag = try #require(fixture.siteTag())

        let created = fixture.page(.put, "index.html", bytes: html)
        #expect(created.status == 201, "\(created.text)")
        // The first 16 hex digits of the page's SHA-256 (`sha256sum`), in both stores.
        let revision = "72d471b287cf4e29"
        #expect(created.json["revision"] as? String == revision)
        #expect(created.json["created"] as? Bool == true)
        #expect(created.json["dryRun"] as? Bool == false)
        #expect(created.json["bytes"] as? Int == html.count)
        #expect(created.json["contentType"] as? String == "text/html; charset=utf-8")
        #expect(created.json["path"] as? String == "index.html")
        #expect(created.header("ETag") == "\"\(revision)\"")
        let icon = pngHeader(180, 180)
        #expect(fixture.page(.put, "apple-touch-icon.png", bytes: icon).status == 201)
        #expect(fixture.page(.put, "a/b/notes.txt", bytes: Array("notes".utf8)).status == 201)
        if backend == .folder {
            let onDisk = try Data(
                contentsOf: URL(fileURLWithPath: fixture.folder.path + "/shop.example/pages/index.html"))
            #expect(Array(onDisk) == html)
        }

        let read = fixture.page(.get, "index.html", scope: .read)
        #expect(read.status == 200)
        #expect(read.body == html)
        #expect(read.header("Content-Type") == "text/html; charset=utf-8")
        #expect(read.header("ETag") == "\"\(revision)\"")
        #expect(read.header("Cache-Control") == "no-store")
        #expect(read.header("X-Content-Type-Options") == "nosniff")
        #expect(fixture.page(.get, "apple-touch-icon.png").header("Content-Type") == "image/png")
        #expect(fixture.page(.get, "index.html", ifNoneMatch: "\"\(revision)\"").status == 304)
        #expect(fixture.page(.get, "missing.html").status == 404)
        #expect(fixture.page(.get, "index.html", domain: "other.example").status == 404)

        let listing = fixture.call(.get, "/shop.example/pages", scope: .read)
        #expect(listing.status == 200, "\(listing.text)")
        #expect(listing.json["domain"] as? String == "shop.example")
        let pages = try #require(listing.json["pages"] as? [[String: Any]])
        #expect(pages.compactMap { $0["path"] as? String } == ["a/b/notes.txt", "apple-touch-icon.png", "index.html"])
        #expect(pages.last?["revision"] as? String == revision)
        #expect(pages.last?["bytes"] as? Int == html.count)
        #expect(pages.compactMap { $0["contentType"] as? String }.first == "text/plain; charset=utf-8")
        #expect(fixture.call(.get, "/other.example/pages").status == 404)

        let newer = html + Array("<!-- 2 -->\n".utf8)
        let replaced = fixture.page(.put, "index.html", bytes: newer, ifMatch: "\"\(revision)\"")
        #expect(replaced.status == 200, "\(replaced.text)")
        #expect(replaced.json["created"] as? Bool == false)
        let revision2 = DomainPage.revision(of: newer)
        let stale = fixture.page(.put, "index.html", bytes: html, ifMatch: "\"\(revision)\"")
        #expect(stale.status == 412)
        #expect(stale.json["revision"] as? String == revision2)
        #expect(stale.header("ETag") == "\"\(revision2)\"")
        let createOnly = fixture.page(.put, "index.html", bytes: html, ifNoneMatch: "*")
        #expect(createOnly.status == 412)
        #expect(createOnly.json["revision"] as? String == revision2)
        #expect(fixture.page(.put, "new.html", bytes: html, ifMatch: "\"\(revision)\"").status == 412)
        #expect(fixture.page(.get, "index.html").body == newer)

        #expect(fixture.page(.delete, "index.html").status == 428)
        #expect(fixture.page(.delete, "index.html", ifMatch: "\"\(revision)\"").status == 412)
        let dryRun = fixture.page(.delete, "index.html", query: "dryRun=true", ifMatch: "\"\(revision2)\"")
        #expect(dryRun.status == 200 && dryRun.json["dryRun"] as? Bool == true, "\(dryRun.text)")
        #expect(dryRun.json["revision"] as? String == revision2)
        #expect(fixture.page(.get, "index.html").status == 200)
        #expect(fixture.page(.delete, "index.html", ifMatch: "\"\(revision2)\"").status == 204)
        #expect(fixture.page(.get, "index.html").status == 404)
        #expect(fixture.page(.delete, "index.html", ifMatch: "\"\(revision2)\"").status == 404)

        // No page write moved the site.json's revision, nor wrote its history.
        #expect(fixture.siteTag() == siteTag)
        #expect((fixture.call(.get, "/shop.example/history").json["revisions"] as? [Any])?.count == 1)
        // A new repository (another replica, a restart) reads the same pages.
        let again = TenantAPI(repository: try fixture.another())
        #expect(fixture.page(.get, "apple-touch-icon.png", on: again).body == icon)
    }

    /// `?dryRun=true` answers as the write would and writes nothing; an `Idempotency-Key` replay answers the first
    /// answer again and writes nothing.
    @Test(arguments: APIBackend.allCases)
    func aPageDryRunAndAReplayWriteNothing(_ backend: APIBackend) throws {
        let fixture = try APIFixture(backend)
        #expect(fixture.call(.put, "/shop.example", body: siteJSON(["/buy/*"])).status == 201)
        let bytes = Array("hello\n".utf8)
        let dry = fixture.page(.put, "hello.txt", bytes: bytes, query: "dryRun=true")
        #expect(dry.status == 201, "\(dry.text)")
        #expect(dry.json["dryRun"] as? Bool == true)
        #expect(dry.json["revision"] as? String == DomainPage.revision(of: bytes))
        #expect(fixture.page(.get, "hello.txt").status == 404)
        #expect((fixture.call(.get, "/shop.example/pages").json["pages"] as? [Any])?.isEmpty == true)

        let first = fixture.page(.put, "hello.txt", bytes: bytes, key: "page-1")
        #expect(first.status == 201)
        let tag = try #require(first.header("ETag"))
        #expect(fixture.page(.delete, "hello.txt", ifMatch: tag).status == 204)
        let replay = fixture.page(.put, "hello.txt", bytes: bytes, key: "page-1")
        #expect(replay.status == 201)
        #expect(replay.body == first.body)
        #expect(replay.header("Idempotent-Replayed") == "true")
        #expect(fixture.page(.get, "hello.txt").status == 404, "the replay wrote nothing")
        #expect(fixture.page(.put, "hello.txt", bytes: Array("other".utf8), key: "page-1").status == 422)
    }

    /// A read token reads pages and cannot write them (403); nothing is written.
    @Test(arguments: [RequestMethod.put, .delete])
    func aReadTokenCannotWritePages(_ method: RequestMethod) throws {
        let fixture = try APIFixture(.folder)
        #expect(fixture.call(.put, "/shop.example", body: siteJSON(["/a/*"])).status == 201)
        let written = fixture.page(.put, "a.txt", bytes: Array("a".utf8))
        let refused = fixture.page(
            method, "a.txt", bytes: Array("b".utf8), ifMatch: written.header("ETag"), scope: .read)
        #expect(refused.status == 403, "\(refused.text)")
        #expect(fixture.page(.get, "a.txt", scope: .read).body == Array("a".utf8))
        #expect(fixture.call(.get, "/shop.example/pages", scope: .read).status == 200)
    }

    /// Path tricks get 400 naming the problem before anything is read or written, whatever the method; what a load
    /// serves is written (a top-level `.well-known/`, UTF-8 names sent percent-encoded).
    @Test(arguments: [
        ("..", 400, "'..'"), ("a/../b.html", 400, "'..'"), ("%2e%2e/x.html", 400, "'..'"), ("./a.html", 400, "'.'"),
        ("a%2F..%2Fb.html", 400, "'..'"), ("a%2F%2Fb.html", 400, "empty segment"), ("a%00b.html", 400, "NUL"),
        ("a\u{0}b.html", 400, "NUL"), ("a%0Ab.html", 400, "control"), ("a\\b.html", 400, "backslash"),
        ("a%5Cb.html", 400, "backslash"), ("a%25b.html", 400, "'%'"), ("a%zzb.html", 400, "two hex"),
        ("a//b.html", 400, "empty segment"), ("a/", 400, "empty segment"), (".git/config", 400, "hidden"),
        ("a/.env", 400, "hidden"), ("a/.well-known/x", 400, "hidden"), ("%C0%AE%C0%AE/x", 400, "UTF-8"),
        (Array(repeating: "d", count: 33).joined(separator: "/") + "/x.html", 400, "nested folders"),
        (".well-known/assetlinks-extra.json", 201, ""), ("caf%C3%A9.html", 201, ""),
        (Array(repeating: "d", count: 32).joined(separator: "/") + "/x.html", 201, ""),
    ])
    func pagePathTricksAreRefusedFirst(_ path: String, _ status: Int, _ problem: String) throws {
        let fixture = try APIFixture(.folder)
        #expect(fixture.call(.put, "/shop.example", body: siteJSON(["/a/*"])).status == 201)
        for method in [RequestMethod.get, .put, .delete] where status == 400 {
            let answer = fixture.page(method, path, bytes: Array("x".utf8), ifMatch: "*")
            #expect(answer.status == 400, "\(method) \(path): \(answer.text)")
            #expect((answer.json["error"] as? String)?.contains(problem) == true, "\(path): \(answer.text)")
        }
        if status == 400 {
            #expect(!FileManager.default.fileExists(atPath: fixture.folder.path + "/shop.example/pages"))
            return
        }
        let written = fixture.page(.put, path, bytes: Array("x".utf8))
        #expect(written.status == status, "\(path): \(written.text)")
        // What the API wrote is what a load serves, at the same path.
        let loaded = SiteConfigLoader().loadDomain(
            domain: "shop.example", file: fixture.folder.path + "/shop.example/site.json")
        let decoded = try #require(RequestPath("/" + path))
        #expect(
            loaded.pages?.files[decoded.description] != nil, "\(path) in \(loaded.pages?.files.keys.sorted() ?? [])")
    }

    /// An encoded slash separates folders as a plain one does (an OpenAPI client encodes every `/` of a path
    /// parameter): both name the same page, and a load serves it at the path with plain slashes.
    @Test func anEncodedSlashSeparatesFoldersAsAPlainOneDoes() throws {
        let fixture = try APIFixture(.folder)
        #expect(fixture.call(.put, "/shop.example", body: siteJSON(["/a/*"])).status == 201)
        let written = fixture.page(.put, "a%2Fb.html", bytes: Array("x".utf8))
        #expect(written.status == 201, "\(written.text)")
        let read = fixture.page(.get, "a/b.html")
        #expect(read.status == 200 && read.body == Array("x".utf8), "\(read.text)")
        #expect(fixture.page(.get, "a%2fb.html").header("ETag") == written.header("ETag"))
        let loaded = SiteConfigLoader().loadDomain(
            domain: "shop.example", file: fixture.folder.path + "/shop.example/site.json")
        #expect(loaded.pages?.files["/a/b.html"] != nil, "\(loaded.pages?.files.keys.sorted() ?? [])")
    }

    /// A page path of more characters than ``APIPagePath/maximumCharacters`` is refused, naming the limit; one of
    /// exactly that many, nearly all four-byte characters, is written and read back. A name of more bytes than a file
    /// name holds is 422, whatever the method, before anything is written.
    @Test func aPagePathHasACharacterLimitThatFitsARequestLineAndNamesFitAFile() throws {
        let fixture = try APIFixture(.folder)
        #expect(fixture.call(.put, "/shop.example", body: siteJSON(["/a/*"])).status == 201)
        let name = String(repeating: "%F0%9F%98%80", count: 63)
        let longest =
            Array(repeating: name, count: 5).joined(separator: "/") + "/"
            + String(repeating: "%F0%9F%98%80", count: 20)
        let written = fixture.page(.put, longest, bytes: Array("x".utf8))
        #expect(written.status == 201, "\(written.text)")
        #expect(fixture.page(.get, longest).body == Array("x".utf8))
        let refused = fixture.page(.put, longest + "a", bytes: Array("x".utf8))
        #expect(refused.status == 400)
        #expect((refused.json["error"] as? String)?.contains("the limit is 340") == true, "\(refused.text)")
        for method in [RequestMethod.get, .put, .delete] {
            let tooLong = fixture.page(
                method, "a/" + String(repeating: "%C3%A9", count: 128), bytes: Array("x".utf8), ifMatch: "*")
            #expect(tooLong.status == 422, "\(method): \(tooLong.text)")
            #expect((tooLong.json["error"] as? String)?.contains("255 bytes") == true, "\(tooLong.text)")
        }
        #expect(!FileManager.default.fileExists(atPath: fixture.folder.path + "/shop.example/pages/a"))
    }

    /// A page holding a private key, a touch icon that is not a square PNG, a broken landing template: 422 naming
    /// the rule, nothing written.
    @Test(arguments: APIBackend.allCases)
    func aPageALoadWouldRefuseIsNotWritten(_ backend: APIBackend) throws {
        let fixture = try APIFixture(backend)
        #expect(fixture.call(.put, "/shop.example", body: siteJSON(["/a/*"])).status == 201)
        let cases: [(String, [UInt8], String)] = [
            ("key.html", privateKeyPage, "private-key-in-page"),
            ("apple-touch-icon.png", Array("not a png".utf8), "touch-icon-format"),
            ("apple-touch-icon-120x120.png", pngHeader(120, 100), "touch-icon-square"),
            ("_landing.html", Array("<html>{{nope}}</html>".utf8), "landing-template"),
        ]
        for (path, bytes, rule) in cases {
            let refused = fixture.page(.put, path, bytes: bytes)
            #expect(refused.status == 422, "\(path): \(refused.text)")
            #expect((refused.json["error"] as? String)?.contains(rule) == true, "\(path): \(refused.text)")
            #expect(fixture.page(.get, path).status == 404)
        }
        #expect((fixture.call(.get, "/shop.example/pages").json["pages"] as? [Any])?.isEmpty == true)
        #expect(fixture.page(.put, "apple-touch-icon-120x120.png", bytes: pngHeader(120, 120)).status == 201)
    }

    /// The landing template is the one the config names: with `pages/t/landing.html` configured, that file is checked
    /// as a template, and `_landing.html` is a page like any other (served by a load, so checked and counted as one).
    @Test(arguments: APIBackend.allCases)
    func theLandingTemplateIsTheOneTheConfigNames(_ backend: APIBackend) throws {
        let fixture = try APIFixture(backend)
        let banner = #"{ "smartAppBanner": { "appStoreID": "640199958" }, "#
        let site = siteJSON(["/a/*"]).replacingOccurrences(of: "{\n", with: banner, options: .anchored)
        #expect(fixture.call(.put, "/shop.example", body: site).status == 201, "\(site)")
        #expect(fixture.page(.put, "t/landing.html", bytes: Array("<html>{{title}}</html>".utf8)).status == 201)
        let configured = site.replacingOccurrences(
            of: banner, with: banner + #""pages": { "landingPage": { "template": "pages/t/landing.html" } }, "#)
        let tag = try #require(fixture.siteTag())
        #expect(fixture.call(.put, "/shop.example", body: configured, ifMatch: tag).status == 200)
        let broken = Array("<html>{{nope}}</html>".utf8)
        let template = fixture.page(.put, "t/landing.html", bytes: broken)
        #expect(template.status == 422, "\(template.text)")
        #expect((template.json["error"] as? String)?.contains("landing-template") == true, "\(template.text)")
        #expect(fixture.page(.put, "_landing.html", bytes: broken).status == 201)
    }

    /// The caps are decided before anything is written: a page over the file cap and a landing template over its
    /// 1 MiB get 413; the domain's file count and total, the new file counted in place of the old one, 422 naming
    /// the limit (with a loader whose limits are small).
    @Test(arguments: APIBackend.allCases)
    func pageCapsAreDecidedBeforeTheWrite(_ backend: APIBackend) throws {
        let fixture = try APIFixture(backend)
        #expect(fixture.call(.put, "/shop.example", body: siteJSON(["/a/*"])).status == 201)
        let template = PageLoader().maximumTemplateBytes
        let over = fixture.page(.put, "_landing.html", bytes: Array(repeating: 0x20, count: template + 1))
        #expect(over.status == 413, "\(over.text)")
        #expect((over.json["error"] as? String)?.contains("\(template)") == true)
        #expect(fixture.page(.put, "_landing.html", bytes: Array(repeating: 0x20, count: template)).status == 201)

        var small = PageLoader()
        small.maximumFiles = 3
        small.maximumTotalBytes = 100
        small.maximumFileBytes = 60
        let api = TenantAPI(repository: try fixture.another(), pageLoader: small)
        let tooLarge = fixture.page(.put, "big.txt", bytes: Array(repeating: 0x61, count: 61), on: api)
        #expect(tooLarge.status == 413, "\(tooLarge.text)")
        #expect((tooLarge.json["error"] as? String)?.contains("60") == true)
        // The landing template is not one of the domain's counted files.
        for name in ["a.txt", "b.txt"] {
            #expect(fixture.page(.put, name, bytes: Array(repeating: 0x61, count: 40), on: api).status == 201)
        }
        let total = fixture.page(.put, "c.txt", bytes: Array(repeating: 0x61, count: 21), on: api)
        #expect(total.status == 422, "\(total.text)")
        #expect((total.json["error"] as? String)?.contains("at most 100 bytes") == true, "\(total.text)")
        let dryTotal = fixture.page(
            .put, "c.txt", bytes: Array(repeating: 0x61, count: 21), query: "dryRun=true", on: api)
        #expect(dryTotal.status == 422)
        #expect(fixture.page(.put, "c.txt", bytes: Array(repeating: 0x61, count: 20), on: api).status == 201)
        // In place of the old one: a replacement of the same size fits.
        #expect(fixture.page(.put, "a.txt", bytes: Array(repeating: 0x62, count: 40), on: api).status == 200)
        let count = fixture.page(.put, "d.txt", bytes: [0x61], on: api)
        #expect(count.status == 422, "\(count.text)")
        #expect((count.json["error"] as? String)?.contains("at most 3") == true, "\(count.text)")
        #expect(fixture.page(.get, "c.txt").body.count == 20)
        #expect(fixture.page(.get, "d.txt").status == 404)
        #expect(fixture.page(.get, "big.txt").status == 404)
    }
}

extension TenantAPITests {
    /// No symlink leads a page write or removal anywhere: a link on the way (to a folder outside the domain, or to
    /// one inside it) is refused, naming it, and nothing is written where it points.
    @Test(arguments: ["outside", "inside"])
    func aSymlinkNeverLeadsAPageWrite(_ target: String) throws {
        let fixture = try APIFixture(.folder)
        #expect(fixture.call(.put, "/shop.example", body: siteJSON(["/a/*"])).status == 201)
        let elsewhere = TemporaryDirectory("aasa-api-elsewhere")
        let pages = fixture.folder.path + "/shop.example/pages"
        try FileManager.default.createDirectory(atPath: pages + "/real", withIntermediateDirectories: true)
        let destination = target == "outside" ? elsewhere.path : pages + "/real"
        try FileManager.default.createSymbolicLink(atPath: pages + "/link", withDestinationPath: destination)
        let refused = fixture.page(.put, "link/x.html", bytes: Array("x".utf8))
        #expect(refused.status == 503, "\(refused.text)")
        #expect((refused.json["error"] as? String)?.contains("pages/link") == true, "\(refused.text)")
        #expect(DirectoryListing.names(in: destination) == [])
        // Nor a link as pages/ itself.
        let other = fixture.folder.path + "/shop.example"
        try FileManager.default.moveItem(atPath: pages, toPath: other + "/moved")
        try FileManager.default.createSymbolicLink(atPath: pages, withDestinationPath: elsewhere.path)
        #expect(fixture.page(.put, "y.html", bytes: Array("y".utf8)).status == 503)
        #expect(DirectoryListing.names(in: elsewhere.path) == [])
    }
}

extension TenantAPITests {
    /// 20 concurrent page writes with one `If-Match`, through five repositories (five connections, five lockers of
    /// the folder): exactly one is written, the others get 412.
    @Test(arguments: APIBackend.allCases)
    func concurrentPageWritesWithOneIfMatchWriteOnce(_ backend: APIBackend) throws {
        let fixture = try APIFixture(backend)
        #expect(fixture.call(.put, "/shop.example", body: siteJSON(["/a/*"])).status == 201)
        let tag = try #require(fixture.page(.put, "race.txt", bytes: Array("start".utf8)).header("ETag"))
        let apis = try (0..<5).map { _ in TenantAPI(repository: try fixture.another()) }
        let statuses = Mutex<[Int]>([])
        DispatchQueue.concurrentPerform(iterations: 20) { index in
            let answer = fixture.page(
                .put, "race.txt", bytes: Array("writer \(index)".utf8), ifMatch: tag, on: apis[index % apis.count])
            statuses.withLock { $0.append(answer.status) }
        }
        let all = statuses.withLock { $0 }
        #expect(all.filter { $0 == 200 }.count == 1, "\(all)")
        #expect(all.filter { $0 == 412 }.count == 19, "\(all)")
    }
}
