import AASACore
import AASAMicroHTTPD
import AASAOpenSSL
import AASATestSupport
import Foundation

// MARK: Router used by the live tests

/// A small router: `/hello` is prepared, `/kept` is prepared outside the table, `/dynamic` is built per
/// request, `/echo` reports what the transport handed to the router.
struct TestRoutes: RouteTable {
    let preparedResponses: [PreparedResponse]
    private let hello: PreparedResponse
    let kept = PreparedResponse(
        Response(status: 200, headers: [HTTPHeader("X-Route", "kept")], body: Array("kept body\n".utf8)))

    init(helloBody: String) {
        var builder = PreparedResponseBuilder()
        hello = builder.prepare(
            Response(
                status: 200, headers: [HTTPHeader("Content-Type", "text/plain"), HTTPHeader("X-Route", "prepared")],
                body: Array(helloBody.utf8)))
        preparedResponses = builder.responses
    }

    func route(_ request: some HTTPRequest) -> RouteDecision {
        let path = request.withPath { String(decoding: $0, as: UTF8.self) }
        if path == "/hello" { return .prepared(hello) }
        if path == "/kept" { return .prepared(kept) }
        if path == "/dynamic" {
            return .dynamic(
                Response(status: 200, headers: [HTTPHeader("X-Route", "dynamic")], body: Array("dynamic body\n".utf8)))
        }
        if path == "/echo" || path.hasPrefix("/raw") || path.hasPrefix("/a%") {
            let host = request.withHeader("host") { $0.map { String(decoding: $0, as: UTF8.self) } } ?? "<nil>"
            let lines = [
                "method=\(request.method)",
                "path=\(path)",
                "query=\(request.rawQuery ?? "<nil>")",
                "sni=\(request.tlsServerName ?? "<nil>")",
                "remote=\(request.remoteAddress)",
                "host=\(host)",
            ]
            return .dynamic(
                Response(
                    status: 200, headers: [HTTPHeader("X-Route", "dynamic")],
                    body: Array((lines.joined(separator: "\n") + "\n").utf8)))
        }
        return .dynamic(Response(status: 404, body: Array("not found\n".utf8)))
    }
}

/// Parses `key=value` lines from the `/echo` route.
func echoFields(_ body: String) -> [String: String] {
    var fields: [String: String] = [:]
    for line in body.split(separator: "\n") {
        guard let equals = line.firstIndex(of: "=") else { continue }
        fields[String(line[..<equals])] = String(line[line.index(after: equals)...])
    }
    return fields
}

// MARK: Processes and files

extension Thread {
    /// Reads a pipe to its end on another thread (avoids a deadlock when both pipes fill up).
    final class PendingRead: @unchecked Sendable {
        private let done = DispatchSemaphore(value: 0)
        private var data = Data()
        func finish(_ data: Data) {
            self.data = data
            done.signal()
        }
        func wait() -> Data {
            done.wait()
            return data
        }
    }

    static func detachNewThreadReadAll(_ handle: FileHandle) -> PendingRead {
        let pending = PendingRead()
        Thread.detachNewThread { pending.finish(handle.readDataToEndOfFile()) }
        return pending
    }
}

func makeTemporaryDirectory() throws -> String {
    let path = FileManager.default.temporaryDirectory
        .appendingPathComponent("aasa-mhd-tests-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

// MARK: Certificates

/// A development CA in a temporary directory, issuing certificate-table entries.
final class TestPKI: Sendable {
    let directory: String
    let ca: DevCertificateAuthority

    init() throws {
        directory = try makeTemporaryDirectory()
        ca = try DevCertificateAuthority.loadOrCreate(directory: directory + "/ca")
    }

    /// The CA's folder goes with the last test holding it.
    deinit { try? FileManager.default.removeItem(atPath: directory) }

    var caPath: String { ca.certificatePath }

    /// Issues a certificate for `names` and returns it with its table entry.
    func entry(_ names: [String], key: PrivateKey.GenerationParameters = .ecdsaP256) throws
        -> (entry: CertificateTable.Entry, certificate: X509Certificate)
    {
        let issued = try ca.issue(names: names, key: key)
        let entry = CertificateTable.Entry(
            names: names, certificateChainPEM: Array(try issued.certificatePEM().utf8),
            privateKeyPEM: Array(try issued.privateKeyPEM().utf8))
        return (entry, issued.certificate)
    }
}

// MARK: Clients

/// `curl` against a local listener; `host` is resolved to 127.0.0.1 so SNI and verification use it.
func curl(
    _ path: String, port: UInt16, host: String = "127.0.0.1", tls: Bool = false, caPath: String? = nil,
    extra: [String] = []
) throws -> ToolResult {
    var arguments = ["curl", "-sS", "--max-time", "10", "--path-as-is", "-D", "-"]
    if host != "127.0.0.1" { arguments += ["--resolve", "\(host):\(port):127.0.0.1"] }
    if let caPath { arguments += ["--cacert", caPath] }
    arguments += extra
    arguments.append("\(tls ? "https" : "http")://\(host):\(port)\(path)")
    return try runTool(arguments)
}

/// Splits `curl -D -` output into the header block and the body.
func splitResponse(_ output: String) -> (head: String, body: String) {
    guard let range = output.range(of: "\r\n\r\n") else { return (output, "") }
    return (String(output[..<range.lowerBound]), String(output[range.upperBound...]))
}

/// Subject and negotiated parameters of a TLS handshake, as `openssl s_client` reports them.
func tlsHandshake(port: UInt16, serverName: String?, caPath: String, extra: [String] = []) throws -> ToolResult {
    var arguments = ["openssl", "s_client", "-connect", "127.0.0.1:\(port)", "-CAfile", caPath, "-brief"]
    arguments += serverName.map { ["-servername", $0] } ?? ["-noservername"]
    arguments += extra
    return try runTool(arguments, input: "")
}

/// Sends raw bytes over plain TCP and reads until the server closes (or 5 s pass).
func rawExchange(port: UInt16, request: String) throws -> [UInt8] {
    let client = try RawClient(port: port)
    client.send(request)
    return client.readAllBytes()
}

/// A listener configuration for tests: two worker threads, short timeouts, diagnostics collected.
func testConfiguration(port: UInt16 = 0, bindAddress: String? = "127.0.0.1", tls: TLSConfiguration? = nil)
    -> ListenerConfiguration
{
    ListenerConfiguration(
        port: port, bindAddress: bindAddress, tls: tls, threadPoolSize: 2, connectionTimeoutSeconds: 5,
        logHandler: { _ in })
}

/// A plain TCP client for tests that need control over timing: trickled bytes, half-sent requests.
final class RawClient {
    let fd: Int32

    /// Connects to 127.0.0.1:`port`.
    init(port: UInt16) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        // deinit closes the socket, also when this throws: closing it here too could close a descriptor another
        // thread has been given the same number since (a listener's connection, in the stop tests).
        guard connected == 0 else { throw POSIXError(.ECONNREFUSED) }
    }

    deinit { if fd >= 0 { close(fd) } }

    /// Sends `text`; false when the server has closed the connection.
    @discardableResult
    func send(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
    }

    /// Whether the server has closed the connection (end of stream or reset), waiting up to `timeout` seconds.
    func isClosed(within timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while Date() < deadline {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(max(1, deadline.timeIntervalSinceNow * 1000)))
            if ready <= 0 { continue }
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return true }
        }
        return false
    }

    /// Everything the server sends until it closes or `timeout` seconds pass.
    func readAll(timeout: Double = 5) -> String { String(decoding: readAllBytes(timeout: timeout), as: UTF8.self) }

    /// Every byte the server sends until it closes or `timeout` seconds pass.
    func readAllBytes(timeout: Double = 5) -> [UInt8] { read(timeout: timeout, untilIdle: false) }

    /// Reads one response whose head ends the read (for keep-alive exchanges with small bodies).
    func readResponse(timeout: Double = 5) -> String {
        String(decoding: read(timeout: timeout, untilIdle: true), as: UTF8.self)
    }

    /// Reads until the server closes, `timeout` passes, or (`untilIdle`) 100 ms pass without data once some came.
    private func read(timeout: Double, untilIdle: Bool) -> [UInt8] {
        let deadline = Date().addingTimeInterval(timeout)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while Date() < deadline {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let wait = untilIdle ? 100 : Int32(max(1, deadline.timeIntervalSinceNow * 1000))
            guard poll(&poller, 1, wait) > 0 else {
                if untilIdle && !received.isEmpty { break }
                continue
            }
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            received += buffer[0..<count]
        }
        return received
    }
}
