import AASAPostgres
import AASATestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The bounds of the tenant API's history and answers on a real `serve`, over a config folder and over PostgreSQL:
/// a summary and a history entry are bounded in bytes whatever a write holds, a write and its entry succeed or fail
/// together, each domain and all domains keep a bounded history, a removed domain's goes after its retention, the
/// store's `changes` are pruned (a replica behind re-reads everything), history is paged, and a 422 lists a bounded
/// number of findings with their total.
@Suite(.storeCluster, .serialized) struct HistoryBoundsTests: StoreFleetSuite {
    enum Backend: String, CaseIterable, Sendable { case folder, store }

    static let token = String(repeating: "h", count: 40)

    /// A running `serve` and where its domains are.
    struct Server {
        var serve: ServeProcess
        var workspace: TemporaryDirectory
        /// The config folder (folders) or the database (store).
        var config: String
        var uri: String?
        var folder: TemporaryDirectory?
    }

    /// `serve` over `backend` with a write token and `arguments`, ready.
    func start(_ backend: Backend, _ name: String, _ arguments: [String] = []) throws -> Server {
        let server: Server
        switch backend {
        case .folder:
            let workspace = TemporaryDirectory("aasa-history-\(name)")
            try workspace.copy(RepositoryPaths.siteConfig, to: "site-config")
            #expect(try aasa(["certs", "dev"], in: workspace.path).status == 0)
            let tokens = try workspace.write("tokens", "control-plane write \(Self.token)\n")
            #expect(chmod(tokens, 0o600) == 0)
            let serve = try ServeProcess(
                in: workspace.path,
                arguments: ["--config", "site-config", "--certs", "certs", "--admin-token-file", tokens] + arguments,
                errorLog: workspace.path + "/serve.log")
            server = Server(serve: serve, workspace: workspace, config: workspace.path + "/site-config")
        case .store:
            let (workspace, uri) = try pushed("history_\(name)")
            let tokens = try workspace.write("tokens", "control-plane write \(Self.token)\n")
            #expect(chmod(tokens, 0o600) == 0)
            let (serve, folder) = try replica(
                workspace, uri, "history-\(name)", arguments: ["--admin-token-file", tokens] + arguments)
            server = Server(serve: serve, workspace: workspace, config: uri, uri: uri, folder: folder)
        }
        #expect(server.serve.waitUntilReady())
        return server
    }

    /// `METHOD /api/v1/domains/<path>` on the admin listener with the write token; `body` is sent from a file (a
    /// body of a megabyte is too long for an argument).
    func call(
        _ server: Server, _ method: String, _ path: String, body: [UInt8]? = nil, headers: [String] = [],
        maxTime: Double = 10
    ) throws -> CurlResponse {
        var headers = ["Authorization: Bearer \(Self.token)"] + headers
        var extra: [String] = []
        if let body {
            let file = server.workspace.path + "/body-\(UUID().uuidString).json"
            #expect(FileManager.default.createFile(atPath: file, contents: Data(body)))
            headers.append("Content-Type: application/json")
            extra = ["--data-binary", "@" + file]
        }
        return try Curl.request(
            "http://127.0.0.1:\(server.serve.admin)/api/v1/domains/\(path)", method: method, headers: headers,
            extra: extra, maxTime: maxTime)
    }

    /// A site.json opening `/<marker>/*`; the app entry's comment (which the association file does not carry) is
    /// `note`, else `padding` bytes.
    static func site(_ marker: String, note: String? = nil, padding: Int = 0) -> [UInt8] {
        let text = note ?? (padding > 0 ? String(repeating: "p", count: padding) : nil)
        let pad = text.map { ", \"comment\": \"\($0)\"" } ?? ""
        return Array(
            """
            {
            "universalLinks": {
                "apps": [{ "appIDs": ["ABCDE12345.com.example.bounds"], "rules": [{ "path": "/\(marker)/*" }]\(pad) }]
              }
            }

            """.utf8)
    }

    static func object(_ response: CurlResponse) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]) ?? [:]
    }

    /// The entries of `GET …/history?limit=1000` and the answer's size.
    func history(_ server: Server, _ domain: String, query: String = "limit=1000") throws -> ([[String: Any]], Int) {
        let answer = try call(server, "GET", domain + "/history?" + query)
        #expect(answer.status == 200, "\(answer.text.prefix(300))")
        return ((Self.object(answer)["revisions"] as? [[String: Any]]) ?? [], answer.body.count)
    }

    /// One letter and 250,000 combining acute accents: 500 KB of UTF-8, one character.
    static let combining = "a" + String(repeating: "\u{301}", count: 250_000)

    /// Writes that each hold one character of 500 KB (a rule's comment): every write answers 200 and changes the domain,
    /// its summary is at most 1,000 bytes, the history of all of them stays a few KiB (each entry within its fixed
    /// bound), restoring the first works, and on folders `log.json` stays within what it is read with.
    @Test(arguments: Backend.allCases) func aCharacterOfHalfAMegabyteKeepsHistoryBounded(backend: Backend) throws {
        let server = try start(backend, "marks")
        var revisions: [String] = []
        for index in 0..<6 {
            // In the app entry's comment: as cacheControl it would be a header value over its cap (HeaderValueCapTests),
            // and in a rule it would make the association file too large.
            let body = Self.site("marks-\(index)", note: (index % 2 == 0 ? "b" : "c") + Self.combining)
            #expect(body.count > 500_000)
            let written = try call(server, "PUT", "shop.example", body: body)
            #expect(written.status == 200, "\(written.text.prefix(400))")
            let summary = Self.object(written)["summary"] as? String ?? ""
            #expect(summary.utf8.count <= 1_000, "summary of \(summary.utf8.count) bytes")
            revisions.append(Self.object(written)["revision"] as? String ?? "")
            let current = try call(server, "GET", "shop.example")
            #expect(current.body == body, "the PUT answered 200 and site.json holds what it wrote")
        }
        let (entries, bytes) = try history(server, "shop.example")
        #expect(entries.count >= 6)
        #expect(bytes < 8 * 3_072, "a history of \(entries.count) entries is \(bytes) bytes")
        for entry in entries { #expect(((entry["summary"] as? String) ?? "").utf8.count <= 1_000) }
        let restored = try call(server, "POST", "shop.example/history/\(revisions[0])/restore")
        #expect(restored.status == 200, "\(restored.text.prefix(400))")
        if backend == .folder {
            let log = server.workspace.path + "/site-config/.aasa-history/shop.example/log.json"
            let size = (try FileManager.default.attributesOfItem(atPath: log)[.size] as? NSNumber)?.intValue ?? .max
            #expect(size < 8 * 3_072, "log.json is \(size) bytes")
        }
    }

    /// A write whose history entry cannot be recorded (the domain's `log.json` is a folder) answers 503 and changes
    /// nothing: site.json keeps its revision.
    @Test func aWriteWhoseEntryFailsChangesNothing() throws {
        let server = try start(.folder, "atomic")
        let before = try call(server, "GET", "shop.example")
        #expect(before.status == 200)
        let log = server.config + "/.aasa-history/shop.example/log.json"
        try FileManager.default.createDirectory(atPath: log, withIntermediateDirectories: true)
        let refused = try call(server, "PUT", "shop.example", body: Self.site("atomic"))
        #expect(refused.status == 503, "\(refused.text)")
        #expect(refused.text.contains("log.json"), "\(refused.text)")
        let after = try call(server, "GET", "shop.example")
        #expect(after.body == before.body)
        #expect(after.headers["etag"] == before.headers["etag"])
    }

    /// `--history-revisions 3`: five writes keep the newest three entries; the older versions are gone (404).
    @Test(arguments: Backend.allCases) func eachDomainKeepsItsNewestRevisions(backend: Backend) throws {
        let server = try start(backend, "revisions", ["--history-revisions", "3"])
        var revisions: [String] = []
        for index in 0..<5 {
            let written = try call(server, "PUT", "shop.example", body: Self.site("revisions-\(index)"))
            #expect(written.status == 200, "\(written.text)")
            revisions.append(Self.object(written)["revision"] as? String ?? "")
        }
        let (entries, _) = try history(server, "shop.example")
        #expect(entries.map { $0["revision"] as? String ?? "" } == revisions.suffix(3).reversed())
        #expect(try call(server, "GET", "shop.example/history/\(revisions[0])").status == 404)
        #expect(try call(server, "GET", "shop.example/history/\(revisions[2])").status == 200)
    }

    /// `--history-bytes 2 --history-total-bytes 2`: entries of 700 KB each; a domain keeps what fits its 2 MiB,
    /// and three domains together keep what fits 2 MiB, the oldest entries going first.
    @Test(arguments: Backend.allCases) func allDomainsTogetherKeepWhatFitsTheTotal(backend: Backend) throws {
        let server = try start(
            backend, "total",
            ["--history-bytes", "2", "--history-total-bytes", "2", "--history-retention", "1s"])
        for index in 0..<4 {
            let written = try call(
                server, "PUT", "shop.example", body: Self.site("total-\(index)", padding: 700_000))
            #expect(written.status == 200, "\(written.text.prefix(300))")
        }
        #expect(try history(server, "shop.example").0.count == 2, "700 KB entries: two fit 2 MiB")
        for name in ["one.example", "two.example"] {
            let created = try call(server, "PUT", name, body: Self.site(name, padding: 700_000))
            #expect(created.status == 201, "\(created.text.prefix(300))")
        }
        // The total is checked by each write (store) or once per second here (folders): write until it held.
        var round = 0
        try Wait.until("the oldest entries to be pruned to the total", seconds: 10, interval: 0.3) {
            round += 1
            let written = try? call(server, "PUT", "links.example", body: Self.site("tick-\(round)"))
            let kept = try history(server, "shop.example").0.count
            return written?.status == 200 && kept == 0 ? nil : "shop.example keeps \(kept) entries"
        }
        #expect(try history(server, "two.example").0.count == 1)
    }

    /// `--history-retention 1s`: a removed domain's history is deleted a second after its removal (with a later
    /// write); a domain written since keeps its own.
    @Test(arguments: Backend.allCases) func aRemovedDomainsHistoryGoesAfterItsRetention(backend: Backend) throws {
        let server = try start(backend, "retention", ["--history-retention", "1s"])
        let created = try call(server, "PUT", "gone.example", body: Self.site("gone"))
        #expect(created.status == 201, "\(created.text)")
        let tag = try #require(created.headers["etag"])
        #expect(try call(server, "DELETE", "gone.example", headers: ["If-Match: \(tag)"]).status == 204)
        #expect(try history(server, "gone.example").0.count == 2, "kept right after the removal")
        var round = 0
        try Wait.until("the removed domain's history to be deleted", seconds: 10, interval: 0.3) {
            round += 1
            _ = try? call(server, "PUT", "shop.example", body: Self.site("retention-\(round)"))
            let answer = try call(server, "GET", "gone.example/history")
            return answer.status == 404 ? nil : "\(answer.status): \(answer.text.prefix(200))"
        }
        #expect(try history(server, "shop.example").0.count >= 1)
    }

    /// Pages of history: `limit=2` over five entries gives 2, 2 and 1, each `next` leading to the following page;
    /// a cursor that is none is 400.
    @Test(arguments: Backend.allCases) func historyIsPaged(backend: Backend) throws {
        let server = try start(backend, "paged")
        for index in 0..<4 {
            #expect(try call(server, "PUT", "shop.example", body: Self.site("paged-\(index)")).status == 200)
        }
        let (all, _) = try history(server, "shop.example")
        var seen: [String] = []
        var query = "limit=2"
        var pages = 0
        while pages < 10 {
            pages += 1
            let answer = try call(server, "GET", "shop.example/history?" + query)
            #expect(answer.status == 200)
            let page = Self.object(answer)
            seen += ((page["revisions"] as? [[String: Any]]) ?? []).map { $0["revision"] as? String ?? "" }
            guard let next = page["next"] as? String else { break }
            query = "limit=2&cursor=" + next
        }
        #expect(seen == all.map { $0["revision"] as? String ?? "" })
        #expect(pages == (all.count + 1) / 2)
        #expect(try call(server, "GET", "shop.example/history?cursor=bm90LWEtY3Vyc29y").status == 400)
    }

    /// A replica stopped while a writer removes a domain and `changes` is pruned past it (`--changes-retention
    /// 1s`) reads everything when it resumes: the removed domain is no longer served, the latest write is.
    @Test func aReplicaBehindThePruningPointReadsEverything() throws {
        let (workspace, uri) = try pushed("history_changes")
        let tokens = try workspace.write("tokens", "control-plane write \(Self.token)\n")
        #expect(chmod(tokens, 0o600) == 0)
        let (writer, _) = try replica(
            workspace, uri, "writer", arguments: ["--admin-token-file", tokens, "--changes-retention", "1s"])
        let (behind, _) = try replica(workspace, uri, "behind", arguments: ["--removal-grace", "0"])
        #expect(writer.waitUntilReady())
        #expect(behind.waitUntilReady())
        let server = Server(serve: writer, workspace: workspace, config: uri, uri: uri)
        #expect(try fetch(workspace, behind, "links.example").status == 200)

        #expect(kill(behind.process.processIdentifier, SIGSTOP) == 0)
        defer { kill(behind.process.processIdentifier, SIGCONT) }
        let current = try call(server, "GET", "links.example")
        let tag = try #require(current.headers["etag"])
        #expect(try call(server, "DELETE", "links.example", headers: ["If-Match: \(tag)"]).status == 204)
        let database = try PostgresConnection(uri: uri)
        defer { database.close() }
        var round = 0
        try Wait.until("changes to be pruned past the removal", seconds: 10, interval: 0.3) {
            round += 1
            _ = try? call(server, "PUT", "shop.example", body: Self.site("latest-\(round)"))
            let left = try database.execute("SELECT count(*) FROM changes WHERE kind = 'domain-removed'")
            return left.text(0, 0) == "0" ? nil : "\(left.text(0, 0) ?? "?") removals left in changes"
        }
        #expect(kill(behind.process.processIdentifier, SIGCONT) == 0)
        try Wait.until("the replica behind to stop serving the removed domain", seconds: 30, interval: 0.3) {
            let answer = try fetch(workspace, behind, "links.example")
            return answer.status != 200 ? nil : "\(answer.status)"
        }
        try Wait.until("the replica behind to serve the latest write", seconds: 30, interval: 0.3) {
            let answer = try fetch(workspace, behind, "shop.example")
            return answer.text.contains("latest-\(round)") ? nil : answer.text
        }
    }

    /// A 1 MiB site.json of invalid app IDs: the 422 lists 100 findings and counts them all, in well under a
    /// megabyte; `check --format json` lists 100 per file and counts the rest by rule.
    @Test func aSiteJSONOfManyErrorsGivesABoundedAnswer() throws {
        let server = try start(.folder, "diagnostics")
        var ids: [String] = []
        var size = 0
        while size < 1_000_000 {
            let id = "\"BAD\(ids.count).x\""
            ids.append(id)
            size += id.utf8.count + 1
        }
        let body = Array(
            "{\"universalLinks\": {\"apps\": [{\"appIDs\": [\(ids.joined(separator: ","))], \"rules\": [{\"path\": \"/*\"}]}]}}"
                .utf8)
        // Checking 100,000 app IDs takes seconds in a debug build, more beside the rest of the suite.
        let refused = try call(server, "PUT", "many.example", body: body, maxTime: 90)
        #expect(refused.status == 422, "\(refused.text.prefix(300))")
        let answer = Self.object(refused)
        #expect((answer["diagnostics"] as? [Any])?.count == 100)
        #expect((answer["diagnosticsTotal"] as? Int ?? 0) >= ids.count)
        #expect(answer["diagnosticsTruncated"] as? Bool == true)
        #expect(refused.body.count < 200_000, "a 422 of \(refused.body.count) bytes")

        let folder = server.workspace.path + "/check"
        try FileManager.default.createDirectory(atPath: folder + "/many.example", withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: folder + "/many.example/site.json", contents: Data(body)))
        let check = try aasa(["check", "--config", folder, "--no-certificates", "--format", "json"], in: folder)
        #expect(check.status == 1)
        let findings = (try? JSONSerialization.jsonObject(with: Data(check.stdout.utf8)) as? [[String: Any]]) ?? []
        #expect(findings.count > 100 && findings.count < 120, "\(findings.count) findings listed")
        let counted = findings.reduce(0) { $0 + (($1["more"] as? Int) ?? 1) }
        #expect(counted >= ids.count)
        #expect(check.stdout.utf8.count < 200_000)
    }
}
