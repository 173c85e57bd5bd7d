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
        Thread.detachNewThread { pending.finish(ChildPipe.readToEnd(handle)) }
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
