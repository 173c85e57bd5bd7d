import AASATestSupport
import Foundation
import Testing

/// A page of the largest size a tenant may host, with the Smart App Banner spliced in per URL, served by a real
/// `aasa-server serve` process (its own process, so its resident memory is the daemon's alone).
@Suite(.serialized) struct BannerPageMemoryTests {
    /// The page's bytes up to where the banner goes (after `<head>`), and after it: 16 MiB − 1 bytes in all, the
    /// largest page loaded being 16 MiB. The page has its own touch icon, so only the banner is injected.
    static let head = Array("<!DOCTYPE html><html><head>".utf8)
    static let tail: [UInt8] = {
        let start = Array(
            "<link rel=\"apple-touch-icon\" href=\"/apple-touch-icon.png\"><title>Big</title></head><body>".utf8)
        let end = Array("</body></html>\n".utf8)
        let filler = (16 << 20) - 1 - head.count - start.count - end.count
        return start + (0..<filler).map { UInt8(ascii: "a") + UInt8($0 % 26) } + end
    }()

    /// The page as served at `url`: the banner naming the URL, on the domain's canonical origin.
    static func expected(_ url: String) -> [UInt8] {
        head + Array("\n<meta name=\"apple-itunes-app\" content=\"app-id=640199958, app-argument=\(url)\">".utf8)
            + tail
    }

    /// `clients` connections (receive buffers shrunk to 4 KiB) each send one request for the page at its own URL
    /// and never read; the daemon's VmRSS (`/proc/<pid>/status`) is sampled before they connect and for three
    /// seconds after, while their answers are in progress. Then each client reads the start of its answer, which
    /// shows the daemon really answered every one. Prints one JSON object.
    static let clients = #"""
        import json, socket, ssl, sys, time
        pid, port, tls, host, clients = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "tls", sys.argv[4], int(sys.argv[5])

        def rss():
            with open("/proc/%s/status" % pid) as status:
                for line in status:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) * 1024

        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        before = rss()
        connections = []
        for index in range(clients):
            raw = socket.socket()
            raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            raw.settimeout(10)
            raw.connect(("127.0.0.1", port))
            connection = context.wrap_socket(raw, server_hostname=host) if tls else raw
            connection.sendall(("GET /big.html?client=%d HTTP/1.1\r\nHost: %s\r\n\r\n" % (index, host)).encode())
            connections.append(connection)
        peak = before
        stop = time.monotonic() + 3
        while time.monotonic() < stop:
            peak = max(peak, rss())
            time.sleep(0.05)
        answered = 0
        for connection in connections:
            if connection.recv(64).startswith(b"HTTP/1.1 200 "):
                answered += 1
            connection.close()
        print(json.dumps({"before": before, "peak": peak, "answered": answered}))
        """#

    /// Resident memory the non-reading clients may add: their 30 connections' TLS sessions and libmicrohttpd
    /// buffers (tens of KiB each). Copying the page per connection added 464 MB.
    static let addedBytesBound = 8 << 20

    @Test(arguments: [true, false])
    func thirtyClientsThatNeverReadABannerPageAddOnlyAFewMegabytes(tls: Bool) throws {
        let directory = TemporaryDirectory("aasa-banner-memory")
        try directory.copy(RepositoryPaths.siteConfig, to: "site-config")
        try Data(Self.head + Self.tail).write(
            to: URL(fileURLWithPath: directory.path + "/site-config/shop.example/pages/big.html"))
        let http = freePort()
        let serve = try ServeProcess(
            in: directory.path, arguments: ["--dev", "--no-watch", "--http-port", "\(http)"])
        #expect(serve.waitUntilHealthy(seconds: 30))
        let caFile = directory.path + "/certs/dev-ca/ca.pem"
        let origin = tls ? "https://shop.example:\(serve.port)" : "http://shop.example:\(http)"
        func get(_ path: String, method: String = "GET", headers: [String] = []) throws -> CurlResponse {
            try Curl.request(
                origin + path, method: method, headers: headers, caFile: caFile,
                resolve: ("shop.example", tls ? serve.port : http))
        }

        // A client that reads gets the exact page for its own URL, with its length and its own tag.
        let page = try get("/big.html?client=read")
        let expected = Self.expected("https://shop.example/big.html?client=read")
        #expect(page.status == 200, "\(page.error)")
        #expect(page.body.count == expected.count && page.body == expected)
        #expect(page.headers["content-length"] == "\(expected.count)")
        let etag = try #require(page.headers["etag"])
        #expect(try get("/big.html?client=read").headers["etag"] == etag)
        #expect(try get("/big.html?client=other", method: "HEAD").headers["etag"] != etag)
        let head = try get("/big.html?client=read", method: "HEAD")
        #expect(head.status == 200 && head.body.isEmpty)
        #expect(head.headers["content-length"] == "\(expected.count)" && head.headers["etag"] == etag)
        let notModified = try get("/big.html?client=read", headers: ["If-None-Match: \(etag)"])
        #expect(notModified.status == 304 && notModified.body.isEmpty && notModified.headers["etag"] == etag)

        let run = try Command.run(
            "python3",
            [
                "-c", Self.clients, "\(serve.process.processIdentifier)", "\(tls ? serve.port : http)",
                tls ? "tls" : "plain", "shop.example", "30",
            ], timeout: 60)
        #expect(run.status == 0, "\(run.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Int] ?? [:]
        #expect(report["answered"] == 30, "\(run.stdout)")
        let added = (report["peak"] ?? .max) - (report["before"] ?? 0)
        #expect(added <= Self.addedBytesBound, "30 non-reading clients added \(added >> 10) KiB: \(run.stdout)")
        // The daemon still serves everyone else.
        #expect(try get("/big.html?client=after", method: "HEAD").status == 200)
        #expect(serve.terminate(within: 5) == 0)
    }
}
