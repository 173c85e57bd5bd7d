import Foundation

/// Debian's nginx with its stream module as the TLS-passthrough router in front of the shards, on a free port,
/// running the configuration `aasa-server shards nginx` printed; stopped when released.
public final class NginxRouter: @unchecked Sendable {
    public static let executable = "/usr/sbin/nginx"
    public static let streamModule = "/usr/lib/nginx/modules/ngx_stream_module.so"

    /// Whether nginx and its stream module are installed (`scripts/setup.sh --test` installs both).
    public static var isInstalled: Bool {
        FileManager.default.isExecutableFile(atPath: executable) && FileManager.default.fileExists(atPath: streamModule)
    }

    /// The port the router listens on.
    public let port: UInt16
    private let process: ChildProcess
    private let logFile: String

    /// Starts nginx with `include` (the generated `stream {}` file) in `directory`, and waits until it accepts
    /// connections on `port`.
    public init(directory: String, include: String, port: UInt16) throws {
        self.port = port
        logFile = directory + "/nginx.log"
        let configuration = try Self.writeConfiguration(directory: directory, include: include)
        _ = FileManager.default.createFile(atPath: logFile, contents: nil)
        // -e: nginx's own messages before the configuration is read go to stderr too, not to /var/log/nginx.
        process = try ChildProcess(
            Self.executable, ["-e", "stderr", "-p", directory + "/", "-c", configuration, "-g", "daemon off;"],
            logFile: logFile)
        for _ in 0..<TestTime.tries(200) {
            if Self.accepts(port: port) { return }
            guard process.isRunning else { break }
            usleep(50_000)
        }
        throw Failure(description: "nginx did not listen on 127.0.0.1:\(port): \(log)")
    }

    deinit { process.stop() }

    /// Writes `directory`/nginx.conf: the stream module, a pid file and error log of the test's own, and
    /// `include`; returns its path.
    public static func writeConfiguration(directory: String, include: String) throws -> String {
        let configuration = directory + "/nginx.conf"
        let text = """
            load_module \(Self.streamModule);
            pid \(directory)/nginx.pid;
            error_log stderr;
            events {}
            include \(include);

            """
        try text.write(toFile: configuration, atomically: true, encoding: .utf8)
        return configuration
    }

    /// `nginx -t` of the main configuration including `include`: what nginx says of the file, without running it.
    public static func test(directory: String, include: String) throws -> Command.Output {
        let configuration = try writeConfiguration(directory: directory, include: include)
        return try Command.run(executable, ["-e", "stderr", "-p", directory + "/", "-c", configuration, "-t"])
    }

    /// What nginx printed.
    public var log: String { (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "" }

    /// Whether something accepts TCP connections on 127.0.0.1:`port`.
    public static func accepts(port: UInt16) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    /// Why the router could not be used.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }
}
