import AASACore
import AASAMicroHTTPD
import AASATestSupport
import Foundation
import Testing

/// Corked TLS responses on a live listener with one worker thread: a client that pipelines and never reads
/// must not hold that thread, so a normal client on the same thread keeps getting prompt answers.
@Suite(.serialized) struct TLSCorkTests {
    /// Python's `ssl` drives the clients: `stallers` connections (receive buffers shrunk to 4 KiB) each pipeline
    /// requests for a 7 KiB body, a corked response, and never read, reconnecting whenever the server ends
    /// one; meanwhile one keep-alive client asks for the same body every 10 ms and times each answer.
    /// Prints one JSON object: the normal client's latencies in seconds, how often a staller found its socket
    /// full (proof that it stalled the server's writes), how many connections the stallers opened, errors.
    static let clients = #"""
        import json, socket, ssl, sys, threading, time
        port, ca, host, stallers, seconds = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
        context = ssl.create_default_context(cafile=ca)
        request = ("GET /hello HTTP/1.1\r\nHost: %s\r\n\r\n" % host).encode()
        stop = time.monotonic() + seconds
        counts = {"blocked": 0, "stallerConnections": 0, "normalErrors": 0}
        lock = threading.Lock()

        def staller():
            while time.monotonic() < stop:
                raw = socket.socket()
                try:
                    raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                    raw.settimeout(2)
                    raw.connect(("127.0.0.1", port))
                    connection = context.wrap_socket(raw, server_hostname=host)
                    connection.setblocking(False)
                    with lock:
                        counts["stallerConnections"] += 1
                    while time.monotonic() < stop:
                        try:
                            connection.send(request * 32)
                        except (ssl.SSLWantWriteError, ssl.SSLWantReadError, BlockingIOError):
                            with lock:
                                counts["blocked"] += 1
                            time.sleep(0.02)
                except (OSError, ssl.SSLError):
                    time.sleep(0.005)
                finally:
                    raw.close()

        def answer(connection):
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = connection.recv(65536)
                if not chunk:
                    raise OSError("closed")
                data += chunk
            head, _, body = data.partition(b"\r\n\r\n")
            length = [int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")][0]
            while len(body) < length:
                chunk = connection.recv(65536)
                if not chunk:
                    raise OSError("closed")
                body += chunk
            return head.split(b" ")[1]

        threads = [threading.Thread(target=staller) for _ in range(stallers)]
        for thread in threads:
            thread.start()
        time.sleep(0.5)
        latencies = []
        connection = None
        while time.monotonic() < stop:
            try:
                if connection is None:
                    connection = context.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=5), server_hostname=host)
                started = time.monotonic()
                connection.sendall(request)
                status = answer(connection)
                latencies.append(time.monotonic() - started)
                if status != b"200":
                    counts["normalErrors"] += 1
            except (OSError, ssl.SSLError):
                counts["normalErrors"] += 1
                connection = None
            time.sleep(0.01)
        for thread in threads:
            thread.join()
        print(json.dumps(dict(counts, latencies=latencies)))
        """#

    @Test(arguments: [EventLoop.epoll, .poll])
    func aPipeliningClientThatNeverReadsDoesNotStallOthersOnItsThread(eventLoop: EventLoop) throws {
        let pki = try TestPKI()
        let (entry, _) = try pki.entry(["cork.test"])
        var configuration = testConfiguration(
            tls: TLSConfiguration(certificates: try CertificateTable(entries: [entry], defaultEntry: 0)))
        configuration.threadPoolSize = 1
        configuration.eventLoop = eventLoop
        // Corked: well under TLSCork.limit, and large enough that a few answers fill a 4 KiB receive window.
        let body = String(repeating: "0123456789abcdef", count: 7 * 64)
        let listener = try HTTPListener(configuration: configuration, routes: TestRoutes(helloBody: body))
        defer { listener.stop(timeout: .zero) }

        let run = try Command.run(
            "python3", ["-c", Self.clients, "\(listener.port)", pki.caPath, "cork.test", "8", "4"], timeout: 60)
        #expect(run.status == 0, "\(run.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any] ?? [:]
        let latencies = (report["latencies"] as? [Double] ?? []).sorted()
        // The stallers really filled their sockets, and the normal client really ran.
        #expect(report["blocked"] as? Int ?? 0 > 0, "\(run.stdout)")
        #expect(latencies.count >= 50, "\(run.stdout)")
        #expect(report["normalErrors"] as? Int == 0, "\(run.stdout)")
        // A held worker thread shows as answers waiting for it: one 50 ms wait per stalled flush, one after the
        // other with eight stallers. Unheld, answers take about a millisecond even on a busy machine.
        let median = latencies.isEmpty ? .infinity : latencies[latencies.count / 2]
        let slow = latencies.filter { $0 > 0.025 }.count
        #expect(median < 0.01, "median \(median) s; slowest \(latencies.suffix(10))")
        #expect(slow * 20 <= latencies.count, "\(slow) of \(latencies.count) over 25 ms: \(latencies.suffix(10))")
        #expect(latencies.last ?? .infinity < 0.25, "slowest \(latencies.suffix(10))")
        // The server is still up and answers.
        let after = try curl("/hello", port: listener.port, host: "cork.test", tls: true, caPath: pki.caPath)
        #expect(after.status == 0 && after.output.contains("HTTP/1.1 200"), "\(after.error)")
    }
}
