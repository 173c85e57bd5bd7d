import AASATestSupport
import Foundation
import Testing

/// Answers of the tenant API are bounded in memory, against a real `aasa-server serve` (its own process, so its
/// resident memory is the daemon's alone): a page read through the API is one shared copy however many clients
/// read it slowly, and the bytes of answers the admin listener's connections still hold are bounded
/// (`--api-bytes-in-flight`): one more gets 503 with `Retry-After`, and is answered again once they are sent.
@Suite(.serialized) struct APIPageMemoryTests {
    /// A page of `size` bytes whose first byte is `mark`, so pages of one size differ.
    static func page(_ mark: UInt8, size: Int = (16 << 20) - 1) -> Data {
        var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: size)
        bytes[0] = mark
        return Data(bytes)
    }

    /// Opens `clients` connections (receive buffers shrunk to 4 KiB) that each ask for `path` and never read, while
    /// sampling the daemon's VmRSS for three seconds; then each reads its status line, and the connections stay
    /// open while one connection per page of `others` asks for that page and reads its status line. Prints one
    /// JSON object: the memory before and at its peak, how many slow clients got 200, and each other's status.
    static let clients = #"""
        import json, socket, sys, time
        pid, port, token, path, clients = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
        others = sys.argv[6:]

        def rss():
            with open("/proc/%s/status" % pid) as status:
                for line in status:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) * 1024

        def ask(page):
            raw = socket.socket()
            raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            raw.settimeout(20)
            raw.connect(("127.0.0.1", port))
            raw.sendall(("GET /api/v1/domains/shop.example/pages/%s HTTP/1.1\r\nHost: localhost\r\n"
                         "Authorization: Bearer %s\r\n\r\n" % (page, token)).encode())
            return raw

        before = rss()
        slow = [ask(path) for _ in range(clients)]
        peak = before
        stop = time.monotonic() + 3
        while time.monotonic() < stop:
            peak = max(peak, rss())
            time.sleep(0.05)
        answered = sum(1 for connection in slow if connection.recv(64).startswith(b"HTTP/1.1 200 "))
        statuses = {}
        held = []
        for page in others:
            connection = ask(page)
            time.sleep(0.5)
            head = connection.recv(4096).decode("latin-1")
            statuses[page] = head.split(" ")[1] if head.startswith("HTTP/1.1 ") else head[:40]
            if "busy: answers of" in head and "Retry-After: 1" in head:
                statuses[page] += " busy"
            held.append(connection)
        for connection in slow + held:
            connection.close()
        print(json.dumps({"before": before, "peak": peak, "answered": answered, "statuses": statuses}))
        """#

    @Test func sixtySlowReadersShareOnePageAndAnswersInFlightAreBounded() throws {
        let folder = TemporaryDirectory("aasa-api-page-memory")
        try folder.copy(RepositoryPaths.siteConfig, to: "site-config")
        let pages = folder.path + "/site-config/shop.example/pages"
        try FileManager.default.createDirectory(atPath: pages, withIntermediateDirectories: true)
        for (index, name) in ["big.bin", "big1.bin", "big2.bin", "big3.bin", "big4.bin"].enumerated() {
            try Self.page(UInt8(ascii: "A") + UInt8(index)).write(to: URL(fileURLWithPath: pages + "/" + name))
        }
        let certificates = try Command.run(
            RepositoryPaths.executable, ["certs", "dev"], currentDirectory: folder.path, timeout: 60)
        #expect(certificates.status == 0, "\(certificates.stderr)")
        let token = String(repeating: "p", count: 40)
        let tokens = try folder.write("tokens", "reader read \(token)\n")
        #expect(chmod(tokens, 0o600) == 0)
        let serve = try ServeProcess(
            in: folder.path,
            arguments: [
                "--config", "site-config", "--certs", "certs", "--admin-token-file", tokens, "--no-watch",
                "--api-queue", "64", "--api-bytes-in-flight", "64",
                // The slow clients hold their answers however slow the machine: the test is about memory, not
                // about the idle timeout that would close them after 15 s.
                "--idle-timeout", "600",
            ], errorLog: folder.path + "/serve.log")
        // The pages are over what a domain may load to serve (shop.example is not served): the API reads them all.
        #expect(serve.waitUntilHealthy(seconds: 30))
        let base = "http://127.0.0.1:\(serve.admin)/api/v1/domains/shop.example/pages/"
        let bearer = "Authorization: Bearer \(token)"

        // A reader gets the page whole.
        let read = try Curl.request(base + "big.bin", headers: [bearer], maxTime: 30)
        #expect(read.status == 200 && read.body.count == (16 << 20) - 1 && read.body.first == UInt8(ascii: "A"))

        let run = try Command.run(
            "python3",
            [
                "-c", Self.clients, "\(serve.process.processIdentifier)", "\(serve.admin)", token, "big.bin", "60",
                "big1.bin", "big2.bin", "big3.bin", "big4.bin",
            ], timeout: TestTime.seconds(120))
        #expect(run.status == 0, "\(run.stderr)")
        print("APIPageMemoryTests: \(run.stdout)", terminator: "")
        let report = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any] ?? [:]
        #expect(report["answered"] as? Int == 60, "\(run.stdout)")
        // Sixty answers of one 16 MiB page share one copy: far below the 960 MiB sixty copies took.
        let added = ((report["peak"] as? Int) ?? .max) - ((report["before"] as? Int) ?? 0)
        #expect(added < 48 << 20, "sixty slow readers of one page added \(added >> 20) MiB: \(run.stdout)")
        // 64 MiB in flight: the shared page and three more are held; the fourth is refused until they are sent.
        let statuses = report["statuses"] as? [String: String] ?? [:]
        #expect(
            statuses == ["big1.bin": "200", "big2.bin": "200", "big3.bin": "200", "big4.bin": "503 busy"],
            "\(run.stdout)")

        // Once the slow clients are gone, the refused page is answered, and the probes answered throughout.
        Wait.until("big4.bin answered once the held answers are freed", seconds: 15) {
            let again = try? Curl.request(base + "big4.bin", headers: [bearer], maxTime: 30)
            return again?.status == 200 && again?.body.first == UInt8(ascii: "E") ? nil : "\(again?.status ?? 0)"
        }
        #expect(serve.waitUntilHealthy())
        #expect(serve.terminate(within: 10) == 0)
    }
}
