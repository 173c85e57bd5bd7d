import AASACore
import AASATestSupport
import Foundation
import Synchronization
import Testing

@testable import AASAServer

/// Live reload against a real server: files change on disk while real requests flow, and every answer must
/// be the old file or the new one, byte for byte.
@Suite(.serialized) struct LiveReloadTests {
    static let path = "/.well-known/apple-app-site-association"

    /// A valid config whose generated file differs for each `version`.
    static func config(_ version: Int) -> String {
        #"{"webCredentials": ["ABCDE12345.com.example.v\#(version)"]}"#
    }

    /// The bytes the server must serve for `text` as `domain`'s site.json.
    static func generated(_ domain: String, _ text: String) throws -> [UInt8] {
        let loaded = SiteConfigLoader().loadDomain(
            domain: domain, source: SourceText(name: "site.json", bytes: Array(text.utf8)))
        return try #require(loaded.generated?.bytes, "\(loaded.diagnostics)")
    }

    /// Writes in place (truncate, then write), as most editors and `cp` do, so a reload can see a partial file.
    static func write(_ text: String, to file: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
    }

    static func domainStatus(_ live: LiveServer, _ domain: String) throws -> [String: Any]? {
        (try live.status()["domains"] as? [String: Any])?[domain] as? [String: Any]
    }

    static func finish(_ traffic: [Traffic]) {
        for loop in traffic {
            let (requests, failures) = loop.stop()
            #expect(failures.isEmpty, "\(failures.prefix(10))")
            #expect(requests >= loop.minimumRequests, "\(loop.name) sent only \(requests) requests")
        }
    }

    @Test func editsBreaksFixesAddsAndDeletesWithoutAFailedRequest() throws {
        // A removed folder is unpublished once the grace has passed, by a reload the server schedules itself.
        let live = try LiveServer(configure: { $0.removalGrace = .seconds(1) })
        let shop = live.configDirectory + "/shop.example/site.json"
        let original = Answer.ok(try live.expectedFile("shop.example"))
        let shopTraffic = Traffic("shop.example", allowed: [original]) { try live.fetch("shop.example") }
        // curl starts a process per request: fewer requests, but real TLS with SNI and verification.
        let curlTraffic = Traffic("shop.example over HTTPS", allowed: [original], minimumRequests: 5) {
            let response = try live.get("shop.example", Self.path)
            return Answer(status: response.status, body: response.body)
        }
        let newTraffic = Traffic("new.example", allowed: [.unknownHost]) { try live.fetch("new.example") }

        // Edit: the new file within two seconds.
        let edited = Answer.ok(try Self.generated("shop.example", Self.config(1)))
        shopTraffic.expect([original, edited])
        curlTraffic.expect([original, edited])
        var written = ContinuousClock.now
        try Self.write(Self.config(1), to: shop)
        #expect(try waitUntil(2, since: written) { try live.fetch("shop.example") == edited } != nil)

        // Break: the edited file stays, the error shows in /status.
        shopTraffic.expect([edited])
        curlTraffic.expect([edited])
        try Self.write("{\n  \"webCredentials\": [\n    \"not an app id\"\n  ]\n}\n", to: shop)
        let reported = try waitUntil(2) {
            (try Self.domainStatus(live, "shop.example")?["errors"] as? [String])?.isEmpty == false
        }
        #expect(reported != nil)
        #expect(try live.fetch("shop.example") == edited)

        // Fix: published within two seconds of the write.
        let fixed = Answer.ok(try Self.generated("shop.example", Self.config(2)))
        shopTraffic.expect([edited, fixed])
        curlTraffic.expect([edited, fixed])
        written = .now
        try Self.write(Self.config(2), to: shop)
        let fixDelay = try waitUntil(2, since: written) { try live.fetch("shop.example") == fixed }
        #expect(fixDelay != nil, "the fix was not served within 2 seconds")
        #expect((try Self.domainStatus(live, "shop.example")?["errors"] as? [String]) == [])

        // A new domain folder.
        let added = Answer.ok(try Self.generated("new.example", Self.config(3)))
        shopTraffic.expect([fixed])
        curlTraffic.expect([fixed])
        newTraffic.expect([.unknownHost, added])
        written = .now
        try FileManager.default.createDirectory(
            atPath: live.configDirectory + "/new.example", withIntermediateDirectories: true)
        try Self.write(Self.config(3), to: live.configDirectory + "/new.example/site.json")
        #expect(try waitUntil(2, since: written) { try live.fetch("new.example") == added } != nil)

        // Edit the new domain: its folder is watched too.
        let addedEdit = Answer.ok(try Self.generated("new.example", Self.config(4)))
        newTraffic.expect([added, addedEdit])
        written = .now
        try Self.write(Self.config(4), to: live.configDirectory + "/new.example/site.json")
        #expect(try waitUntil(2, since: written) { try live.fetch("new.example") == addedEdit } != nil)

        // Delete the folder: served through the grace, then gone.
        newTraffic.expect([addedEdit, .unknownHost])
        written = .now
        try FileManager.default.removeItem(atPath: live.configDirectory + "/new.example")
        let gone = try waitUntil(4, since: written) { try live.fetch("new.example") == .unknownHost }
        #expect(gone.map { $0 >= .seconds(1) } == true, "\(String(describing: gone))")

        // Delete only site.json: a missing file is an error, so the last good version stays.
        shopTraffic.expect([fixed])
        curlTraffic.expect([fixed])
        try FileManager.default.removeItem(atPath: shop)
        let missing = try waitUntil(2) {
            (try Self.domainStatus(live, "shop.example")?["errors"] as? [String])?.first?.contains("[missing-file]")
                == true
        }
        #expect(missing != nil)
        #expect(try live.fetch("shop.example") == fixed)

        Self.finish([shopTraffic, curlTraffic, newTraffic])
    }

    @Test func kubernetesConfigMapSwapOfDataSymlinkIsPickedUp() throws {
        // The layout kubelet's atomic writer makes for a ConfigMap with items `shop.example/site.json`, …:
        // visible entries are symlinks through `..data`, which points at a hidden timestamped folder.
        func makeVersion(_ root: String, _ name: String, shop: String?) throws {
            let manager = FileManager.default
            try manager.createDirectory(atPath: root + "/" + name, withIntermediateDirectories: true)
            for domain in ["shop.example", "links.example"] {
                try manager.createDirectory(atPath: "\(root)/\(name)/\(domain)", withIntermediateDirectories: true)
                let source = RepositoryPaths.siteConfig + "/\(domain)/site.json"
                if domain == "shop.example", let shop {
                    try Self.write(shop, to: "\(root)/\(name)/\(domain)/site.json")
                } else {
                    try manager.copyItem(atPath: source, toPath: "\(root)/\(name)/\(domain)/site.json")
                }
            }
        }
        /// Points `..data` at `name` the way kubelet does: a new symlink renamed over the old one.
        func swapData(_ root: String, to name: String) throws {
            try FileManager.default.createSymbolicLink(atPath: root + "/..data_tmp", withDestinationPath: name)
            #expect(rename(root + "/..data_tmp", root + "/..data") == 0)
        }
        let live = try LiveServer(prepare: { root in
            for domain in ["shop.example", "links.example"] {
                try FileManager.default.removeItem(atPath: root + "/" + domain)
            }
            try makeVersion(root, "..2025_01_01_00_00_00.000000001", shop: nil)
            try swapData(root, to: "..2025_01_01_00_00_00.000000001")
            for domain in ["shop.example", "links.example"] {
                try FileManager.default.createSymbolicLink(
                    atPath: root + "/" + domain, withDestinationPath: "..data/" + domain)
            }
        })
        let root = live.configDirectory
        let original = Answer.ok(try live.expectedFile("shop.example"))
        let traffic = Traffic("shop.example", allowed: [original]) { try live.fetch("shop.example") }
        var previous = "..2025_01_01_00_00_00.000000001"
        var served = original
        for version in 1...2 {
            let next = Answer.ok(try Self.generated("shop.example", Self.config(version)))
            traffic.expect([served, next])
            let name = "..2025_01_01_00_00_0\(version).000000001"
            try makeVersion(root, name, shop: Self.config(version))
            let written = ContinuousClock.now
            try swapData(root, to: name)
            try FileManager.default.removeItem(atPath: root + "/" + previous)
            #expect(try waitUntil(2, since: written) { try live.fetch("shop.example") == next } != nil, "\(version)")
            previous = name
            served = next
        }
        // The other domain kept being served from the new folder.
        #expect(try live.fetch("links.example") == .ok(try live.expectedFile("links.example")))
        Self.finish([traffic])
    }

    @Test func statusNamesTheFileAndLineOfABrokenEdit() throws {
        let live = try LiveServer()
        let file = live.configDirectory + "/shop.example/site.json"
        let status = try live.status()
        let started = try #require(status["lastReload"] as? [String: Any])
        #expect(started["trigger"] as? String == "start")
        #expect(started["result"] as? String == "ok")

        try Self.write(
            """
            {
              "universalLinks": {
                "apps": [{"appIDs": ["com.example.app"], "rules": [{"path": "/*"}]}]
              }
            }
            """, to: file)
        try FileManager.default.createDirectory(
            atPath: live.configDirectory + "/broken.example", withIntermediateDirectories: true)
        try Self.write("{ nope", to: live.configDirectory + "/broken.example/site.json")
        let seen = try waitUntil(2) { try Self.domainStatus(live, "broken.example") != nil }
        #expect(seen != nil)

        let after = try live.status()
        let shop = try #require(try Self.domainStatus(live, "shop.example"))
        #expect(shop["published"] as? Bool == true)
        #expect(shop["lastGoodLoad"] is String)
        let errors = try #require(shop["errors"] as? [String])
        #expect(errors.first?.hasPrefix(file + ":3:") == true, "\(errors)")
        #expect(errors.first?.contains("error: [app-id-format]") == true, "\(errors)")
        // A domain that never loaded cleanly is not published and has no last good load.
        let broken = try #require(try Self.domainStatus(live, "broken.example"))
        #expect(broken["published"] as? Bool == false)
        #expect(broken["lastGoodLoad"] is NSNull)
        #expect((broken["errors"] as? [String])?.first?.contains("broken.example/site.json:1:") == true)
        let reload = try #require(after["lastReload"] as? [String: Any])
        #expect(reload["trigger"] as? String == "file-change")
        #expect(reload["result"] as? String == "errors")
        #expect((reload["errors"] as? [String])?.count == 2, "\(reload)")
        #expect(try live.fetch("broken.example") == .unknownHost)
        let links = try #require(try Self.domainStatus(live, "links.example"))
        #expect(links["errors"] as? [String] == [])
        // Without --acme, each domain's certificate is the operator's, valid while one covers it.
        let certificate = try #require(links["certificate"] as? [String: Any])
        #expect(certificate["source"] as? String == "files" && certificate["state"] as? String == "valid")
        #expect(certificate["expiry"] is String && certificate["nextRenewal"] is NSNull)
    }

    @Test func renewedCertificateServesNewConnectionsAndABrokenOneKeepsTheLast() throws {
        let live = try LiveServer()
        let folder = live.certsDirectory + "/shop.example"
        func served() throws -> String {
            let handshake = try Command.run(
                "openssl",
                ["s_client", "-connect", "127.0.0.1:\(live.https)", "-servername", "shop.example"],
                input: Array("Q\n".utf8), timeout: 15)
            return try Self.fingerprint(pem: handshake.stdout)
        }
        func onDisk() throws -> String {
            try Self.fingerprint(pem: String(contentsOfFile: folder + "/fullchain.pem", encoding: .utf8))
        }
        func certificateStatus() throws -> [String: Any]? {
            (try live.status()["certificates"] as? [String: Any])?["shop.example"] as? [String: Any]
        }
        let first = try served()
        #expect(first == (try onDisk()))
        #expect(try certificateStatus()?["fingerprint"] as? String == first)

        // A connection opened before the renewal stays usable after it.
        let open = try OpenTLSConnection(port: live.https, serverName: "shop.example", caFile: live.caFile)

        // Renewal: new connections get the new certificate, without a restart.
        _ = try DevCertificates(certificateDirectory: live.certsDirectory).ensure(
            names: ["shop.example"], replace: true)
        let renewed = try onDisk()
        #expect(renewed != first)
        #expect(try waitUntil(3) { try served() == renewed } != nil)
        #expect(try certificateStatus()?["fingerprint"] as? String == renewed)

        let response = try open.request("GET \(Self.path) HTTP/1.1\r\nHost: shop.example\r\nConnection: close\r\n\r\n")
        #expect(response.hasPrefix("HTTP/1.1 200"), "\(response.prefix(200))")
        #expect(response.contains(String(decoding: try live.expectedFile("shop.example"), as: UTF8.self)))
        // …and it still has the certificate it was opened with.
        #expect(try Self.fingerprint(pem: open.handshake) == first)

        // A broken replacement (the key of another certificate): the renewed certificate stays, /status says why.
        try FileManager.default.removeItem(atPath: folder + "/privkey.pem")
        try FileManager.default.copyItem(
            atPath: live.certsDirectory + "/links.example/privkey.pem", toPath: folder + "/privkey.pem")
        let reported = try waitUntil(2) {
            (try certificateStatus()?["errors"] as? [String])?.first?.contains("[certificate-key-mismatch]") == true
        }
        #expect(reported != nil, "\(String(describing: try? certificateStatus()))")
        #expect(try certificateStatus()?["serving"] as? Bool == true)
        #expect(try certificateStatus()?["fingerprint"] as? String == renewed)
        #expect(try served() == renewed)
        let verified = try live.get("shop.example", Self.path)
        #expect(verified.status == 200, "\(verified.error)")

        // Fixed by the next renewal.
        _ = try DevCertificates(certificateDirectory: live.certsDirectory).ensure(
            names: ["shop.example"], replace: true)
        let again = try onDisk()
        #expect(try waitUntil(3) { try served() == again } != nil)
        #expect(try certificateStatus()?["errors"] as? [String] == [])
    }

    @Test func stoppingTheServerEndsTheWatcherThread() throws {
        let live = try LiveServer()
        let watcher = try #require(live.server.watcher)
        #expect(waitUntil(2) { watcher.threadID != 0 } != nil)
        let thread = "/proc/self/task/\(watcher.threadID)"
        let name = try String(contentsOfFile: thread + "/comm", encoding: .utf8)
        #expect(name == "aasa-watch\n")

        let stopping = ContinuousClock.now
        live.server.stop(timeout: .zero)
        #expect(stopping.duration(to: .now) < .seconds(1))
        #expect(watcher.threadID == 0)
        #expect(!FileManager.default.fileExists(atPath: thread), "the watcher thread is still running")
        #expect(live.server.watcher == nil)

        // Watching can be turned off (`serve --no-watch`); SIGHUP still reloads.
        let unwatched = try LiveServer(configure: { $0.watchForChanges = false })
        #expect(unwatched.server.watcher == nil)
    }

    /// The SHA-256 fingerprint of the first certificate in `pem` text, as openssl prints it.
    static func fingerprint(pem: String) throws -> String {
        let output = try Command.run(
            "openssl", ["x509", "-noout", "-fingerprint", "-sha256"], input: Array(pem.utf8), timeout: 15)
        let line = try #require(output.stdout.split(separator: "\n").first, "\(output.stderr)")
        return String(line.split(separator: "=", maxSplits: 1).last ?? "")
    }
}

/// A TLS connection kept open by `openssl s_client` until a request is sent on it.
final class OpenTLSConnection {
    let process = Process()
    let input = Pipe()
    let output = Pipe()
    private var received = Data()
    /// What s_client printed about the handshake, the server's leaf certificate (PEM) included.
    private(set) var handshake = ""

    /// Connects and returns once the handshake is verified (s_client prints its summary).
    init(port: UInt16, serverName: String, caFile: String) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "openssl", "s_client", "-connect", "127.0.0.1:\(port)", "-servername", serverName, "-CAfile", caFile,
            "-verify_return_error",
        ]
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let marker = Data("Verify return code: 0 (ok)".utf8)
        while received.range(of: marker) == nil {
            let chunk = ChildPipe.readAvailable(output.fileHandleForReading)
            guard !chunk.isEmpty else { throw HTTPProbe.Failure(description: "s_client ended before the handshake") }
            received += chunk
        }
        handshake = String(decoding: received, as: UTF8.self)
    }

    deinit {
        if process.isRunning { process.terminate() }
    }

    /// Sends `request` and returns the HTTP response, read until the server closes the connection; empty when
    /// s_client has already ended (the connection is gone), which the caller's expectations then name.
    func request(_ request: String) throws -> String {
        ChildPipe.write(Data(request.utf8), to: input.fileHandleForWriting)
        received += ChildPipe.readToEnd(output.fileHandleForReading)
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
        let text = String(decoding: received, as: UTF8.self)
        guard let start = text.range(of: "HTTP/1.1 ") else { return "" }
        return String(text[start.lowerBound...])
    }
}
