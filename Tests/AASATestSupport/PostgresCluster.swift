import Foundation

/// A throwaway PostgreSQL cluster for tests: Debian's `postgresql` binaries (`scripts/setup.sh --test` installs them),
/// `initdb` into a temporary folder owned by the `postgres` user (PostgreSQL refuses to run as root), listening on a
/// free loopback port with its Unix socket in that folder (so parallel clusters never collide), and one database,
/// `aasa`. Authentication is `trust`: loopback and tests only.
///
/// ``stop()`` and ``start()`` make the database go away and come back on the same data folder and port. The cluster
/// is stopped and its folder removed when the value is released.
public final class PostgresCluster: @unchecked Sendable {
    /// The folder holding the data folder, the log and the socket.
    public let directory = TemporaryDirectory("aasa-postgres")
    /// The port it listens on, on 127.0.0.1.
    public private(set) var port: UInt16 = 0
    /// The database made for the tests.
    public let database = "aasa"
    /// Where the binaries (`initdb`, `pg_ctl`, `createdb`, `pg_dump`) are.
    public let binaries: String
    private var running = false

    /// The libpq URI a client connects with: `postgresql://postgres@127.0.0.1:<port>/aasa`.
    public var uri: String { "postgresql://postgres@127.0.0.1:\(port)/\(database)" }
    /// The server's log.
    public var logFile: String { directory.path + "/postgres.log" }
    private var dataFolder: String { directory.path + "/data" }

    /// A failure to make, start or stop the cluster, with the command's output.
    public struct Failure: Error, CustomStringConvertible {
        /// What failed and what the command printed.
        public let description: String
    }

    /// Makes the cluster and its database and starts it (a few seconds), after stopping and removing the clusters
    /// of test processes that ended without stopping theirs (a crash, a kill).
    public init() throws {
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        guard let newest = versions.compactMap(Int.init).max() else {
            throw Failure(description: "no PostgreSQL in /usr/lib/postgresql: run scripts/setup.sh --test")
        }
        binaries = "/usr/lib/postgresql/\(newest)/bin"
        Self.removeAbandonedClusters(binaries: binaries)
        try Data(String(getpid()).utf8).write(to: URL(fileURLWithPath: directory.path + "/owner.pid"))
        if getuid() == 0 {
            guard let user = getpwnam("postgres"), chown(directory.path, user.pointee.pw_uid, user.pointee.pw_gid) == 0
            else {
                throw Failure(description: "no postgres user to own \(directory.path): run scripts/setup.sh --test")
            }
        }
        try Self.check(
            run("initdb", ["-D", dataFolder, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync"]), "initdb")
        // A port can be taken between picking it and binding it: try a few.
        var lastError: (any Error)?
        for _ in 0..<5 {
            port = freePort()
            do {
                try start()
                lastError = nil
                break
            } catch {
                lastError = error
            }
        }
        if let lastError { throw lastError }
        try Self.check(
            run("createdb", ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", database]), "createdb")
    }

    deinit { stop() }

    /// Starts the server (again, after ``stop()``) and waits until it accepts connections.
    public func start() throws {
        let options = "-p \(port) -k \(directory.path) -c listen_addresses=127.0.0.1 -c fsync=off"
        let started = try run("pg_ctl", ["-D", dataFolder, "-l", logFile, "-w", "-t", "60", "-o", options, "start"])
        let log = (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? ""
        try Self.check((started.status, started.output + "\n" + log.suffix(2000)), "pg_ctl start")
        running = true
    }

    /// Stops the server (`pg_ctl -m fast`: sessions are ended, clients see their connections drop). Does nothing
    /// when it is not running.
    public func stop() {
        guard running else { return }
        _ = try? run("pg_ctl", ["-D", dataFolder, "-m", "fast", "-w", "-t", "60", "stop"])
        running = false
    }

    /// Runs a PostgreSQL program as the `postgres` user (through `runuser` when the tests run as root) and returns
    /// its exit status and output.
    @discardableResult
    public func run(_ program: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let executable = binaries + "/" + program
        let command = getuid() == 0 ? ["/usr/sbin/runuser", "-u", "postgres", "--", executable] : [executable]
        return try Self.spawn(command + arguments, output: directory.path + "/command.out", timeout: 120)
    }

    /// Runs `arguments` with no descriptor of this process but its output file, and waits for it (stopping it after
    /// `timeout` seconds). `pg_ctl start` leaves a postmaster running, which must hold on to nothing of this process
    /// (another test's pipe would never reach its end): ``ChildProcess`` gives it its standard descriptors only.
    private static func spawn(_ arguments: [String], output: String, timeout: Double) throws -> (
        status: Int32, output: String
    ) {
        // Emptied, not replaced: the file holds this command's output only, and /dev/null stays a device.
        let child = try ChildProcess(arguments[0], Array(arguments.dropFirst()), logFile: output, emptied: true)
        guard let status = child.wait(until: TestTime.deadline(timeout)) else {
            child.stop(grace: 0)
            throw Failure(description: "\(arguments.joined(separator: " ")) took over \(Int(timeout)) s")
        }
        return (status, (try? String(contentsOfFile: output, encoding: .utf8)) ?? "")
    }

    /// Stops and removes every cluster folder whose `owner.pid` names a process that is gone.
    private static func removeAbandonedClusters(binaries: String) {
        let temporary = NSTemporaryDirectory()
        let folders = (try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? []
        for folder in folders where folder.hasPrefix("aasa-postgres-") {
            let path = temporary + folder
            guard let owner = try? String(contentsOfFile: path + "/owner.pid", encoding: .utf8),
                let pid = pid_t(owner), kill(pid, 0) != 0, errno == ESRCH
            else { continue }
            let command = getuid() == 0 ? ["/usr/sbin/runuser", "-u", "postgres", "--"] : []
            _ = try? spawn(
                command + [binaries + "/pg_ctl", "-D", path + "/data", "-m", "immediate", "-w", "stop"],
                output: "/dev/null", timeout: 60)
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    private static func check(_ result: (status: Int32, output: String), _ what: String) throws {
        guard result.status == 0 else {
            throw Failure(description: "\(what) failed (\(result.status)): \(result.output)")
        }
    }
}
