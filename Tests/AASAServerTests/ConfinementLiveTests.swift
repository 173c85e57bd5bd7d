import AASACore
import AASATestSupport
import Foundation
import Testing

@testable import AASAServer

/// The attack suite: a tenant who can write shop.example's folder tries to make the real daemon serve or read
/// another folder's files. Each case checks that the server stays up, that nothing outside the folder is served,
/// that links.example keeps serving, and that the finding names the file.
@Suite(.serialized) struct ConfinementLiveTests {
    /// Bytes that must never appear in any answer: links.example's private key, /etc/passwd, the environment.
    static let secrets = ["PRIVATE KEY", "root:x:0:0", "PATH=/"]

    static func certs(_ config: String) -> String { (config as NSString).deletingLastPathComponent + "/certs" }

    /// `GET path` on `domain` over verified HTTPS; checks no secret is in it and returns it.
    static func fetchNothingSecret(_ live: LiveServer, _ domain: String, _ path: String) throws -> CurlResponse {
        let response = try live.get(domain, path)
        for secret in secrets { #expect(!response.text.contains(secret), "\(domain)\(path) served \(secret)") }
        return response
    }

    /// Both domains' association files, and links.example still serving.
    static func expectOthersServed(_ live: LiveServer) throws {
        let links = try live.get("links.example", "/.well-known/apple-app-site-association")
        #expect(links.status == 200)
        #expect(links.body == (try live.expectedFile("links.example")))
    }

    @Test func linksFromPagesToKeysCertificatesAndSystemFilesAreNeverServed() throws {
        let live = try LiveServer(prepare: { config in
            let pages = config + "/shop.example/pages"
            let key = Self.certs(config) + "/links.example/privkey.pem"
            let links = [
                "key.html": key, "apple-touch-icon-120x120.png": key, "certs": Self.certs(config),
                "passwd.txt": "/etc/passwd", "environ.txt": "/proc/self/environ",
                "other.json": "../../links.example/site.json",
            ]
            for (name, target) in links {
                try FileManager.default.createSymbolicLink(atPath: pages + "/" + name, withDestinationPath: target)
            }
        })
        for path in [
            "/key.html", "/apple-touch-icon-120x120.png", "/apple-touch-icon.png", "/certs/links.example/privkey.pem",
            "/passwd.txt", "/environ.txt", "/other.json", "/buy/shoes",
        ] {
            let response = try Self.fetchNothingSecret(live, "shop.example", path)
            if ["/key.html", "/certs/links.example/privkey.pem", "/passwd.txt", "/environ.txt", "/other.json"]
                .contains(path)
            {
                #expect(response.status == 404, "\(path)")
            }
        }
        // shop.example is served (the links are skipped, not its whole folder), and so is links.example.
        #expect(try live.get("shop.example", "/.well-known/apple-app-site-association").status == 200)
        try Self.expectOthersServed(live)
        let warnings = try #require((try live.status()["lastReload"] as? [String: Any])?["warnings"] as? [String])
        for name in ["key.html", "passwd.txt", "environ.txt", "other.json", "certs"] {
            let finding = warnings.first { $0.contains("/shop.example/pages/\(name): warning: [page-symlink]") }
            #expect(
                finding?.contains("outside pages/; it is not served, and nothing is read through it") == true,
                "\(name): \(warnings)")
        }
    }

    @Test func aTemplateSwappedForALinkBetweenReloadsIsRefusedAndTheLastGoodPageStays() throws {
        let live = try LiveServer(prepare: { config in
            try Data("<html><head><title>{{title}}</title></head><body>TEMPLATE-V1 {{url}}</body></html>".utf8)
                .write(to: URL(fileURLWithPath: config + "/shop.example/pages/_landing.html"))
        })
        #expect(try Self.fetchNothingSecret(live, "shop.example", "/buy/shoes").text.contains("TEMPLATE-V1"))
        let template = live.configDirectory + "/shop.example/pages/_landing.html"
        let key = live.certsDirectory + "/links.example/privkey.pem"
        try FileManager.default.removeItem(atPath: template)
        try FileManager.default.createSymbolicLink(atPath: template, withDestinationPath: key)
        let findings = live.server.reload()
        let refused = try #require(findings.first { $0.rule == .pathOutside }, "\(findings)")
        #expect(refused.file == template)
        #expect(refused.message.contains(Confinement.realPath(key) ?? key))
        #expect(refused.severity == .error)
        // The last good landing page stays; nothing of the key is served.
        #expect(try Self.fetchNothingSecret(live, "shop.example", "/buy/shoes").text.contains("TEMPLATE-V1"))
        try Self.expectOthersServed(live)

        // The same through "landingPage.template" naming a link in the domain folder.
        let site = live.configDirectory + "/shop.example/site.json"
        var json = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: site))) as? [String: Any])
        var pages = json["pages"] as? [String: Any] ?? [:]
        pages["landingPage"] = ["template": "landing.html"]
        json["pages"] = pages
        try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: site))
        try FileManager.default.createSymbolicLink(
            atPath: live.configDirectory + "/shop.example/landing.html", withDestinationPath: "/etc/passwd")
        let named = live.server.reload().filter { $0.rule == .pathOutside }
        #expect(named.contains { $0.file == live.configDirectory + "/shop.example/landing.html" }, "\(named)")
        #expect(try Self.fetchNothingSecret(live, "shop.example", "/buy/shoes").text.contains("TEMPLATE-V1"))
        let shop = try #require((try live.status()["domains"] as? [String: Any])?["shop.example"] as? [String: Any])
        #expect(shop["state"] as? String == "stale")
    }

    @Test func aLinkedPagesFolderAFIFOAndADeviceFailOnlyTheirDomain() throws {
        let started = ContinuousClock.now
        let live = try LiveServer(
            extraDomains: ["good.example": #"{"webCredentials": ["ABCDE12345.com.example.good"]}"#],
            prepare: { config in
                // links.example's pages folder is a link out of its folder: refused as a whole.
                try FileManager.default.createSymbolicLink(
                    atPath: config + "/links.example/pages", withDestinationPath: "/etc")
                // shop.example's pages hold a FIFO (whose open would wait for a writer) and a device node.
                let pages = config + "/shop.example/pages"
                #expect(mkfifo(pages + "/fifo.html", 0o644) == 0)
                #expect(mknod(pages + "/null.html", S_IFCHR | 0o644, dev_t((1 << 8) | 3)) == 0, "mknod needs root")
            })
        #expect(started.duration(to: .now) < .seconds(20))
        // Neither domain loads, so neither is served; good.example is, and the server says why.
        #expect(try live.get("good.example", "/.well-known/apple-app-site-association").status == 200)
        for domain in ["shop.example", "links.example"] {
            let response = try Self.fetchNothingSecret(live, domain, "/passwd")
            #expect(response.status == 404)
        }
        let domains = try #require(try live.status()["domains"] as? [String: [String: Any]])
        let linksErrors = domains["links.example"]?["errors"] as? [String] ?? []
        #expect(
            linksErrors.contains { $0.contains("[path-outside] the pages folder leads to '/etc'") }, "\(linksErrors)")
        let shopErrors = domains["shop.example"]?["errors"] as? [String] ?? []
        #expect(shopErrors.contains { $0.contains("pages/fifo.html: error: [file-type]") && $0.contains("FIFO") })
        #expect(shopErrors.contains { $0.contains("pages/null.html: error: [file-type]") && $0.contains("device") })
        #expect(domains["shop.example"]?["state"] as? String == "failed")
        let ready = try HTTPProbe.get(port: live.admin, host: "127.0.0.1", path: "/readyz")
        #expect(ready.status == 503)
        #expect(String(decoding: ready.body, as: UTF8.self).contains("links.example: "))
    }

    @Test func fiftyPagesOf15MiBStopAtTheServerWideBudget() throws {
        let before = ProcessMemory.residentBytes()
        let live = try LiveServer(
            configure: { $0.pagesMemory = 40 << 20 },
            prepare: { config in
                for index in 0..<50 {
                    let path = config + "/shop.example/pages/big-\(index < 10 ? "0" : "")\(index).bin"
                    #expect(FileManager.default.createFile(atPath: path, contents: nil))
                    #expect(truncate(path, 15 << 20) == 0)  // sparse: 750 MiB of pages on almost no disk
                }
            })
        let grown = ProcessMemory.residentBytes() - before
        #expect(grown < 300 << 20, "resident memory grew by \(grown >> 20) MiB")
        let domains = try #require(try live.status()["domains"] as? [String: [String: Any]])
        let errors = domains["shop.example"]?["errors"] as? [String] ?? []
        #expect(
            errors.contains { $0.contains("/shop.example/pages/big-02.bin: error: [pages-memory]") }, "\(errors)")
        #expect(try Self.fetchNothingSecret(live, "shop.example", "/big-00.bin").status == 404)
        try Self.expectOthersServed(live)
    }

    @Test func aFolderRemovedAndRestoredWithinTheGraceIsNeverA404() throws {
        let live = try LiveServer(configure: { $0.removalGrace = .seconds(5) })
        let expected = Answer.ok(try live.expectedFile("links.example"))
        let traffic = Traffic("links.example", allowed: [expected]) { try live.fetch("links.example") }
        let folder = live.configDirectory + "/links.example"
        let moved = live.directory.path + "/links.example.moved"
        try FileManager.default.moveItem(atPath: folder, toPath: moved)
        live.server.reload(trigger: .fileChange)
        let removing = try #require(
            (try live.status()["domains"] as? [String: Any])?["links.example"] as? [String: Any])
        #expect(removing["state"] as? String == "removing")
        #expect(removing["removedSince"] is String)
        usleep(500_000)
        try FileManager.default.moveItem(atPath: moved, toPath: folder)
        live.server.reload(trigger: .fileChange)
        usleep(300_000)
        let (requests, failures) = traffic.stop()
        #expect(requests >= traffic.minimumRequests)
        #expect(failures.isEmpty, "\(failures.prefix(5))")
        let restored = try #require(
            (try live.status()["domains"] as? [String: Any])?["links.example"] as? [String: Any])
        #expect(restored["state"] as? String == "published")
    }
}

/// This process's resident memory, from /proc/self/status.
enum ProcessMemory {
    static func residentBytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { return 0 }
        return kilobytes << 10
    }
}
