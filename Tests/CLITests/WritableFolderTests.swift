import AASATestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The folders the server writes into and deletes from on its own (`--store-cache`, ACME's state, the history) are
/// refused, with the path, what is wrong and the fix, when they are a symbolic link, not the server's user's, or
/// writable by group or others; and nothing behind a refused folder is written or deleted. Each against the real
/// binary: `serve` (the snapshot, the history through the tenant API) and `certs acme` (ACME's state).
@Suite struct WritableFolderTests {
    /// A folder of someone else's files, which a link points at.
    static func victim(in folder: TemporaryDirectory) throws -> String {
        _ = try folder.write("victim/keep.txt", "not the server's\n")
        return folder.path + "/victim"
    }

    /// `serve` of a store nothing answers (port 1) with `--store-cache cache`: the snapshot is prepared before the
    /// store is reached, so its refusal is the start's.
    static func serveWithCache(in folder: TemporaryDirectory) throws -> Command.Output {
        try Command.run(
            RepositoryPaths.executable,
            [
                "serve", "--store", "postgresql://postgres@127.0.0.1:1/aasa", "--store-cache", "cache",
                "--https-port", "\(freePort())", "--admin-port", "\(freePort())",
            ], currentDirectory: folder.path, timeout: TestTime.seconds(60))
    }

    @Test func aStoreCacheWhoseDomainsEntryIsASymbolicLinkIsRefusedAndNothingBehindItIsDeleted() throws {
        let folder = TemporaryDirectory("aasa-writable-link")
        let victim = try Self.victim(in: folder)
        #expect(mkdir(folder.path + "/cache", 0o700) == 0)
        #expect(symlink(victim, folder.path + "/cache/domains") == 0)
        let run = try Self.serveWithCache(in: folder)
        #expect(run.status != 0)
        #expect(run.stderr.contains("cache/domains: error: is a symbolic link"), "\(run.stderr)")
        #expect(run.stderr.contains("fix: give the folder the link points to"), "\(run.stderr)")
        #expect(run.stderr.contains("--store-cache"), "\(run.stderr)")
        #expect(FileManager.default.fileExists(atPath: victim + "/keep.txt"), "a file behind the link was deleted")
    }

    @Test func aStoreCacheOthersCanWriteIsRefused() throws {
        let folder = TemporaryDirectory("aasa-writable-mode")
        #expect(mkdir(folder.path + "/cache", 0o700) == 0)
        #expect(chmod(folder.path + "/cache", 0o777) == 0)
        let run = try Self.serveWithCache(in: folder)
        #expect(run.status != 0)
        #expect(run.stderr.contains("cache: error: is writable by group or others (mode 777)"), "\(run.stderr)")
        #expect(run.stderr.contains("fix: chmod go-w"), "\(run.stderr)")
    }

    @Test(.enabled(if: geteuid() == 0, "only root can give a folder to another user"))
    func aStoreCacheOfAnotherUserIsRefused() throws {
        let folder = TemporaryDirectory("aasa-writable-owner")
        #expect(mkdir(folder.path + "/cache", 0o700) == 0)
        #expect(chown(folder.path + "/cache", 65_534, 65_534) == 0)
        let run = try Self.serveWithCache(in: folder)
        #expect(run.status != 0)
        #expect(run.stderr.contains("is owned by uid 65534, not by the server's user (uid 0)"), "\(run.stderr)")
    }

    /// A missing cache is made 0700, and the start goes on to wait for the store (stopped here by SIGTERM).
    @Test func aMissingStoreCacheIsMadeForTheServerAlone() throws {
        let folder = TemporaryDirectory("aasa-writable-made")
        let serve = try ServeProcess(
            in: folder.path,
            arguments: ["--store", "postgresql://postgres@127.0.0.1:1/aasa", "--store-cache", "cache/snapshot"])
        Wait.until("the snapshot's folders", seconds: 10) {
            FileManager.default.fileExists(atPath: folder.path + "/cache/snapshot") ? nil : "not yet"
        }
        for sub in ["cache", "cache/snapshot"] {
            let mode = try FileManager.default.attributesOfItem(atPath: folder.path + "/" + sub)[.posixPermissions]
            #expect((mode as? NSNumber)?.intValue == 0o700, "\(sub)")
        }
        // Stopped while it waits for the store: its exit says the start did not complete.
        _ = serve.terminate()
    }

    /// The history folder (`<config>/.aasa-history`) as a link: a write through the tenant API is 503 naming it
    /// and its fix, nothing is written behind the link, and the domain still serves what it served.
    @Test func aHistoryFolderThatIsASymbolicLinkRefusesWritesAndTheDomainKeepsServing() throws {
        let folder = TemporaryDirectory("aasa-writable-history")
        let victim = try Self.victim(in: folder)
        let token = String(repeating: "w", count: 40)
        let serve = try ServeProcess.withTokens("ci write \(token)\n", in: folder)
        #expect(serve.waitUntilReady())
        #expect(symlink(victim, folder.path + "/site-config/.aasa-history") == 0)
        let url = "http://127.0.0.1:\(serve.admin)/api/v1/domains/shop.example"
        let bearer = "Authorization: Bearer \(token)"
        let current = try Curl.request(url, headers: [bearer])
        let site = current.text
        let write = try Curl.request(
            url, method: "PUT",
            headers: [bearer, "Content-Type: application/json", "If-Match: \(current.headers["etag"] ?? "")"],
            extra: ["--data-binary", site + "\n"])
        #expect(write.status == 503, "\(write.status) \(write.text)")
        #expect(write.text.contains(".aasa-history: error: is a symbolic link"), "\(write.text)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: victim) == ["keep.txt"])
        #expect(try Curl.request(url, headers: [bearer]).text == site, "nothing was written")
        #expect(serve.waitUntilHealthy())
        #expect(serve.terminate() == 0)
    }

    /// ACME's state folder (`<certs>/acme`) as a link: `certs acme` stops before it asks the CA anything, naming
    /// the folder and the fix, and writes nothing behind the link.
    @Test func anACMEStateFolderThatIsASymbolicLinkIsRefusedBeforeTheCAIsAsked() throws {
        let folder = TemporaryDirectory("aasa-writable-acme")
        let victim = try Self.victim(in: folder)
        try folder.copy(RepositoryPaths.siteConfig, to: "site-config")
        #expect(mkdir(folder.path + "/certs", 0o755) == 0)
        #expect(symlink(victim, folder.path + "/certs/acme") == 0)
        let run = try Command.run(
            RepositoryPaths.executable,
            [
                "certs", "acme", "--standalone", "--http-port", "0", "--acme-agree-tos", "--acme-directory",
                "https://127.0.0.1:1/directory", "--config", "site-config", "--certs", "certs",
            ], currentDirectory: folder.path, timeout: TestTime.seconds(60))
        #expect(run.status != 0)
        let output = run.stdout + run.stderr
        #expect(output.contains("certs/acme: error: is a symbolic link"), "\(output)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: victim) == ["keep.txt"])
    }
}

/// `serve --credential-vault` names a folder the server makes nameless files in: one that cannot take them stops
/// the start with the folder's name and the fix, before anything is read.
@Suite struct CredentialVaultCLITests {
    @Test func aVaultFolderThatCannotTakeAFileStopsTheStart() throws {
        let folder = TemporaryDirectory("aasa-vault-cli")
        let missing = folder.path + "/missing"
        let run = try Command.run(
            RepositoryPaths.executable,
            [
                "serve", "--https-port", "\(freePort())", "--admin-port", "\(freePort())", "--credential-vault",
                missing,
            ], currentDirectory: folder.path, timeout: TestTime.seconds(60))
        #expect(run.status == 2, "\(run.stderr)")
        #expect(run.stderr.contains("\(missing): error: "), "\(run.stderr)")
        #expect(run.stderr.contains("the credential vault cannot make a file in \(missing)"), "\(run.stderr)")
        #expect(run.stderr.contains("fix: name a folder the server can write with --credential-vault"), "\(run.stderr)")
        #expect(run.stderr.contains("--credential-vault off"), "\(run.stderr)")
    }

    @Test func anEmptyFolderIsAUsageError() throws {
        let run = try Command.run(RepositoryPaths.executable, ["serve", "--credential-vault", ""], timeout: 30)
        #expect(run.status != 0)
        #expect(run.stderr.contains("--credential-vault needs a folder, or 'off'"), "\(run.stderr)")
    }
}

extension CredentialVaultCLITests {
    /// Without `--credential-vault`, a `TMPDIR` that cannot take a file (here a regular file) does not stop the start:
    /// the server says so once, with the fix, keeps certificates in memory and serves them.
    @Test func anUnusableTemporaryFolderKeepsCredentialsInMemoryAndSaysSo() throws {
        let directory = TemporaryDirectory("aasa-vault-tmpdir")
        try directory.copy(RepositoryPaths.siteConfig, to: "site-config")
        let notAFolder = try directory.write("not-a-folder", "a file\n")
        let log = directory.path + "/serve.log"
        #expect(FileManager.default.createFile(atPath: log, contents: nil))
        let serve = try ServeProcess(
            in: directory.path, arguments: ["--dev", "--no-watch"], environment: ["TMPDIR": notAFolder],
            errorOutput: try FileHandle(forWritingTo: URL(fileURLWithPath: log)))
        #expect(serve.waitUntilReady())
        let served = try Curl.request(
            "https://shop.example:\(serve.port)/.well-known/apple-app-site-association",
            caFile: directory.path + "/certs/dev-ca/ca.pem", resolve: ("shop.example", serve.port))
        #expect(served.status == 200, "\(served.text)")
        let metrics = try Curl.request("http://127.0.0.1:\(serve.admin)/metrics").text
        #expect(metrics.contains("aasa_tls_certificate_lookups_total") && !metrics.contains("aasa_sealed_credentials"))
        #expect(serve.terminate(within: 10) == 0)
        let logged = try String(contentsOfFile: log, encoding: .utf8)
        #expect(logged.contains("certificates' leaves and keys are kept in memory"), "\(logged)")
        #expect(logged.contains("cannot make a file in \(notAFolder)"), "\(logged)")
        #expect(logged.contains("fix=name a writable folder with --credential-vault"), "\(logged)")
    }
}
