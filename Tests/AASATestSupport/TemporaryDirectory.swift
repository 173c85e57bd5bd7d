import Foundation
import Synchronization

/// A fresh folder under the system temporary directory, removed when the value is released.
public final class TemporaryDirectory: @unchecked Sendable {
    /// Its absolute path.
    public let path: String

    /// Creates the folder.
    public init(_ prefix: String = "aasa-test") {
        path = NSTemporaryDirectory() + "\(prefix)-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// Writes `text` to `relativePath`, creating folders as needed, and returns the full path.
    @discardableResult
    public func write(_ relativePath: String, _ text: String) throws -> String {
        let full = path + "/" + relativePath
        try FileManager.default.createDirectory(
            atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: full))
        return full
    }

    /// Copies the folder at `source` to `relativePath` inside this one.
    public func copy(_ source: String, to relativePath: String) throws {
        try FileManager.default.copyItem(atPath: source, toPath: path + "/" + relativePath)
    }
}

/// Paths inside the repository, found from this file's location.
public enum RepositoryPaths {
    /// The repository root.
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    /// The sample config folder.
    public static let siteConfig = root + "/site-config"
    /// The real-world AASA and assetlinks files the corpus tests read (Tests/Corpus/README.md says where each
    /// came from).
    public static let corpus = root + "/Tests/Corpus"
    /// The core tests' fixtures.
    public static let fixtures = root + "/Tests/AASACoreTests/Fixtures"

    /// The names of the files in `folder` whose names end with `suffix`, sorted. A missing or empty folder gives one
    /// name saying so, which no test can read: a parameterized test over it fails instead of passing with no cases.
    public static func files(in folder: String, endingWith suffix: String) -> [String] {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter {
            $0.hasSuffix(suffix)
        }
        return names.isEmpty ? ["(no \(suffix) files in \(folder))"] : names.sorted()
    }
    /// The built products folder (where `aasa-server` is), found from the running test binary.
    public static var products: String {
        var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        while url.path != "/" && !FileManager.default.fileExists(atPath: url.appendingPathComponent("aasa-server").path)
        {
            url.deleteLastPathComponent()
        }
        return url.path
    }
    /// The aasa-server executable built with the tests.
    public static var executable: String { products + "/aasa-server" }
}

/// A TCP socket bound to 127.0.0.1:`port` (0: a port the kernel picks), or `nil` when the port is taken; close it.
public func boundLoopbackSocket(port: UInt16) -> Int32? {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = port.bigEndian
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard fd >= 0, bound == 0 else {
        if fd >= 0 { close(fd) }
        return nil
    }
    return fd
}

/// A TCP port that was free a moment ago on 127.0.0.1, for programs that need a port number up front.
///
/// Picked below the kernel's ephemeral range (`net.ipv4.ip_local_port_range`), where no outgoing connection of any
/// test (curl, PostgreSQL clients, nginx's upstream connections) can take it between this call and the program's
/// bind, and never the same port twice in one test process. The kernel's choice is the fallback.
public func freePort() -> UInt16 {
    let lowestEphemeral =
        (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8))
        .flatMap { $0.split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) } } ?? 32768
    let candidates = 10_000..<max(10_001, min(lowestEphemeral, 65_536))
    if candidates.count >= 1_000 {
        for _ in 0..<200 {
            let port = UInt16(Int.random(in: candidates))
            guard handedOutPorts.withLock({ $0.insert(port).inserted }) else { continue }
            if let probe = boundLoopbackSocket(port: port) {
                close(probe)
                return port
            }
        }
    }
    return kernelsFreePort()
}

/// The ports ``freePort()`` gave out in this process.
private let handedOutPorts = Mutex<Set<UInt16>>([])

/// A port the kernel picks from its ephemeral range.
private func kernelsFreePort() -> UInt16 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
    }
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return UInt16(bigEndian: address.sin_port)
}
