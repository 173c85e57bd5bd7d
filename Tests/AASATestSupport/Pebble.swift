import Foundation

/// Debian's `pebble` ACME test server and `pebble-challtestsrv` (whose DNS answers 127.0.0.1 for every name), on
/// free ports, started by the tests (`scripts/setup.sh --test` installs them).
///
/// Pebble validates http-01 at `httpPort` on 127.0.0.1: the plain HTTP port of the server under test.
public final class Pebble: @unchecked Sendable {
    /// Where pebble's files go.
    public let directory = TemporaryDirectory("aasa-pebble")
    /// The port pebble's validator connects to for http-01.
    public let httpPort: UInt16
    /// The ACME port and the management port.
    public let port = freePort()
    public let managementPort = freePort()
    private let dnsPort = freePort()
    private let challengeManagementPort = freePort()
    private let environment: [String: String]
    private var pebble: ChildProcess?
    private var dns: ChildProcess?
    /// The DNS pebble resolves names with.
    private let dnsServer: String

    /// The directory URL.
    public var directoryURL: String { "https://127.0.0.1:\(port)/dir" }
    /// The certificate of pebble's own HTTPS: what `--acme-ca-file` names.
    public var caFile: String { directory.path + "/cert.pem" }

    /// Starts both programs; `environment` adds pebble's knobs (`PEBBLE_WFE_NONCEREJECT`, …). Validation is
    /// immediate (`PEBBLE_VA_NOSLEEP=1`). A non-empty `externalAccountKeys` (key ID: base64url HMAC key) makes
    /// pebble require an external account binding made with one of them. `dnsServer` (`HOST:PORT`) is the DNS
    /// pebble asks instead of `pebble-challtestsrv` (a ``BindDNS`` resolver, for dns-01).
    public init(
        httpPort: UInt16, environment: [String: String] = [:], externalAccountKeys: [String: String] = [:],
        dnsServer: String? = nil
    ) throws {
        self.httpPort = httpPort
        self.environment = ["PEBBLE_VA_NOSLEEP": "1"].merging(environment) { _, new in new }
        self.dnsServer = dnsServer ?? "127.0.0.1:\(dnsPort)"

        let made = try Command.run(
            "openssl",
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "30",
                "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout",
                directory.path + "/key.pem", "-out", caFile,
            ])
        guard made.status == 0 else { throw Failure(description: "openssl could not make pebble's certificate") }
        let keys = String(
            decoding: try JSONSerialization.data(withJSONObject: externalAccountKeys, options: [.sortedKeys]),
            as: UTF8.self)
        _ = try directory.write(
            "config.json",
            """
            {"pebble":{"listenAddress":"127.0.0.1:\(port)","managementListenAddress":"127.0.0.1:\(managementPort)",
             "certificate":"cert.pem","privateKey":"key.pem","httpPort":\(httpPort),"tlsPort":\(freePort()),
             "ocspResponderURL":"","externalAccountBindingRequired":\(!externalAccountKeys.isEmpty),
             "externalAccountMACKeys":\(keys)}}
            """)
        guard dnsServer == nil else {
            try start()
            return
        }
        dns = try ChildProcess(
            "/usr/bin/pebble-challtestsrv",
            [
                "-defaultIPv4", "127.0.0.1", "-defaultIPv6", "", "-dns01", "127.0.0.1:\(dnsPort)", "-http01", "",
                "-https01", "", "-tlsalpn01", "", "-management", "127.0.0.1:\(challengeManagementPort)",
            ], logFile: nil)
        try start()
    }

    deinit {
        stop()
        reserved.forEach { close($0) }
        dns?.stop()
    }

    /// Starts pebble (again, after ``stop()``: a new CA, with new roots and no accounts) and waits for its directory.
    public func start() throws {
        reserved.forEach { close($0) }
        reserved = []
        let log = directory.path + "/pebble.log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        pebble = try ChildProcess(
            "/usr/bin/pebble", ["-config", "config.json", "-dnsserver", dnsServer],
            environment: ProcessInfo.processInfo.environment.merging(environment) { _, new in new },
            currentDirectory: directory.path, logFile: log)
        for _ in 0..<TestTime.tries(100) {
            if (try? Curl.request(directoryURL, caFile: caFile))?.status == 200 { return }
            usleep(100_000)
        }
        throw Failure(description: "pebble did not answer at \(directoryURL): \(self.log)")
    }

    /// Stops pebble (the DNS keeps running).
    public func stop() {
        guard let pebble, pebble.isRunning else { return }
        pebble.stop()
        self.pebble = nil
        // Keep the ports while pebble is down: a bound socket that does not listen refuses connections (the CA
        // is down) and keeps the kernel from giving the port to another socket before ``start()`` binds it again.
        reserved = [port, managementPort].compactMap { boundLoopbackSocket(port: $0) }
    }

    /// Sockets holding pebble's ports while it is stopped.
    private var reserved: [Int32] = []

    /// What pebble printed.
    public var log: String { (try? String(contentsOfFile: directory.path + "/pebble.log", encoding: .utf8)) ?? "" }

    /// Writes the root that issues pebble's certificates (from its management interface) to a file, for
    /// `openssl s_client -CAfile`; a restarted pebble has a new one.
    public func rootFile() throws -> String {
        let root = try Curl.request("https://127.0.0.1:\(managementPort)/roots/0", extra: ["-k"])
        guard root.status == 200, root.text.contains("BEGIN CERTIFICATE") else {
            throw Failure(description: "pebble's management interface gave no root: \(root.status) \(root.error)")
        }
        return try directory.write("root-\(UUID().uuidString).pem", root.text)
    }

    /// Whether both programs are installed.
    public static var isInstalled: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/pebble")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/pebble-challtestsrv")
    }

    /// Why pebble could not be used.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }
}
