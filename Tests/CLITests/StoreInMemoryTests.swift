import AASATestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension TenantAPIFleetTests {
    /// A replica loads a stored domain with pages, and its API checks a new site.json beside them, from memory:
    /// nothing is created in the replica's folder or its `TMPDIR` (watched with inotify from before the start), the
    /// pages are served, and every finding names `<domain>/<path>` as the store holds it. The credential vault, whose
    /// sealed files have no name (`CredentialVaultLiveTests`), is given a folder of its own: nothing shows in it.
    @Test func aStoredDomainWithPagesLoadsAndIsCheckedWithNoFileWritten() throws {
        let uri = try StoreCluster.database("in_memory")
        let workspace = TemporaryDirectory("aasa-in-memory")
        try workspace.copy(RepositoryPaths.siteConfig, to: "site-config")
        // A 180×180 icon named 120×120: a warning of the page walk, naming the file.
        let pages = workspace.path + "/site-config/shop.example/pages/"
        try FileManager.default.copyItem(
            atPath: pages + "apple-touch-icon.png", toPath: pages + "apple-touch-icon-120x120.png")
        try FileManager.default.createDirectory(atPath: pages + "docs/deep", withIntermediateDirectories: true)
        try "<!doctype html><html><head><title>D</title></head><body>deep</body></html>\n".write(
            toFile: pages + "docs/deep/index.html", atomically: false, encoding: .utf8)
        #expect(try aasa(["certs", "dev"], in: workspace.path).status == 0)
        let key = try workspace.write("store.key", String(repeating: "b", count: 63) + "2\n")
        #expect(chmod(key, 0o600) == 0)
        try push(workspace, uri)

        let folder = TemporaryDirectory("aasa-in-memory-replica")
        let temporary = TemporaryDirectory("aasa-in-memory-tmp")
        let vault = TemporaryDirectory("aasa-in-memory-vault")
        let writes = try FolderWrites(watching: [folder.path, temporary.path])
        let log = workspace.path + "/serve.log"
        #expect(FileManager.default.createFile(atPath: log, contents: nil))
        let serve = try ServeProcess(
            in: folder.path,
            arguments: [
                "--store", uri, "--store-key-file", key, "--admin-token-file", try tokens(workspace),
                "--credential-vault", vault.path,
            ], environment: ["TMPDIR": temporary.path],
            errorOutput: try FileHandle(forWritingTo: URL(fileURLWithPath: log)))
        #expect(serve.waitUntilReady())
        let deep = try fetch(workspace, serve, "shop.example", "/docs/deep/")
        #expect(deep.status == 200 && deep.text.contains("deep"), "\(deep.status)")
        #expect(try fetch(workspace, serve, "shop.example", "/apple-touch-icon-120x120.png").status == 200)

        let site = try String(contentsOfFile: workspace.path + "/site-config/shop.example/site.json", encoding: .utf8)
        let checked = try call(serve, "PUT", "shop.example?dryRun=true", body: site)
        #expect(checked.status == 200, "\(checked.text)")
        #expect(checked.text.contains("\"touch-icon-size\""), "\(checked.text)")
        #expect(!checked.text.contains(temporary.path) && !checked.text.contains("aasa-"), "\(checked.text)")

        #expect(serve.terminate(within: 10) == 0)
        let logged = try String(contentsOfFile: log, encoding: .utf8)
        print(logged)
        #expect(logged.contains("shop.example/pages/apple-touch-icon-120x120.png"), "\(logged)")
        #expect(!logged.contains(temporary.path) && !logged.contains(folder.path), "\(logged)")
        #expect(writes.created() == [], "a load or a check from the store created files")
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary.path) == [])
        #expect(try FileManager.default.contentsOfDirectory(atPath: vault.path) == [])
    }
}

/// What is created in folders while a test runs: an inotify instance watching each (not below it: a folder created
/// inside is itself a creation).
final class FolderWrites {
    private let descriptor: Int32

    init(watching folders: [String]) throws {
        descriptor = inotify_init1(Int32(IN_NONBLOCK) | Int32(IN_CLOEXEC))
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        for folder in folders {
            let mask = UInt32(IN_CREATE) | UInt32(IN_MOVED_TO) | UInt32(IN_CLOSE_WRITE)
            guard inotify_add_watch(descriptor, folder, mask) >= 0 else {
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
        }
    }

    deinit { close(descriptor) }

    /// The names created (or written, or moved in) since the watch began, in order.
    func created() -> [String] {
        var names: [String] = []
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress!, $0.count) }
            guard count > 0 else { return names }
            var offset = 0
            while offset + MemoryLayout<inotify_event>.size <= count {
                let length = buffer.withUnsafeBytes {
                    Int($0.load(fromByteOffset: offset + 12, as: UInt32.self))
                }
                let start = offset + MemoryLayout<inotify_event>.size
                let name = buffer[start..<start + length].prefix { $0 != 0 }
                names.append(String(decoding: name, as: UTF8.self))
                offset = start + length
            }
        }
    }
}

extension TenantAPIFleetTests {
    /// A replica reading a domain again fetches only the files whose digest moved: after a page write through the
    /// API of another replica, the follower's `aasa_store_file_bytes_fetched_total` grows by that page's bytes,
    /// not by the 4 MiB page beside it; a removal fetches nothing.
    @Test func aPageWriteFetchesOnlyThatPage() throws {
        let uri = try StoreCluster.database("page_fetch")
        let workspace = TemporaryDirectory("aasa-page-fetch")
        try workspace.copy(RepositoryPaths.siteConfig, to: "site-config")
        let big = [UInt8](repeating: UInt8(ascii: "B"), count: 4 << 20)
        try Data(big).write(to: URL(fileURLWithPath: workspace.path + "/site-config/shop.example/pages/big.bin"))
        #expect(try aasa(["certs", "dev"], in: workspace.path).status == 0)
        let key = try workspace.write("store.key", String(repeating: "b", count: 63) + "2\n")
        #expect(chmod(key, 0o600) == 0)
        try push(workspace, uri)
        let tokens = ["--admin-token-file", try tokens(workspace)]
        let (writer, _) = try replica(workspace, uri, "writer", arguments: tokens)
        let (follower, _) = try replica(workspace, uri, "follower", arguments: tokens)
        #expect(writer.waitUntilReady() && follower.waitUntilReady())
        func fetched() throws -> Int {
            let metrics = try Curl.request(
                "http://127.0.0.1:\(follower.admin)/metrics", headers: [Self.authorization]
            ).text
            let line = metrics.split(separator: "\n").first { $0.hasPrefix("aasa_store_file_bytes_fetched_total ") }
            return Int(line?.split(separator: " ").last ?? "") ?? -1
        }
        let start = try fetched()
        #expect(start >= big.count, "the start fetched the domain's files: \(start)")

        let page = "<!doctype html><html><head><title>N</title></head><body>new-page</body></html>\n"
        let written = try call(writer, "PUT", "shop.example/pages/new/index.html", body: page)
        #expect(written.status == 201, "\(written.text)")
        Wait.until("the follower serves the new page", seconds: 20) {
            let answer = try? fetch(workspace, follower, "shop.example", "/new/")
            return answer?.text.contains("new-page") == true ? nil : "\(answer?.status ?? 0)"
        }
        #expect(try fetched() - start == page.utf8.count, "the follower fetched only the page written")
        #expect(try fetch(workspace, follower, "shop.example", "/big.bin").body == big)

        let tag = try #require(written.headers["etag"])
        let removed = try call(writer, "DELETE", "shop.example/pages/new/index.html", headers: ["If-Match: \(tag)"])
        #expect(removed.status == 204, "\(removed.text)")
        Wait.until("the follower no longer serves the page", seconds: 20) {
            let status = (try? fetch(workspace, follower, "shop.example", "/new/").status) ?? 0
            return status == 404 ? nil : "\(status)"
        }
        #expect(try fetched() - start == page.utf8.count, "a removal fetches no file")
        #expect(writer.terminate() == 0 && follower.terminate() == 0)
    }
}
