import AASACore
import AASATestSupport
import Foundation
import Synchronization
import Testing

@testable import AASAServer

/// Where a test's domains are: a config folder, or a new database of the suite's PostgreSQL cluster.
enum APIBackend: String, CaseIterable, Sendable, CustomStringConvertible {
    case folder, store

    var description: String { rawValue }
}

/// One test's API over one backend, called as the listener calls it (``TenantAPI/answer(_:)``).
final class APIFixture: @unchecked Sendable {
    let backend: APIBackend
    let folder = TemporaryDirectory("aasa-api")
    let uri: String?
    let api: TenantAPI
    let historyCapacity: Int

    init(
        _ backend: APIBackend, states: @escaping @Sendable () -> [String: TenantAPI.DomainState] = { [:] },
        status: @escaping @Sendable (String) -> JSONValue? = { _ in nil }, historyCapacity: Int = domainHistoryCapacity
    ) throws {
        self.backend = backend
        self.historyCapacity = historyCapacity
        uri = backend == .store ? try StoreCluster.database("api_" + UUID().uuidString.prefix(8).lowercased()) : nil
        api = TenantAPI(
            repository: try Self.repository(backend, folder: folder.path, uri: uri, historyCapacity: historyCapacity),
            states: states, status: status)
    }

    /// A new repository over the same folder or database (another process's, or this one's after a restart).
    static func repository(
        _ backend: APIBackend, folder: String, uri: String?, historyCapacity: Int = domainHistoryCapacity
    ) throws -> any DomainRepository {
        switch backend {
        case .folder: FolderDomainRepository(directory: folder, historyCapacity: historyCapacity)
        case .store: StoreDomainRepository(store: try Store(uri: uri!), historyCapacity: historyCapacity)
        }
    }

    func another() throws -> any DomainRepository {
        try Self.repository(backend, folder: folder.path, uri: uri, historyCapacity: historyCapacity)
    }

    @discardableResult
    func call(
        _ method: RequestMethod, _ path: String, query: String? = nil, body: String? = nil, ifMatch: String? = nil,
        ifNoneMatch: String? = nil, key: String? = nil, scope: AdminToken.Scope = .write, on api: TenantAPI? = nil
    ) -> Response {
        (api ?? self.api).answer(
            APIRequest(
                method: method, path: "/api/v1/domains" + path, rawQuery: query, ifMatch: ifMatch,
                ifNoneMatch: ifNoneMatch, idempotencyKey: key, contentType: body == nil ? nil : "application/json",
                body: Array((body ?? "").utf8),
                caller: AdminCaller(name: scope == .write ? "deployer" : "viewer", scope: scope)))
    }
}

extension Response {
    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
    }

    var text: String { String(decoding: body, as: UTF8.self) }

    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}

/// A valid site.json opening `paths` in one app.
func siteJSON(_ paths: [String], app: String = "ABCDE12345.com.example.shop") -> String {
    let rules = paths.map { "{ \"path\": \"\($0)\" }" }.joined(separator: ", ")
    return """
        {
          "universalLinks": {
            "apps": [
              { "appIDs": ["\(app)"], "rules": [\(rules)] }
            ]
          }
        }

        """
}

@Suite(.storeCluster) struct TenantAPITests {
    /// Create, read, replace, history, one revision read back, restore: on both stores, and the history read again
    /// by a new repository (another replica, or the server after a restart).
    @Test(arguments: APIBackend.allCases)
    func aDomainIsCreatedReadReplacedAndRestoredWithItsHistory(_ backend: APIBackend) throws {
        let fixture = try APIFixture(backend)
        let first = siteJSON(["/buy/*"])
        let created = fixture.call(.put, "/shop.example", body: first)
        #expect(created.status == 201, "\(created.text)")
        let revision1 = try #require(created.json["revision"] as? String)
        #expect(created.header("ETag") == "\"\(revision1)\"")
        #expect(created.json["created"] as? Bool == true)
        let changes = try #require(created.json["changes"] as? [[String: Any]])
        #expect(changes.first?["kind"] as? String == "web-to-app", "\(created.text)")

        let read = fixture.call(.get, "/shop.example")
        #expect(read.status == 200)
        #expect(read.text == first)
        #expect(read.header("Content-Type") == "application/json")
        #expect(read.header("ETag") == "\"\(revision1)\"")
        if backend == .folder {
            // Where the server (and a git user's working tree) finds it.
            let onDisk = try String(contentsOfFile: fixture.folder.path + "/shop.example/site.json", encoding: .utf8)
            #expect(onDisk == first)
        }

        let second = siteJSON(["/buy/*", "/help/*"])
        let replaced = fixture.call(.put, "/shop.example", body: second, ifMatch: "\"\(revision1)\"")
        #expect(replaced.status == 200, "\(replaced.text)")
        let revision2 = try #require(replaced.json["revision"] as? String)
        #expect(revision2 != revision1)
        #expect((replaced.json["summary"] as? String)?.contains("web-to-app") == true, "\(replaced.text)")

        let history = fixture.call(.get, "/shop.example/history")
        let revisions = try #require(history.json["revisions"] as? [[String: Any]])
        #expect(revisions.map { $0["revision"] as? String } == [revision2, revision1])
        #expect(revisions.allSatisfy { $0["actor"] as? String == "deployer" && $0["time"] is String })
        #expect(fixture.call(.get, "/shop.example/history/\(revision1)").text == first)

        let restored = fixture.call(.post, "/shop.example/history/\(revision1)/restore", ifMatch: "\"\(revision2)\"")
        #expect(restored.status == 200, "\(restored.text)")
        #expect((restored.json["summary"] as? String)?.hasPrefix("restored revision \(revision1)") == true)
        #expect(fixture.call(.get, "/shop.example").text == first)

        // A new repository over the same folder or database: the history is kept outside the process.
        let again = TenantAPI(repository: try fixture.another())
        let kept = fixture.call(.get, "/shop.example/history", on: again)
        #expect((kept.json["revisions"] as? [[String: Any]])?.count == 3, "\(kept.text)")
    }

    /// `If-None-Match: *` creates only; a stale `If-Match` gets 412 with the revision now current; a removal needs
    /// `If-Match`, and the history stays after it.
    @Test(arguments: APIBackend.allCases)
    func preconditionsDecideEveryWrite(_ backend: APIBackend) throws {
        let fixture = try APIFixture(backend)
        let created = fixture.call(.put, "/shop.example", body: siteJSON(["/a/*"]), ifNoneMatch: "*")
        #expect(created.status == 201, "\(created.text)")
        let revision = try #require(created.json["revision"] as? String)

        let again = fixture.call(.put, "/shop.example", body: siteJSON(["/b/*"]), ifNoneMatch: "*")
        #expect(again.status == 412)
        #expect(again.json["revision"] as? String == revision)
        let stale = fixture.call(.put, "/shop.example", body: siteJSON(["/b/*"]), ifMatch: "\"0\"")
        #expect(stale.status == 412)
        #expect(stale.json["revision"] as? String == revision)
        #expect(stale.header("ETag") == "\"\(revision)\"")
        #expect(fixture.call(.put, "/new.example", body: siteJSON(["/b/*"]), ifMatch: "\"\(revision)\"").status == 412)

        #expect(fixture.call(.delete, "/shop.example").status == 428)
        #expect(fixture.call(.delete, "/shop.example", ifMatch: "\"0\"").status == 412)
        let dryRun = fixture.call(.delete, "/shop.example", query: "dryRun=true", ifMatch: "\"\(revision)\"")
        #expect(dryRun.status == 200 && dryRun.json["dryRun"] as? Bool == true, "\(dryRun.text)")
        #expect(dryRun.json["revision"] as? String == revision)
        #expect(fixture.call(.get, "/shop.example").status == 200)
        #expect(fixture.call(.delete, "/shop.example", ifMatch: "\"\(revision)\"").status == 204)
        #expect(fixture.call(.get, "/shop.example").status == 404)
        #expect(fixture.call(.delete, "/shop.example", ifMatch: "\"\(revision)\"").status == 404)
        if backend == .folder {
            #expect(!FileManager.default.fileExists(atPath: fixture.folder.path + "/shop.example"))
        }
        let history = fixture.call(.get, "/shop.example/history")
        let revisions = try #require(history.json["revisions"] as? [[String: Any]])
        #expect(revisions.map { $0["removed"] as? Bool } == [true, false], "\(history.text)")
        #expect(fixture.call(.get, "/shop.example/history/\(revision)").text == siteJSON(["/a/*"]))
    }

    /// A body with an error gets 422 with the findings `check` reports, at their lines, and nothing is written;
    /// a body that is not JSON (or not UTF-8) too.
    @Test(arguments: APIBackend.allCases)
    func aBodyWithErrorsIsRefusedWithCheckFindingsAndNothingIsWritten(_ backend: APIBackend) throws {
        let fixture = try APIFixture(backend)
        let broken = siteJSON(["/buy/*"], app: "ABC.com.x")
        let refused = fixture.call(.put, "/shop.example", body: broken)
        #expect(refused.status == 422, "\(refused.text)")
        let diagnostics = try #require(refused.json["diagnostics"] as? [[String: Any]])
        let checked = SiteConfigLoader().loadDomain(
            domain: "shop.example", source: SourceText(name: "shop.example/site.json", bytes: Array(broken.utf8)))
        let expected = checked.diagnostics.filter { $0.severity == .error }
        #expect(!expected.isEmpty)
        for finding in expected {
            #expect(
                diagnostics.contains {
                    $0["rule"] as? String == finding.rule.id && $0["message"] as? String == finding.message
                        && $0["line"] as? Int == finding.line && $0["column"] as? Int == finding.column
                        && $0["severity"] as? String == "error"
                }, "\(finding) in \(refused.text)")
        }
        #expect(diagnostics.allSatisfy { $0.keys.contains("keyPath") && $0.keys.contains("hint") })
        #expect(fixture.call(.get, "/shop.example").status == 404)

        let notJSON = fixture.call(.put, "/shop.example", body: "{\n  \"universalLinks\": [\n")
        #expect(notJSON.status == 422)
        #expect((notJSON.json["diagnostics"] as? [[String: Any]])?.first?["line"] as? Int != nil, "\(notJSON.text)")
        let latin1 = fixture.api.answer(
            APIRequest(
                method: .put, path: "/api/v1/domains/shop.example", body: [0x7B, 0x22, 0xE9, 0x22, 0x3A, 0x31, 0x7D],
                caller: AdminCaller(name: "deployer", scope: .write)))
        #expect(latin1.status == 422, "\(latin1.text)")
        #expect(fixture.call(.get, "/shop.example").status == 404)
        #expect(fixture.call(.get, "/shop.example/history").status == 404)
    }

    /// `?dryRun=true` answers as the write would (status, diff, the revision a folder would give) and writes nothing.
    @Test(arguments: APIBackend.allCases)
    func aDryRunAnswersAndWritesNothing(_ backend: APIBackend) throws {
        let fixture = try APIFixture(backend)
        let body = siteJSON(["/buy/*"])
        let dry = fixture.call(.put, "/shop.example", query: "dryRun=true", body: body)
        #expect(dry.status == 201, "\(dry.text)")
        #expect(dry.json["dryRun"] as? Bool == true)
        #expect((dry.json["changes"] as? [Any])?.isEmpty == false)
        if backend == .folder {
            #expect(dry.json["revision"] as? String == FolderDomainRepository.revision(of: Array(body.utf8)))
        }
        #expect(fixture.call(.get, "/shop.example").status == 404)
        #expect(fixture.call(.put, "/shop.example", query: "dryRun=yes", body: body).status == 400)
    }

    /// The same `Idempotency-Key` with the same body replays the first answer and writes nothing (a write in
    /// between stays current); with another body, 422.
    @Test(arguments: APIBackend.allCases)
    func anIdempotencyKeyReplaysTheFirstAnswerAndWritesNothing(_ backend: APIBackend) throws {
        let fixture = try APIFixture(backend)
        let first = fixture.call(.put, "/shop.example", body: siteJSON(["/a/*"]), key: "k-1")
        #expect(first.status == 201)
        let between = fixture.call(.put, "/shop.example", body: siteJSON(["/b/*"]))
        #expect(between.status == 200)

        let replay = fixture.call(.put, "/shop.example", body: siteJSON(["/a/*"]), key: "k-1")
        #expect(replay.status == 201)
        #expect(replay.body == first.body)
        #expect(replay.header("Idempotent-Replayed") == "true")
        #expect(fixture.call(.get, "/shop.example").text == siteJSON(["/b/*"]))
        let history = fixture.call(.get, "/shop.example/history")
        #expect((history.json["revisions"] as? [Any])?.count == 2)

        #expect(fixture.call(.put, "/shop.example", body: siteJSON(["/c/*"]), key: "k-1").status == 422)
        #expect(fixture.call(.put, "/shop.example", body: siteJSON(["/c/*"]), key: "bad key").status == 400)
        #expect(fixture.call(.get, "/shop.example").text == siteJSON(["/b/*"]))

        // A refused write holds no key: the next request with it is answered as itself.
        #expect(
            fixture.call(.put, "/shop.example", body: siteJSON(["/d/*"]), ifMatch: "\"0\"", key: "k-2").status == 412)
        let after = fixture.call(.put, "/shop.example", body: siteJSON(["/d/*"]), key: "k-2")
        #expect(after.status == 200 && after.header("Idempotent-Replayed") == nil, "\(after.text)")
    }

    /// 50 concurrent `PUT`s with the same `If-Match`, through five repositories (five connections to the store, five
    /// lockers of the folder): exactly one is written, 49 get 412, and the history has one new revision.
    @Test(arguments: APIBackend.allCases)
    func fiftyConcurrentWritesWithOneIfMatchWriteOnce(_ backend: APIBackend) throws {
        let fixture = try APIFixture(backend)
        let created = fixture.call(.put, "/shop.example", body: siteJSON(["/start/*"]))
        let revision = try #require(created.json["revision"] as? String)
        let apis = try (0..<5).map { _ in TenantAPI(repository: try fixture.another()) }
        let statuses = Mutex<[Int]>([])
        DispatchQueue.concurrentPerform(iterations: 50) { index in
            let answer = fixture.call(
                .put, "/shop.example", body: siteJSON(["/writer\(index)/*"]), ifMatch: "\"\(revision)\"",
                on: apis[index % apis.count])
            statuses.withLock { $0.append(answer.status) }
        }
        let all = statuses.withLock { $0 }
        #expect(all.filter { $0 == 200 }.count == 1, "\(all)")
        #expect(all.filter { $0 == 412 }.count == 49, "\(all)")
        let history = fixture.call(.get, "/shop.example/history")
        #expect((history.json["revisions"] as? [Any])?.count == 2, "\(history.text)")
    }

    /// A read token reads and cannot write (403, before the body is looked at); nothing is written.
    @Test(arguments: [
        (RequestMethod.put, "/shop.example"), (.delete, "/shop.example"), (.post, "/shop.example/history/1/restore"),
    ])
    func aReadTokenCannotWrite(_ method: RequestMethod, _ path: String) throws {
        let fixture = try APIFixture(.folder)
        let created = fixture.call(.put, "/shop.example", body: siteJSON(["/a/*"]))
        let revision = try #require(created.json["revision"] as? String)
        let refused = fixture.call(
            method, path, body: siteJSON(["/b/*"]), ifMatch: "\"\(revision)\"", scope: .read)
        #expect(refused.status == 403, "\(refused.text)")
        #expect(refused.text.contains("viewer"))
        #expect(fixture.call(.get, "/shop.example", scope: .read).text == siteJSON(["/a/*"]))
    }

    /// Names are checked before anything else: 400 naming the problem, whatever the method.
    @Test(arguments: [
        ("/Shop.example", "upper-case"), ("/shop.example%2Fx", "encoded slash"), ("/shop.example%2fx", "encoded slash"),
        ("/..", "'..'"), ("/a..example", "'..'"), ("/.aasa-history", "starts with a dot"), ("/localhost", "one label"),
        ("/shop.localhost", "reserved"), ("/shop%00.example", "NUL"), ("/b%C3%BCcher.example", "percent-encoded"),
        ("/bücher.example", "xn--"), ("/shop_1.example", "not a host name"), ("/-a.example", "not a host name"),
        ("/shop.example/history/ABC", "not a revision"),
    ])
    func namesAreCheckedFirst(_ path: String, _ problem: String) throws {
        let fixture = try APIFixture(.folder)
        for method in [RequestMethod.get, .put, .delete] {
            let answer = fixture.call(method, path, body: siteJSON(["/a/*"]), scope: .read)
            #expect(answer.status == 400, "\(method) \(path): \(answer.text)")
            #expect((answer.json["error"] as? String)?.contains(problem) == true, "\(path): \(answer.text)")
        }
        #expect(DirectoryListing.names(in: fixture.folder.path) == [])
    }

    /// An A-label is a name like any other.
    @Test func anInternationalisedNameIsWrittenAsItsALabel() throws {
        let fixture = try APIFixture(.folder)
        #expect(fixture.call(.put, "/xn--bcher-kva.example", body: siteJSON(["/a/*"])).status == 201)
    }

    /// The listing pages by `limit` with an opaque cursor, filters by a name part and by the state `/status` gives,
    /// and refuses a limit over 1,000 or a cursor it did not give.
    @Test(arguments: APIBackend.allCases)
    func theListingPagesAndFilters(_ backend: APIBackend) throws {
        let names = ["a.example", "b.example", "shop-one.example", "shop-two.example", "z.example"]
        let fixture = try APIFixture(backend) {
            ["shop-one.example": .init(state: "published", certificate: "valid"), "a.example": .init(state: "failed")]
        }
        for name in names { #expect(fixture.call(.put, "/" + name, body: siteJSON(["/a/*"])).status == 201) }

        var seen: [String] = []
        var cursor: String?
        var pages = 0
        repeat {
            let page = fixture.call(.get, "", query: "limit=2" + (cursor.map { "&cursor=" + $0 } ?? ""))
            #expect(page.status == 200, "\(page.text)")
            let domains = try #require(page.json["domains"] as? [[String: Any]])
            #expect(domains.count <= 2)
            seen += domains.compactMap { $0["name"] as? String }
            cursor = page.json["next"] as? String
            pages += 1
        } while cursor != nil && pages < 10
        #expect(seen == names)
        #expect(pages == 3)

        let shops = fixture.call(.get, "", query: "q=shop")
        #expect(
            (shops.json["domains"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == [
                "shop-one.example", "shop-two.example",
            ])
        let published = try #require(
            fixture.call(.get, "", query: "state=published").json["domains"] as? [[String: Any]])
        #expect(published.count == 1)
        #expect(published.first?["certificate"] as? String == "valid")
        #expect(published.first?["revision"] is String)
        let pending = fixture.call(.get, "", query: "state=pending").json["domains"] as? [[String: Any]]
        #expect(pending?.count == 3)
        for query in ["limit=0", "limit=1001", "limit=x", "state=broken", "cursor=not-a-cursor!"] {
            #expect(fixture.call(.get, "", query: query).status == 400, "\(query)")
        }
    }

    /// `…/status` is the server's entry for the domain; other methods than a route's get 405 with `Allow`.
    @Test func theStatusRouteAndMethodsAreAnswered() throws {
        let fixture = try APIFixture(
            .folder, status: { $0 == "shop.example" ? .members([("state", .string("published"))]) : nil })
        let status = fixture.call(.get, "/shop.example/status", scope: .read)
        #expect(status.status == 200)
        #expect(status.json["state"] as? String == "published")
        #expect(fixture.call(.get, "/other.example/status").status == 404)
        let refused = fixture.call(.post, "/shop.example")
        #expect(refused.status == 405)
        #expect(refused.header("Allow") == "GET, HEAD, PUT, DELETE")
        #expect(fixture.call(.get, "/shop.example/pagesx").status == 404)
    }
    /// A history keeps its newest `historyCapacity` revisions; an older one is gone (404), its bytes too.
    @Test(arguments: APIBackend.allCases)
    func theHistoryKeepsItsNewestRevisions(_ backend: APIBackend) throws {
        let fixture = try APIFixture(backend, historyCapacity: 3)
        var revisions: [String] = []
        for index in 0..<5 {
            let written = fixture.call(.put, "/shop.example", body: siteJSON(["/v\(index)/*"]))
            revisions.append(try #require(written.json["revision"] as? String, "\(written.text)"))
        }
        let history = fixture.call(.get, "/shop.example/history")
        #expect(
            (history.json["revisions"] as? [[String: Any]])?.compactMap { $0["revision"] as? String }
                == revisions.reversed().prefix(3).map { $0 })
        #expect(fixture.call(.get, "/shop.example/history/\(revisions[0])").status == 404)
        #expect(fixture.call(.get, "/shop.example/history/\(revisions[2])").text == siteJSON(["/v2/*"]))
        if backend == .folder {
            let kept = try FileManager.default.contentsOfDirectory(
                atPath: fixture.folder.path + "/.aasa-history/shop.example")
            #expect(kept.filter { $0.hasSuffix(".json") }.count == 4, "\(kept)")
        }
    }

    /// The idempotency cache holds at most its capacity, dropping the least recently used key, and forgets a key
    /// after its lifetime.
    @Test func theIdempotencyCacheIsBoundedAndExpires() {
        let cache = IdempotencyCache(capacity: 3, lifetime: 60)
        let start = Date(timeIntervalSince1970: 1_000_000)
        let answer = Response(status: 201, body: Array("{}".utf8))
        for key in ["a", "b", "c"] { cache.store(key, caller: "t", digest: [1], answer: answer, now: start) }
        #expect(cache.lookup("a", caller: "t", digest: [1], now: start) == .replay(answer))
        cache.store("d", caller: "t", digest: [1], answer: answer, now: start)
        #expect(cache.count == 3)
        #expect(cache.lookup("b", caller: "t", digest: [1], now: start) == .miss)
        #expect(cache.lookup("a", caller: "t", digest: [2], now: start) == .mismatch)
        #expect(cache.lookup("a", caller: "other", digest: [1], now: start) == .miss)
        #expect(cache.lookup("a", caller: "t", digest: [1], now: start.addingTimeInterval(61)) == .miss)
    }

    /// The cache holds at most its bytes of answers, dropping the least recently used keys to fit a new one, and
    /// keeps no answer over a tenth of them.
    @Test func theIdempotencyCacheIsBoundedInBytes() {
        let cache = IdempotencyCache(capacity: 1_000, maximumBytes: 10_000, lifetime: 60)
        let start = Date(timeIntervalSince1970: 1_000_000)
        let answer = Response(status: 200, body: [UInt8](repeating: 0x61, count: 900))
        let size = IdempotencyCache.size(of: answer)
        for index in 0..<50 { cache.store("k\(index)", caller: "t", digest: [1], answer: answer, now: start) }
        #expect(cache.bytes <= 10_000 && cache.bytes == cache.count * size, "\(cache.bytes) bytes, \(cache.count) keys")
        #expect(cache.count == 10_000 / size)
        #expect(cache.lookup("k49", caller: "t", digest: [1], now: start) == .replay(answer))
        #expect(cache.lookup("k0", caller: "t", digest: [1], now: start) == .miss)
        let large = Response(status: 200, body: [UInt8](repeating: 0x62, count: 1_001))
        cache.store("large", caller: "t", digest: [1], answer: large, now: start)
        #expect(cache.lookup("large", caller: "t", digest: [1], now: start) == .miss)
    }
}

/// The closures the server gives the API, read from a real load's `/status`.
@Suite struct TenantAPIStatusTests {
    /// Each loaded domain's state, and one domain's `/status` entry exactly as `/status` lists it, even when other
    /// names hold its name.
    @Test func theStatesAndEntryComeFromStatus() throws {
        let folder = TemporaryDirectory("aasa-api-status")
        // The names around it differ from it: one fails to load, one is another app's.
        try folder.write("a.shop.example/site.json", "{")
        try folder.write("shop.example/site.json", siteJSON(["/a/*"]))
        try folder.write("zz.shop.example/site.json", siteJSON(["/a/*"], app: "FGHIJ67890.com.example.other"))
        let loaded = try SiteConfigLoader().loadAll(directory: folder.path)
        var catalog = Catalog()
        _ = catalog.apply(
            Load(
                time: Date(), scope: LoadScope(domains: nil, certificates: nil), domains: .success(loaded), absent: []),
            trigger: .start, removalGrace: .zero)
        let status = try #require(catalog.status)
        let states = status.tenantStates()
        #expect(states["shop.example"]?.state == "published")
        #expect(states["a.shop.example"]?.state == "failed")
        let entry = try #require(status.tenantStatus("shop.example"))
        let document = try #require(JSONValue.parse(status.json())?[member: "domains"]?[member: "shop.example"])
        #expect(JSONWriter(style: .compact).string(entry) == JSONWriter(style: .compact).string(document))
        #expect(status.tenantStatus("other.example") == nil)
    }
}
