import AASATestSupport
import Foundation
import Testing

/// `serve --user`, started as root: the privileged port is bound as root, and everything after runs as the user.
@Suite(.serialized) struct PrivilegeDropTests {
    /// A port below 1024 that nothing listens on now.
    static func freePrivilegedPort() -> UInt16? {
        for port in UInt16(600)..<1000 {
            guard let fd = boundLoopbackSocket(port: port) else { continue }
            close(fd)
            return port
        }
        return nil
    }

    /// The `Uid:`, `Gid:` and `Groups:` lines of every thread of `pid`.
    static func identities(_ pid: Int32) throws -> Set<String> {
        let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")
        var lines: Set<String> = []
        for task in tasks {
            let status = try String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8)
            for line in status.split(separator: "\n")
            where line.hasPrefix("Uid:") || line.hasPrefix("Gid:") || line.hasPrefix("Groups:") {
                lines.insert(line.split(whereSeparator: \.isWhitespace).joined(separator: " "))
            }
        }
        return lines
    }

    @Test(.enabled(if: getuid() == 0, "binding a privileged port and switching users needs root"))
    func aPrivilegedPortIsBoundAsRootAndEverythingElseRunsAsTheUser() throws {
        let directory = try PartialStartTests.prepare()
        try FileManager.default.removeItem(atPath: directory.path + "/site-config/broken.example")
        // The user must be able to read what it serves, and only as that user.
        #expect(try Command.run("chown", ["-R", "nobody:nogroup", directory.path]).status == 0)
        let port = try #require(Self.freePrivilegedPort())
        let admin = freePort()
        let serve = try ServeProcess(
            in: directory.path, arguments: ["--user", "nobody", "--no-watch"],
            environment: ["AASA_SERVER_HTTPS_PORT": "\(port)", "AASA_SERVER_ADMIN_PORT": "\(admin)"])
        var healthy = false
        for _ in 0..<TestTime.tries(100) where !healthy {
            healthy = (try? Curl.request("http://127.0.0.1:\(admin)/healthz"))?.status == 200
            if !healthy { usleep(100_000) }
        }
        #expect(healthy)
        let served = try Curl.request(
            "https://good.example:\(port)/.well-known/apple-app-site-association",
            caFile: directory.path + "/certs/dev-ca/ca.pem", resolve: ("good.example", port))
        #expect(served.status == 200)
        #expect(served.text.contains("ABCDE12345.com.example.good"))
        // Every thread: real, effective, saved and file-system IDs are nobody's, with its groups (initgroups).
        let groups = try Command.run("id", ["-G", "nobody"]).stdout.split(whereSeparator: \.isWhitespace)
        #expect(
            try Self.identities(serve.process.processIdentifier)
                == [
                    "Uid: 65534 65534 65534 65534", "Gid: 65534 65534 65534 65534",
                    "Groups: " + groups.joined(separator: " "),
                ])
        #expect(serve.terminate() == 0)
    }
}
